package audit

import (
	"testing"

	"github.com/perflab/perflab/internal/fixture"
)

// metal: THP madvise/madvise, 8 GiB swap, swappiness 60, dirty 20/10,
// zone_reclaim 0, numa_balancing 1, 2 NUMA nodes with 512 hugepages each,
// overcommit 0, KSM 0. kvm: no swap, one node, numa_balancing 0.

const thp = "/sys/kernel/mm/transparent_hugepage/"

func init() {
	addRuleCases(
		// MEM-THP-ENABLED: the same value passes for one workload and fails for another.
		ruleCase{Rule: "MEM-THP-ENABLED", Name: "madvise for general", Tree: "metal", Want: Pass},
		ruleCase{Rule: "MEM-THP-ENABLED", Name: "madvise for jvm (seed 000)", Tree: "metal", Workload: "jvm", Want: Fail,
			Check: all(wantSeverity(High), wantChange(thp+"enabled", "always"))},
		ruleCase{Rule: "MEM-THP-ENABLED", Name: "always for jvm", Tree: "metal", Workload: "jvm", Want: Pass,
			Edits: map[string]string{thp + "enabled": "[always] madvise never\n"}},
		ruleCase{Rule: "MEM-THP-ENABLED", Name: "always for kv (redis)", Tree: "metal", Workload: "kv", Want: Fail,
			Edits: map[string]string{thp + "enabled": "[always] madvise never\n"},
			Check: all(wantSeverity(High), wantChange(thp+"enabled", "never"))},
		ruleCase{Rule: "MEM-THP-ENABLED", Name: "always for general is medium", Tree: "metal", Workload: "latency", Want: Fail,
			Edits: map[string]string{thp + "enabled": "[always] madvise never\n"}, Check: wantSeverity(Medium)},
		ruleCase{Rule: "MEM-THP-ENABLED", Name: "kernel without THP", Tree: "metal", Want: NA,
			Edits: map[string]string{"/sys/kernel/mm/transparent_hugepage": fixture.Delete}},

		// MEM-THP-DEFRAG
		ruleCase{Rule: "MEM-THP-DEFRAG", Name: "madvise", Tree: "metal", Want: Pass},
		ruleCase{Rule: "MEM-THP-DEFRAG", Name: "always stalls faults", Tree: "metal", Want: Fail,
			Edits: map[string]string{thp + "defrag": "[always] defer defer+madvise madvise never\n"},
			Check: wantChange(thp+"defrag", "madvise")},
		ruleCase{Rule: "MEM-THP-DEFRAG", Name: "kernel without THP", Tree: "kvm", Want: NA,
			Edits: map[string]string{"/sys/kernel/mm/transparent_hugepage": fixture.Delete}},

		// MEM-SWAPPINESS
		ruleCase{Rule: "MEM-SWAPPINESS", Name: "60 for general", Tree: "metal", Want: Pass},
		ruleCase{Rule: "MEM-SWAPPINESS", Name: "60 for database", Tree: "metal", Workload: "database", Want: Fail,
			Check: wantChange("vm.swappiness", "10")},
		ruleCase{Rule: "MEM-SWAPPINESS", Name: "1 for database", Tree: "metal", Workload: "database", Want: Pass,
			Edits: map[string]string{"/proc/sys/vm/swappiness": "1\n"}},
		ruleCase{Rule: "MEM-SWAPPINESS", Name: "no swap", Tree: "kvm", Workload: "database", Want: NA},

		// MEM-DIRTY-RATIO
		ruleCase{Rule: "MEM-DIRTY-RATIO", Name: "20 for database", Tree: "metal", Workload: "database", Want: Pass},
		ruleCase{Rule: "MEM-DIRTY-RATIO", Name: "50 for general", Tree: "metal", Want: Fail,
			Edits: map[string]string{"/proc/sys/vm/dirty_ratio": "50\n"}, Check: wantChange("vm.dirty_ratio", "40")},
		ruleCase{Rule: "MEM-DIRTY-RATIO", Name: "dirty_bytes set high for database", Tree: "kvm", Workload: "database", Want: Fail,
			// kvm has 24 GiB: 12 GiB of dirty_bytes is about 50%.
			Edits: map[string]string{"/proc/sys/vm/dirty_ratio": "0\n", "/proc/sys/vm/dirty_bytes": "12884901888\n"},
			Check: all(observedContains("vm.dirty_bytes"), func(t *testing.T, f Finding) {
				if len(f.Changes) != 1 || f.Changes[0].Target != "vm.dirty_bytes" || f.Changes[0].Current != "12884901888" {
					t.Fatalf("want a dirty_bytes change restoring 12884901888, got %+v", f.Changes)
				}
			})},
		ruleCase{Rule: "MEM-DIRTY-RATIO", Name: "dirty_bytes small", Tree: "kvm", Workload: "database", Want: Pass,
			Edits: map[string]string{"/proc/sys/vm/dirty_ratio": "0\n", "/proc/sys/vm/dirty_bytes": "268435456\n"}},
		ruleCase{Rule: "MEM-DIRTY-RATIO", Name: "no dirty_ratio", Tree: "metal", Want: NA,
			Edits: map[string]string{"/proc/sys/vm/dirty_ratio": fixture.Delete, "/proc/sys/vm/dirty_bytes": fixture.Delete}},

		// MEM-DIRTY-BACKGROUND
		ruleCase{Rule: "MEM-DIRTY-BACKGROUND", Name: "10 for general", Tree: "metal", Want: Pass},
		ruleCase{Rule: "MEM-DIRTY-BACKGROUND", Name: "10 for database", Tree: "metal", Workload: "database", Want: Fail,
			Check: wantChange("vm.dirty_background_ratio", "5")},
		ruleCase{Rule: "MEM-DIRTY-BACKGROUND", Name: "no dirty_background_ratio", Tree: "metal", Want: NA,
			Edits: map[string]string{"/proc/sys/vm/dirty_background_ratio": fixture.Delete, "/proc/sys/vm/dirty_background_bytes": fixture.Delete}},

		// MEM-ZONE-RECLAIM
		ruleCase{Rule: "MEM-ZONE-RECLAIM", Name: "off", Tree: "metal", Want: Pass},
		ruleCase{Rule: "MEM-ZONE-RECLAIM", Name: "on", Tree: "metal", Want: Fail,
			Edits: map[string]string{"/proc/sys/vm/zone_reclaim_mode": "1\n"}, Check: wantChange("vm.zone_reclaim_mode", "0")},
		ruleCase{Rule: "MEM-ZONE-RECLAIM", Name: "absent", Tree: "metal", Want: NA,
			Edits: map[string]string{"/proc/sys/vm/zone_reclaim_mode": fixture.Delete}},

		// MEM-NUMA-BALANCING
		ruleCase{Rule: "MEM-NUMA-BALANCING", Name: "on for general", Tree: "metal", Want: Pass},
		ruleCase{Rule: "MEM-NUMA-BALANCING", Name: "on for database", Tree: "metal", Workload: "database", Want: Fail,
			Check: wantChange("kernel.numa_balancing", "0")},
		ruleCase{Rule: "MEM-NUMA-BALANCING", Name: "single node", Tree: "kvm", Workload: "database", Want: NA},

		// MEM-HUGEPAGES-NUMA-BALANCE
		ruleCase{Rule: "MEM-HUGEPAGES-NUMA-BALANCE", Name: "512 per node", Tree: "metal", Want: Pass},
		ruleCase{Rule: "MEM-HUGEPAGES-NUMA-BALANCE", Name: "all on node 0", Tree: "metal", Want: Fail,
			Edits: map[string]string{
				"/sys/devices/system/node/node0/meminfo": patched("metal", "/sys/devices/system/node/node0/meminfo",
					replaceLine("Node 0 HugePages_Total:", "Node 0 HugePages_Total:  1024")),
				"/sys/devices/system/node/node1/meminfo": patched("metal", "/sys/devices/system/node/node1/meminfo",
					replaceLine("Node 1 HugePages_Total:", "Node 1 HugePages_Total:     0")),
			},
			Check: all(observedContains("node0: 1024, node1: 0"),
				wantChange("/sys/devices/system/node/node1/hugepages/hugepages-2048kB/nr_hugepages", "512"),
				wantChange("/sys/devices/system/node/node0/hugepages/hugepages-2048kB/nr_hugepages", "512"))},
		ruleCase{Rule: "MEM-HUGEPAGES-NUMA-BALANCE", Name: "single node", Tree: "kvm", Want: NA},

		// MEM-OVERCOMMIT
		ruleCase{Rule: "MEM-OVERCOMMIT", Name: "0 for general", Tree: "metal", Want: Pass},
		ruleCase{Rule: "MEM-OVERCOMMIT", Name: "0 for kv (redis fork)", Tree: "metal", Workload: "kv", Want: Fail,
			Check: wantChange("vm.overcommit_memory", "1")},
		ruleCase{Rule: "MEM-OVERCOMMIT", Name: "strict for general", Tree: "metal", Want: Fail,
			Edits: map[string]string{"/proc/sys/vm/overcommit_memory": "2\n"}},
		ruleCase{Rule: "MEM-OVERCOMMIT", Name: "absent", Tree: "metal", Workload: "kv", Want: NA,
			Edits: map[string]string{"/proc/sys/vm/overcommit_memory": fixture.Delete}},

		// MEM-KSM
		ruleCase{Rule: "MEM-KSM", Name: "stopped", Tree: "metal", Want: Pass},
		ruleCase{Rule: "MEM-KSM", Name: "merging", Tree: "metal", Want: Fail,
			Edits: map[string]string{"/sys/kernel/mm/ksm/run": "1\n"},
			Check: all(observedContains("merging"), wantChange("/sys/kernel/mm/ksm/run", "0"))},
		// The target, not the rule, decides: a VM-density profile wants KSM on.
		ruleCase{Rule: "MEM-KSM", Name: "merging wanted by a profile", Tree: "metal", Want: Pass,
			Profile: "extends: general\nset:\n  ksm.run: \"1\"\n",
			Edits:   map[string]string{"/sys/kernel/mm/ksm/run": "1\n"}},
		ruleCase{Rule: "MEM-KSM", Name: "kernel without KSM", Tree: "metal", Want: NA,
			Edits: map[string]string{"/sys/kernel/mm/ksm": fixture.Delete}},
	)
}
