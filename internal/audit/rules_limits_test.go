package audit

import (
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/fixture"
)

// metal: pid_max 32768, file-max 2466170 with 614 allocated, inotify 128
// instances / 192536 watches, fs.nr_open 1048576; the collecting process
// (4242) and 4243 have nofile 20000:20000.

func init() {
	addRuleCases(
		// LIMITS-PID-MAX
		ruleCase{Rule: "LIMITS-PID-MAX", Name: "32768 for general", Tree: "metal", Want: Pass,
			Check: observedContains("tasks now")},
		ruleCase{Rule: "LIMITS-PID-MAX", Name: "32768 for a container host", Tree: "metal", Workload: "container-host", Want: Fail,
			Check: all(wantChange("kernel.pid_max", "4194304"), wantCurrent("kernel.pid_max", "32768"))},
		ruleCase{Rule: "LIMITS-PID-MAX", Name: "no pid_max", Tree: "metal", Want: NA,
			Edits: map[string]string{"/proc/sys/kernel/pid_max": fixture.Delete}},

		// LIMITS-FILE-MAX
		ruleCase{Rule: "LIMITS-FILE-MAX", Name: "2.4M", Tree: "metal", Workload: "container-host", Want: Pass,
			Check: observedContains("614 allocated")},
		ruleCase{Rule: "LIMITS-FILE-MAX", Name: "100000", Tree: "metal", Want: Fail,
			Edits: map[string]string{"/proc/sys/fs/file-max": "100000\n"},
			Check: wantChange("fs.file-max", "1048576")},
		ruleCase{Rule: "LIMITS-FILE-MAX", Name: "81% allocated", Tree: "metal", Want: Fail,
			Edits: map[string]string{"/proc/sys/fs/file-nr": "2000000\t0\t2466170\n"},
			Check: all(wantSeverity(High), wantChange("fs.file-max", "4932340"), wantCurrent("fs.file-max", "2466170"))},
		ruleCase{Rule: "LIMITS-FILE-MAX", Name: "no file-max", Tree: "metal", Want: NA,
			Edits: map[string]string{"/proc/sys/fs/file-max": fixture.Delete}},

		// LIMITS-NOFILE
		// Defect 7: with --root on a captured tree, proc/self is not perflab.
		ruleCase{Rule: "LIMITS-NOFILE", Name: "captured tree's proc/self at 20000", Tree: "metal", Want: Fail,
			Check: all(wantSeverity(Low), reasonContains("--pid"), observedContains("soft 20000, hard 20000"),
				observedContains("of proc/self in a captured tree"), reasonContains("when the tree was captured"),
				func(t *testing.T, f Finding) {
					if strings.Contains(f.Observed+f.Reason, "perflab's own") {
						t.Errorf("a captured tree's limits called perflab's own: %q / %q", f.Observed, f.Reason)
					}
				})},
		ruleCase{Rule: "LIMITS-NOFILE", Name: "service at 20000 for web", Tree: "metal", Workload: "web", PID: 4243, Want: Fail,
			Check: all(wantSeverity(Medium), observedContains("pid 4243"),
				func(t *testing.T, f Finding) {
					if !strings.HasPrefix(f.Fix, "prlimit --pid 4243 --nofile=1048576:1048576") ||
						f.Revert != "prlimit --pid 4243 --nofile=20000:20000" {
						t.Errorf("fix %q revert %q", f.Fix, f.Revert)
					}
				})},
		ruleCase{Rule: "LIMITS-NOFILE", Name: "raised to 65536", Tree: "metal", Want: Pass,
			Edits: map[string]string{"/proc/4242/limits": treeFileWith("metal", "/proc/4242/limits",
				replaceText("Max open files            20000                20000", "Max open files            65536                65536"))}},
		ruleCase{Rule: "LIMITS-NOFILE", Name: "limits unreadable", Tree: "metal", Want: NA,
			Edits: map[string]string{"/proc/4242/limits": fixture.Delete}},

		// LIMITS-INOTIFY
		ruleCase{Rule: "LIMITS-INOTIFY", Name: "defaults on a container host", Tree: "metal", Workload: "container-host", Want: Fail,
			Check: all(changeCount(2), wantChange("fs.inotify.max_user_instances", "8192"), wantChange("fs.inotify.max_user_watches", "524288"))},
		ruleCase{Rule: "LIMITS-INOTIFY", Name: "raised", Tree: "metal", Workload: "container-host", Want: Pass,
			Edits: map[string]string{"/proc/sys/fs/inotify/max_user_instances": "8192\n", "/proc/sys/fs/inotify/max_user_watches": "1048576\n"}},
		ruleCase{Rule: "LIMITS-INOTIFY", Name: "general workload", Tree: "metal", Want: NA},
	)
}

// On a live host (root "/") proc/self is perflab itself.
func TestNofileLiveIsPerflabsOwn(t *testing.T) {
	s := twoNodeSnapshot()
	s.Root = "/"
	s.Limits.NofileSoft, s.Limits.NofileHard = 1024, 4096
	f := evalOn(t, "LIMITS-NOFILE", "general", s)
	if f.Status != Fail || !strings.Contains(f.Observed, "perflab's own") || !strings.Contains(f.Reason, "perflab's own limit") {
		t.Errorf("%s: observed %q reason %q", f.Status, f.Observed, f.Reason)
	}
}

func TestNofileWarnsAboutNrOpen(t *testing.T) {
	s := twoNodeSnapshot()
	s.Limits.NofileSoft, s.Limits.NofileHard = 1024, 4096
	s.Sysctl["fs.nr_open"] = "524288"
	f := evalOn(t, "LIMITS-NOFILE", "web", s) // wants 1048576
	if f.Status != Fail || !strings.Contains(f.Reason, "fs.nr_open (524288)") {
		t.Errorf("%s reason %q", f.Status, f.Reason)
	}
	s.Limits.NofileSoft = -1
	if f := evalOn(t, "LIMITS-NOFILE", "web", s); f.Status != Pass || !strings.Contains(f.Observed, "soft unlimited") {
		t.Errorf("unlimited: %s %q", f.Status, f.Observed)
	}
}
