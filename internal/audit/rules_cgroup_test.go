package audit

import (
	"strings"
	"testing"
)

// metal: perflab's cgroup is /system.slice/app.service (v2) with cpu.max
// "200000 100000" (2 CPUs), throttled in 412377 of 1843200 periods (22.4%),
// cpuset 0-7 over both nodes, mems 0-1. kvm: root cgroup, no quota, one node.

const appCgroup = "/sys/fs/cgroup/system.slice/app.service/"

func init() {
	addRuleCases(
		// CGROUP-CPU-THROTTLED
		ruleCase{Rule: "CGROUP-CPU-THROTTLED", Name: "22% of periods throttled", Tree: "metal", Want: Fail,
			Check: all(wantSeverity(Medium), observedContains("412377 of 1843200 periods (22.4 %)"),
				func(t *testing.T, f Finding) {
					if !strings.Contains(f.Fix, "echo '400000 100000' > "+appCgroup+"cpu.max") ||
						!strings.Contains(f.Revert, "echo '200000 100000' > "+appCgroup+"cpu.max") {
						t.Errorf("fix %q revert %q", f.Fix, f.Revert)
					}
				})},
		ruleCase{Rule: "CGROUP-CPU-THROTTLED", Name: "half the periods throttled", Tree: "metal", Want: Fail,
			Edits: map[string]string{appCgroup + "cpu.stat": "usage_usec 1\nuser_usec 1\nsystem_usec 0\nnr_periods 1000\nnr_throttled 500\nthrottled_usec 9000000\n"},
			Check: wantSeverity(High)},
		ruleCase{Rule: "CGROUP-CPU-THROTTLED", Name: "rarely throttled", Tree: "metal", Want: Pass,
			Edits: map[string]string{appCgroup + "cpu.stat": "usage_usec 1\nuser_usec 1\nsystem_usec 0\nnr_periods 1000\nnr_throttled 3\nthrottled_usec 9000\n"}},
		ruleCase{Rule: "CGROUP-CPU-THROTTLED", Name: "1% is too much for latency", Tree: "metal", Workload: "latency", Want: Fail,
			Edits: map[string]string{appCgroup + "cpu.stat": "usage_usec 1\nuser_usec 1\nsystem_usec 0\nnr_periods 1000\nnr_throttled 30\nthrottled_usec 9000\n"}},
		ruleCase{Rule: "CGROUP-CPU-THROTTLED", Name: "no quota", Tree: "kvm", Want: NA},

		// CGROUP-CPUS-VS-QUOTA
		ruleCase{Rule: "CGROUP-CPUS-VS-QUOTA", Name: "8 CPUs under a 2-CPU quota", Tree: "metal", Want: Fail,
			Check: all(observedContains("sees 8 CPUs"), observedContains("2.00 CPUs"),
				func(t *testing.T, f Finding) {
					if !strings.Contains(f.Fix, "GOMAXPROCS=2") {
						t.Errorf("fix %q", f.Fix)
					}
				})},
		ruleCase{Rule: "CGROUP-CPUS-VS-QUOTA", Name: "quota covers the cpuset", Tree: "metal", Want: Pass,
			Edits: map[string]string{appCgroup + "cpu.max": "800000 100000\n"}},
		ruleCase{Rule: "CGROUP-CPUS-VS-QUOTA", Name: "2.5 CPUs on a 3-CPU cpuset", Tree: "metal", Want: Pass,
			Edits: map[string]string{appCgroup + "cpu.max": "250000 100000\n", appCgroup + "cpuset.cpus.effective": "4-6\n"}},
		ruleCase{Rule: "CGROUP-CPUS-VS-QUOTA", Name: "no quota", Tree: "kvm", Want: NA},

		// CGROUP-CPUSET-NUMA
		ruleCase{Rule: "CGROUP-CPUSET-NUMA", Name: "all 8 CPUs need both nodes", Tree: "metal", Want: Pass},
		ruleCase{Rule: "CGROUP-CPUSET-NUMA", Name: "4 CPUs straddling nodes", Tree: "metal", Want: Fail,
			Edits: map[string]string{appCgroup + "cpuset.cpus.effective": "2-5\n"},
			Check: all(observedContains("4 CPUs straddle 2 nodes though one node has 4"),
				func(t *testing.T, f Finding) {
					if !strings.HasPrefix(f.Fix, "echo 0 > "+appCgroup+"cpuset.mems && echo 0-3 > "+appCgroup+"cpuset.cpus") ||
						f.Revert != "echo 2-5 > "+appCgroup+"cpuset.cpus && echo 0-1 > "+appCgroup+"cpuset.mems" {
						t.Errorf("fix %q revert %q", f.Fix, f.Revert)
					}
				})},
		ruleCase{Rule: "CGROUP-CPUSET-NUMA", Name: "CPUs on node 1, memory on node 0", Tree: "metal", Want: Fail,
			Edits: map[string]string{appCgroup + "cpuset.cpus.effective": "4-7\n", appCgroup + "cpuset.mems.effective": "0\n"},
			Check: observedContains("memory not allowed on node(s) 1")},
		ruleCase{Rule: "CGROUP-CPUSET-NUMA", Name: "on node 1 with its memory", Tree: "metal", Want: Pass,
			Edits: map[string]string{appCgroup + "cpuset.cpus.effective": "4-7\n", appCgroup + "cpuset.mems.effective": "1\n"}},
		ruleCase{Rule: "CGROUP-CPUSET-NUMA", Name: "single node", Tree: "kvm", Want: NA},
	)
}

func TestHomeCPUsKeepsWhatItHas(t *testing.T) {
	got := homeCPUs([]int{5, 6}, []int{4, 5, 6, 7}, 3)
	if cpuList(got) != "4-6" {
		t.Errorf("got %v, want 5 and 6 kept plus one more", got)
	}
	if got := homeCPUs([]int{1}, []int{4, 5}, 2); cpuList(got) != "4-5" {
		t.Errorf("got %v", got)
	}
}
