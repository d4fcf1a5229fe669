package snapshot

import (
	"sort"
	"strconv"

	"github.com/perflab/perflab/internal/cpuset"
)

// Interpretations of facts, on their types (as procfs puts Topology() on
// its types). Every consumer that asks "which CPUs are online", "which CPUs
// belong to NUMA node N" or "where does this interrupt land" calls these, so
// `irq show`, the audit and `tune`/`irq pin` cannot disagree.

// OnlineCPUs returns the online CPU ids. A snapshot without the online list
// (an old or partial tree) falls back to 0..Threads-1.
func (s *Snapshot) OnlineCPUs() []int {
	if len(s.CPU.Online) > 0 {
		return s.CPU.Online
	}
	out := make([]int, s.CPU.Threads)
	for i := range out {
		out[i] = i
	}
	return out
}

// NodeCPUs returns the online CPUs of NUMA node node, sorted; nil when the
// snapshot has no such node (or node < 0). An offline CPU listed in the
// node's cpulist can take no interrupt and run no thread, so it is left out.
func (s *Snapshot) NodeCPUs(node int) []int {
	if node < 0 {
		return nil
	}
	online := map[int]bool{}
	for _, c := range s.OnlineCPUs() {
		online[c] = true
	}
	for _, n := range s.CPU.NUMA {
		if n.ID != node {
			continue
		}
		out := []int{}
		for _, c := range n.CPUs {
			if online[c] {
				out = append(out, c)
			}
		}
		sort.Ints(out)
		return out
	}
	return nil
}

// CPUNodes maps each CPU to its NUMA node.
func (s *Snapshot) CPUNodes() map[int]int {
	m := map[int]int{}
	for _, n := range s.CPU.NUMA {
		for _, c := range n.CPUs {
			m[c] = n.ID
		}
	}
	return m
}

// IRQ returns the numbered interrupt n from /proc/interrupts.
func (s *Snapshot) IRQ(n int) (IRQ, bool) {
	want := strconv.Itoa(n)
	for _, q := range s.IRQs {
		if q.Number == want {
			return q, true
		}
	}
	return IRQ{}, false
}

// Landing returns the CPUs this interrupt is delivered to, given the online
// CPUs: the effective affinity when the kernel reports it (on x86 the
// interrupt controller delivers to one CPU picked from the mask, so a mask
// of 0-7 with effective CPU 4 lands on CPU 4 only), else (none reported, or
// a stale one outside the mask) the affinity mask;
// either intersected with the online CPUs, because a mask may name
// possible-but-offline CPUs (smp_affinity_list is often 0-255 on a host with
// 8 CPUs) that can never take it. With online empty nothing is removed.
// It returns nil when the landing is unknown: no affinity was read, or none
// of its CPUs is online (a stale tree), and such an IRQ is not judged.
func (q IRQ) Landing(online []int) []int {
	at := q.Effective
	if len(at) == 0 || (len(q.Affinity) > 0 && !cpuset.Contains(q.Affinity, at)) {
		// The kernel keeps the effective affinity inside the mask; outside
		// it, the mask was just rewritten and the move is pending until
		// the next interrupt: the mask is where it goes.
		at = q.Affinity
	}
	if len(at) == 0 {
		return nil
	}
	if len(online) == 0 {
		return at
	}
	on := map[int]bool{}
	for _, c := range online {
		on[c] = true
	}
	var out []int
	for _, c := range at {
		if on[c] {
			out = append(out, c)
		}
	}
	return out
}

// IRQPlacement is where one of a NIC's interrupts lands relative to the
// NIC's NUMA node.
type IRQPlacement struct {
	Number  int   // IRQ number
	IRQ     IRQ   // its /proc/interrupts line; zero when the line is missing
	Found   bool  // /proc/interrupts has a line for it
	Landing []int // see IRQ.Landing; nil when unknown
	// OffNode: it lands on at least one CPU outside the NIC's node. Only
	// set when Judged.
	OffNode bool
	// Judged: the NIC has a node with online CPUs and the landing is known.
	Judged bool
}

// NICIRQs is the placement of one NIC's interrupts.
type NICIRQs struct {
	Node int // the NIC's NUMA node, -1 when the platform names none
	// Local is NodeCPUs(Node): the online CPUs an interrupt of this NIC
	// should land on. Nil when Node < 0 or the node has no online CPU, and
	// then no IRQ is judged.
	Local []int
	IRQs  []IRQPlacement // in the NIC's IRQ order
}

// OffNode returns the judged IRQs that land off the NIC's node.
func (p NICIRQs) OffNode() []IRQPlacement {
	var out []IRQPlacement
	for _, q := range p.IRQs {
		if q.OffNode {
			out = append(out, q)
		}
	}
	return out
}

// Judged returns how many IRQs could be judged.
func (p NICIRQs) Judged() int {
	n := 0
	for _, q := range p.IRQs {
		if q.Judged {
			n++
		}
	}
	return n
}

// NICIRQs places each of nic's interrupts relative to its NUMA node: the
// one answer to "do this NIC's IRQs run on its node" that `irq show`, the
// IRQ-NUMA-AFFINITY audit rule and `irq pin` share.
func (s *Snapshot) NICIRQs(nic NIC) NICIRQs {
	out := NICIRQs{Node: nic.NUMANode}
	if local := s.NodeCPUs(nic.NUMANode); len(local) > 0 {
		out.Local = local
	}
	online := s.OnlineCPUs()
	for _, n := range nic.IRQs {
		q, ok := s.IRQ(n)
		p := IRQPlacement{Number: n, IRQ: q, Found: ok}
		if ok {
			p.Landing = q.Landing(online)
		}
		if out.Local != nil && len(p.Landing) > 0 {
			p.Judged = true
			p.OffNode = !cpuset.Contains(out.Local, p.Landing)
		}
		out.IRQs = append(out.IRQs, p)
	}
	return out
}
