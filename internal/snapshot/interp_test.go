package snapshot

import (
	"fmt"
	"testing"
)

func TestNodeCPUsOnlineOnly(t *testing.T) {
	s := &Snapshot{CPU: CPU{Online: []int{0, 1, 2, 4, 5}, NUMA: []NUMANode{{ID: 0, CPUs: []int{0, 1, 2, 3}}, {ID: 1, CPUs: []int{7, 6, 5, 4}}}}}
	for _, c := range []struct {
		node int
		want string
	}{{0, "[0 1 2]"}, {1, "[4 5]"}, {2, "[]"}, {-1, "[]"}} {
		if got := fmt.Sprint(s.NodeCPUs(c.node)); got != c.want {
			t.Errorf("NodeCPUs(%d) = %s, want %s", c.node, got, c.want)
		}
	}
	if s.NodeCPUs(2) != nil {
		t.Error("an unknown node must be nil")
	}
	// Without an online list every thread counts as online.
	s2 := &Snapshot{CPU: CPU{Threads: 3, NUMA: []NUMANode{{ID: 0, CPUs: []int{0, 1, 2, 3}}}}}
	if got := fmt.Sprint(s2.NodeCPUs(0)); got != "[0 1 2]" {
		t.Errorf("NodeCPUs without online list = %s", got)
	}
}

func TestIRQLanding(t *testing.T) {
	online := []int{0, 1, 2, 3, 4, 5, 6, 7}
	for _, c := range []struct {
		q    IRQ
		want string
	}{
		{IRQ{Affinity: []int{0, 1, 2, 3, 4, 5, 6, 7}, Effective: []int{4}}, "[4]"}, // effective wins
		{IRQ{Affinity: []int{0, 1, 2, 3}}, "[0 1 2 3]"},                            // no effective: the mask
		{IRQ{Affinity: []int{6, 7, 8, 9, 200}}, "[6 7]"},                           // offline/possible-only CPUs dropped
		{IRQ{Effective: []int{12}}, "[]"},                                          // lands nowhere online: unknown
		{IRQ{}, "[]"},
	} {
		if got := fmt.Sprint(c.q.Landing(online)); got != c.want {
			t.Errorf("%+v.Landing = %s, want %s", c.q, got, c.want)
		}
	}
	if got := fmt.Sprint(IRQ{Affinity: []int{9}}.Landing(nil)); got != "[9]" {
		t.Errorf("Landing without online list = %s", got)
	}
}

func TestNICIRQs(t *testing.T) {
	s := &Snapshot{
		CPU: CPU{Online: []int{0, 1, 2, 3, 4, 5, 6, 7}, NUMA: []NUMANode{{ID: 0, CPUs: []int{0, 1, 2, 3}}, {ID: 1, CPUs: []int{4, 5, 6, 7}}}},
		IRQs: []IRQ{
			{Number: "100", Affinity: []int{0, 1, 2, 3, 4, 5, 6, 7}, Effective: []int{4}},
			{Number: "101", Affinity: []int{0, 1, 2, 3}, Effective: []int{0}},
			{Number: "102", Affinity: []int{5}},
		},
	}
	p := s.NICIRQs(NIC{Name: "eth0", NUMANode: 1, IRQs: []int{100, 101, 102, 103}})
	if fmt.Sprint(p.Local) != "[4 5 6 7]" || p.Judged() != 3 {
		t.Fatalf("local %v judged %d", p.Local, p.Judged())
	}
	off := p.OffNode()
	if len(off) != 1 || off[0].Number != 101 {
		t.Errorf("off-node = %+v, want only 101", off)
	}
	if p.IRQs[3].Found || p.IRQs[3].Judged {
		t.Errorf("IRQ 103 has no line and cannot be judged: %+v", p.IRQs[3])
	}
	if q := s.NICIRQs(NIC{NUMANode: -1, IRQs: []int{101}}); q.Local != nil || q.Judged() != 0 {
		t.Errorf("a NIC without a node judges nothing: %+v", q)
	}
}

// Missing walks up array keys that contain dots: a VLAN NIC's fact is
// covered by its element and by the list.
func TestMissingBracketedParents(t *testing.T) {
	s := &Snapshot{Unavailable: map[string]string{ElemPath("net.interfaces", "eth0.100", ""): "gone"}}
	if got := s.Missing(ElemPath("net.interfaces", "eth0.100", "mtu")); got != "gone" {
		t.Errorf("element key covers its field: %q", got)
	}
	if got := s.Missing("net.interfaces[eth0].mtu"); got != "" {
		t.Errorf("another element is not covered: %q", got)
	}
	s.Unavailable = map[string]string{"net.interfaces": "no sysfs"}
	if got := s.Missing("net.interfaces[eth0.100].rx_queues[rx-0].rps_cpus"); got != "no sysfs" {
		t.Errorf("the list covers every element: %q", got)
	}
	for p, want := range map[string]string{"a.b": "a", "a[x.y]": "a", "a[x.y].b": "a[x.y]", "a": "", "a[x[1]]": "a"} {
		if got := parentPath(p); got != want {
			t.Errorf("parentPath(%q) = %q, want %q", p, got, want)
		}
	}
}
