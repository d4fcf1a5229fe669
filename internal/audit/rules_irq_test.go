package audit

import (
	"testing"

	"github.com/perflab/perflab/internal/fixture"
)

// metal: eth0 on node 1 (CPUs 4-7); its queue IRQs 101-108 have
// smp_affinity_list 0-3 and land on CPUs 0-3; the misc IRQ 100 lands on 4;
// irqbalance runs as pid 1187.

// eachNICIRQ sets a file of eth0's queue IRQs 101-108; value(i) gives the
// content for queue i.
func eachNICIRQ(file string, value func(i int) string) map[string]string {
	m := map[string]string{}
	for i := 0; i < 8; i++ {
		m["/proc/irq/"+itoa(101+i)+"/"+file] = value(i)
	}
	return m
}

// nicIRQsOnNode1 pins eth0's queue IRQs to node 1, one CPU each.
func nicIRQsOnNode1() map[string]string {
	cpu := func(i int) string { return itoa(4+i%4) + "\n" }
	return edits(eachNICIRQ("smp_affinity_list", cpu), eachNICIRQ("effective_affinity_list", cpu))
}

func init() {
	addRuleCases(
		// IRQ-NUMA-AFFINITY
		ruleCase{Rule: "IRQ-NUMA-AFFINITY", Name: "queue IRQs on node 0", Tree: "metal", Want: Fail,
			Check: all(changeCount(8), observedContains("8 of 9 IRQs elsewhere"),
				wantChange("/proc/irq/101/smp_affinity_list", "4"), wantChange("/proc/irq/108/smp_affinity_list", "7"),
				wantCurrent("/proc/irq/105/smp_affinity_list", "0-3"), reasonContains("irqbalance"),
				func(t *testing.T, f Finding) {
					if first := f.Fix[:len("echo 4 > /proc/irq/101/smp_affinity_list")]; first != "echo 4 > /proc/irq/101/smp_affinity_list" {
						t.Errorf("fix starts %q", first)
					}
				})},
		ruleCase{Rule: "IRQ-NUMA-AFFINITY", Name: "queue IRQs on node 1", Tree: "metal", Want: Pass,
			Edits: nicIRQsOnNode1()},
		ruleCase{Rule: "IRQ-NUMA-AFFINITY", Name: "NIC without a NUMA node", Tree: "metal", Want: NA,
			Edits: map[string]string{"/sys/class/net/eth0/device/numa_node": "-1\n"}},
		ruleCase{Rule: "IRQ-NUMA-AFFINITY", Name: "single node", Tree: "kvm", Want: NA},

		// IRQ-IRQBALANCE-PINNED
		ruleCase{Rule: "IRQ-IRQBALANCE-PINNED", Name: "irqbalance and pinned NIC IRQs", Tree: "metal", Workload: "web", Want: Fail,
			Check: all(observedContains("pid 1187"), observedContains("101(eth0)→0-3"), changeCount(1),
				func(t *testing.T, f Finding) {
					if f.Fix != "systemctl disable --now irqbalance" || f.Revert != "systemctl enable --now irqbalance" {
						t.Errorf("fix %q revert %q", f.Fix, f.Revert)
					}
				})},
		ruleCase{Rule: "IRQ-IRQBALANCE-PINNED", Name: "irqbalance stopped", Tree: "metal", Workload: "kv", Want: Pass,
			Edits: map[string]string{"/proc/1187": fixture.Delete}},
		ruleCase{Rule: "IRQ-IRQBALANCE-PINNED", Name: "nothing pinned", Tree: "metal", Workload: "latency", Want: Pass,
			Edits: eachNICIRQ("smp_affinity_list", func(int) string { return "0-7\n" })},
		ruleCase{Rule: "IRQ-IRQBALANCE-PINNED", Name: "general workload", Tree: "metal", Want: NA},
	)
}
