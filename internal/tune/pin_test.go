package tune

import (
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/snapshot"
)

func pinSnapshot() *snapshot.Snapshot {
	return &snapshot.Snapshot{
		CPU: snapshot.CPU{Online: []int{0, 1, 2, 3, 4, 5, 6, 7}},
		Net: snapshot.Net{Interfaces: []snapshot.NIC{{
			Name: "eth0", NUMANode: 1, IRQs: []int{40, 41, 42},
			RxQueues: []snapshot.Queue{{Name: "rx-0", RPS: "00"}, {Name: "rx-1", RPS: "00"}},
			TxQueues: []snapshot.Queue{{Name: "tx-0", XPS: "00"}, {Name: "tx-1", XPS: "00"}},
		}}},
		IRQs: []snapshot.IRQ{{Number: "40", Affinity: []int{0, 1, 2, 3}}},
	}
}

func TestPinPlan(t *testing.T) {
	p, err := PinPlan(pinSnapshot(), "eth0", []int{4, 5}, PinOptions{RPS: true, XPS: true})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, it := range p.Items {
		got = append(got, it.Change.Target+"="+it.Change.Value)
	}
	want := []string{
		"/proc/irq/40/smp_affinity_list=4",
		"/proc/irq/41/smp_affinity_list=5",
		"/proc/irq/42/smp_affinity_list=4",
		"/sys/class/net/eth0/queues/rx-0/rps_cpus=00000030",
		"/sys/class/net/eth0/queues/rx-1/rps_cpus=00000030",
		"/sys/class/net/eth0/queues/tx-0/xps_cpus=00000010",
		"/sys/class/net/eth0/queues/tx-1/xps_cpus=00000020",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("plan:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if p.Items[0].Change.Current != "0-3" {
		t.Errorf("current affinity = %q, want 0-3", p.Items[0].Change.Current)
	}
}

func TestPinPlanErrors(t *testing.T) {
	s := pinSnapshot()
	for _, tc := range []struct {
		dev  string
		cpus []int
		want string
	}{
		{"eth9", []int{1}, "no network interface"},
		{"eth0", []int{9}, "not all online"},
	} {
		if _, err := PinPlan(s, tc.dev, tc.cpus, PinOptions{}); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("PinPlan(%s, %v) = %v, want %q", tc.dev, tc.cpus, err, tc.want)
		}
	}
	s.CPU.Online = nil
	if _, err := PinPlan(s, "eth0", nil, PinOptions{}); err == nil || !strings.Contains(err.Error(), "no online CPU") {
		t.Errorf("PinPlan without CPUs on a snapshot without online CPUs = %v", err)
	}
}

// Without --cpus the IRQs go to the online CPUs of the NIC's node: CPU 6
// is offline and takes none.
func TestPinPlanDefaultsToNodeCPUs(t *testing.T) {
	s := pinSnapshot()
	s.CPU.Online = []int{0, 1, 2, 3, 4, 5, 7}
	s.CPU.NUMA = []snapshot.NUMANode{{ID: 0, CPUs: []int{0, 1, 2, 3}}, {ID: 1, CPUs: []int{4, 5, 6, 7}}}
	p, err := PinPlan(s, "eth0", nil, PinOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, it := range p.Items {
		got = append(got, it.Change.Value)
	}
	if strings.Join(got, ",") != "4,5,7" {
		t.Errorf("default pin CPUs = %v, want 4,5,7", got)
	}
}
