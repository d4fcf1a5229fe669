package audit

import (
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/fixture"
	"github.com/perflab/perflab/internal/knob"
	"github.com/perflab/perflab/internal/snapshot"
)

// Every tree has pid 4242 (a plain sleep, the collecting process) and 4243
// (sleep with LD_PRELOAD=…/libjemalloc.so.2), both 3.6 MiB resident with no
// huge pages, allowed on all CPUs. metal's THP is madvise.

// bigProcess makes metal's 4243 a 1 GiB process with hugeKiB in THP.
func bigProcess(hugeKiB string) map[string]string {
	return map[string]string{
		"/proc/4243/smaps_rollup": treeFileWith("metal", "/proc/4243/smaps_rollup", func(s string) string {
			s = replaceText("Rss:                3640 kB", "Rss:             1048576 kB")(s)
			return replaceText("AnonHugePages:         0 kB", "AnonHugePages:   "+hugeKiB+" kB")(s)
		}),
	}
}

func init() {
	addRuleCases(
		// PROC-ALLOCATOR
		ruleCase{Rule: "PROC-ALLOCATOR", Name: "jemalloc preloaded", Tree: "metal", Workload: "kv", PID: 4243, Want: Pass,
			Check: observedContains("jemalloc")},
		ruleCase{Rule: "PROC-ALLOCATOR", Name: "glibc malloc", Tree: "metal", Workload: "web", PID: 4242, Want: Fail,
			Check: all(reasonContains("statically"), func(t *testing.T, f Finding) {
				if !strings.Contains(f.Fix, "LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4") ||
					!strings.Contains(f.Revert, "remove the LD_PRELOAD") {
					t.Errorf("fix %q revert %q", f.Fix, f.Revert)
				}
			})},
		ruleCase{Rule: "PROC-ALLOCATOR", Name: "glibc malloc on aarch64", Tree: "kunpeng", Workload: "kv", PID: 4242, Want: Fail,
			Check: func(t *testing.T, f Finding) {
				if !strings.Contains(f.Fix, "/usr/lib/aarch64-linux-gnu/") {
					t.Errorf("fix %q", f.Fix)
				}
			}},
		ruleCase{Rule: "PROC-ALLOCATOR", Name: "no --pid", Tree: "metal", Workload: "kv", Want: NA},
		ruleCase{Rule: "PROC-ALLOCATOR", Name: "maps unreadable", Tree: "metal", Workload: "kv", PID: 4242, Want: NA,
			Edits: map[string]string{"/proc/4242/maps": fixture.Delete}, Check: reasonContains("maps")},

		// PROC-THP-USE
		ruleCase{Rule: "PROC-THP-USE", Name: "1 GiB without huge pages for jvm", Tree: "metal", Workload: "jvm", PID: 4243, Want: Fail,
			Edits: bigProcess("0"),
			Check: all(observedContains("0 MiB of 1024 MiB"),
				wantChange(thpEnabledPath(), "always"), wantCurrent(thpEnabledPath(), "madvise"))},
		ruleCase{Rule: "PROC-THP-USE", Name: "half in huge pages for jvm", Tree: "metal", Workload: "jvm", PID: 4243, Want: Pass,
			Edits: bigProcess("524288")},
		ruleCase{Rule: "PROC-THP-USE", Name: "huge pages in a kv store", Tree: "metal", Workload: "kv", PID: 4243, Want: Fail,
			Edits: bigProcess("524288"),
			Check: all(wantChange(thpEnabledPath(), "never"), wantCurrent(thpEnabledPath(), "madvise"))},
		ruleCase{Rule: "PROC-THP-USE", Name: "no huge pages in a database", Tree: "metal", Workload: "database", PID: 4243, Want: Pass,
			Edits: bigProcess("0")},
		ruleCase{Rule: "PROC-THP-USE", Name: "3 MiB process", Tree: "metal", Workload: "jvm", PID: 4243, Want: NA},
		ruleCase{Rule: "PROC-THP-USE", Name: "general leaves it to the process", Tree: "metal", PID: 4243, Want: NA,
			Edits: bigProcess("0")},

		// PROC-CPUS-NUMA
		ruleCase{Rule: "PROC-CPUS-NUMA", Name: "allowed on both nodes", Tree: "metal", Workload: "web", PID: 4243, Want: Fail,
			Check: func(t *testing.T, f Finding) {
				if !strings.HasPrefix(f.Fix, "taskset -a -cp 4-7 4243 && migratepages 4243 0 1") || f.Revert != "taskset -a -cp 0-7 4243" {
					t.Errorf("fix %q revert %q", f.Fix, f.Revert)
				}
			}},
		ruleCase{Rule: "PROC-CPUS-NUMA", Name: "on the NIC's node", Tree: "metal", Workload: "kv", PID: 4243, Want: Pass,
			Edits: map[string]string{"/proc/4243/status": treeFileWith("metal", "/proc/4243/status",
				replaceText("Cpus_allowed_list:\t0-7", "Cpus_allowed_list:\t4-7"))}},
		ruleCase{Rule: "PROC-CPUS-NUMA", Name: "single node", Tree: "kvm", Workload: "web", PID: 4243, Want: NA},
		ruleCase{Rule: "PROC-CPUS-NUMA", Name: "no --pid", Tree: "metal", Workload: "web", Want: NA},
	)
}

func TestProcTHPUseJVMNeedsTheFlag(t *testing.T) {
	s := twoNodeSnapshot()
	s.Memory.THP.Enabled = "madvise"
	s.Process = &snapshot.Process{PID: 7, Comm: "java", RssKiB: 4 << 20}
	f := evalOn(t, "PROC-THP-USE", "jvm", s)
	if f.Status != Fail || !strings.Contains(f.Fix, "-XX:+UseTransparentHugePages") {
		t.Errorf("%s fix %q", f.Status, f.Fix)
	}
	s.Process.THPDisabled = true
	if f := evalOn(t, "PROC-THP-USE", "jvm", s); f.Status != Fail || !strings.Contains(f.Fix, "PR_SET_THP_DISABLE") {
		t.Errorf("prctl-disabled: %s fix %q", f.Status, f.Fix)
	}
}

// thpEnabledPath is the file the THP rules change.
func thpEnabledPath() string { return knob.MustLookup("memory.thp.enabled").Name() }
