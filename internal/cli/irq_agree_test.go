package cli

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/audit"
	"github.com/perflab/perflab/internal/fixture"
	"github.com/perflab/perflab/internal/fixture/fixturesnap"
	"github.com/perflab/perflab/internal/snapshot"
	"github.com/perflab/perflab/internal/tune"
)

// irqSet is a sorted, printable set of IRQ numbers.
type irqSet map[int]bool

func (s irqSet) String() string {
	var l []int
	for n := range s {
		l = append(l, n)
	}
	sort.Ints(l)
	return fmt.Sprint(l)
}

// irqFromTarget extracts N from /proc/irq/N/smp_affinity_list.
func irqFromTarget(t string) (int, bool) {
	var n int
	_, err := fmt.Sscanf(t, "/proc/irq/%d/smp_affinity_list", &n)
	return n, err == nil
}

// showOffNode is the set of IRQs `irq show` marks as off the NIC's node,
// over the NICs for which keep returns true.
func showOffNode(t *testing.T, s *snapshot.Snapshot, keep func(snapshot.NIC) bool) irqSet {
	t.Helper()
	out := irqSet{}
	for _, nic := range s.Net.Interfaces {
		if !keep(nic) {
			continue
		}
		views, err := irqViews(s, nic.Name)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range views {
			for _, q := range v.IRQs {
				if q.OffNode {
					out[q.IRQ] = true
				}
			}
		}
	}
	return out
}

// auditOffNode is the set of IRQs the IRQ-NUMA-AFFINITY finding wants moved.
func auditOffNode(s *snapshot.Snapshot, w *audit.Workload) (irqSet, audit.Status) {
	out := irqSet{}
	var st audit.Status
	for _, f := range audit.Run(s, w) {
		if f.Rule != "IRQ-NUMA-AFFINITY" {
			continue
		}
		st = f.Status
		for _, c := range f.Changes {
			if n, ok := irqFromTarget(c.Target); ok {
				out[n] = true
			}
		}
	}
	return out, st
}

// tuneOffNode is the set of IRQs `tune apply` would re-pin.
func tuneOffNode(s *snapshot.Snapshot, w *audit.Workload) irqSet {
	out := irqSet{}
	for _, it := range tune.MakePlan(s, w).Items {
		if n, ok := irqFromTarget(it.Change.Target); ok && it.Rule == "IRQ-NUMA-AFFINITY" {
			out[n] = true
		}
	}
	return out
}

// auditedNIC is a NIC the audit judges: a physical interface that is up.
func auditedNIC(n snapshot.NIC) bool {
	return !n.Virtual && n.Name != "lo" && n.OperState != "down" && n.OperState != "lowerlayerdown" && n.OperState != "notpresent"
}

// TestIRQPlacementAgrees runs `irq show`, the audit, `tune` and `irq pin` on
// every fixture tree under testdata/roots: they must name the same IRQs as
// off the NIC's NUMA node, and after `irq pin`'s plan none may be left.
// Before IRQ placement was interpreted once (snapshot.NICIRQs) irq show
// judged the mask and the audit the effective affinity: on metal, IRQ 100
// (mask 0-7, effective CPU 4) was off-node for one and not the other.
func TestIRQPlacementAgrees(t *testing.T) {
	w, err := audit.ResolveWorkload("general")
	if err != nil {
		t.Fatal(err)
	}
	snaps := fixturesnap.All(t)
	names := fixture.Names()
	offNodeSeen := 0
	for _, name := range names {
		s := snaps[name]
		t.Run(name, func(t *testing.T) {
			show := showOffNode(t, s, auditedNIC)
			au, st := auditOffNode(s, w)
			tu := tuneOffNode(s, w)
			if show.String() != au.String() || au.String() != tu.String() {
				t.Fatalf("off-node IRQs disagree: irq show %v, audit (%s) %v, tune %v", show, st, au, tu)
			}
			if len(au) > 0 && st != audit.Fail {
				t.Errorf("audit status %s with IRQs to move", st)
			}
			offNodeSeen += len(show)

			// irq pin with its default CPUs, applied to the snapshot as the
			// kernel would (mask and effective affinity become the CPU):
			// then nobody may see an off-node IRQ of that NIC.
			pinned := *s
			pinned.IRQs = append([]snapshot.IRQ(nil), s.IRQs...)
			for _, nic := range s.Net.Interfaces {
				if len(nic.IRQs) == 0 || len(s.NICIRQs(nic).Local) == 0 {
					continue
				}
				p, err := tune.PinPlan(s, nic.Name, nil, tune.PinOptions{})
				if err != nil {
					t.Fatalf("pin %s: %v", nic.Name, err)
				}
				for _, it := range p.Items {
					n, ok := irqFromTarget(it.Change.Target)
					if !ok {
						continue
					}
					for i := range pinned.IRQs {
						if pinned.IRQs[i].Number == fmt.Sprint(n) {
							var cpu int
							fmt.Sscan(it.Change.Value, &cpu)
							pinned.IRQs[i].Affinity, pinned.IRQs[i].Effective = []int{cpu}, []int{cpu}
						}
					}
				}
			}
			if left := showOffNode(t, &pinned, func(snapshot.NIC) bool { return true }); len(left) > 0 {
				t.Errorf("after irq pin, irq show still marks %v off-node", left)
			}
			if left, _ := auditOffNode(&pinned, w); len(left) > 0 {
				t.Errorf("after irq pin, the audit still moves %v", left)
			}
		})
	}
	if offNodeSeen == 0 {
		t.Errorf("no fixture tree has an off-node NIC IRQ: the agreement is not exercised (%s)", strings.Join(names, ", "))
	}
}

// On metal, eth0's IRQ 100 has mask 0-7 but is delivered to CPU 4 (node 1,
// the NIC's node): it is not off-node, and irq show says where it lands.
func TestIRQShowLanding(t *testing.T) {
	views, err := irqViews(fixturesnap.Collect(t, "metal"), "eth0")
	if err != nil {
		t.Fatal(err)
	}
	off := 0
	for _, q := range views[0].IRQs {
		if q.OffNode {
			off++
		}
		if q.IRQ == 100 && (q.OffNode || q.Landing != "4" || q.CPUs != "0-7") {
			t.Errorf("IRQ 100 = %+v, want mask 0-7 landing on 4, on the node", q)
		}
	}
	if off != 8 {
		t.Errorf("irq show eth0: %d off-node IRQs, want 8 of 9", off)
	}
}
