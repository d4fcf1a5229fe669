package tune

import (
	"fmt"
	"github.com/perflab/perflab/internal/knob"
	"strconv"

	"github.com/perflab/perflab/internal/audit"
	"github.com/perflab/perflab/internal/cpuset"
	"github.com/perflab/perflab/internal/snapshot"
)

// PinOptions select what `irq pin` changes besides IRQ affinity.
type PinOptions struct {
	RPS bool // steer receive processing of every rx queue to the CPUs
	XPS bool // map tx queue i to CPU i (mod the list), as seed 002 did
}

// PinCPUs is where a NIC's interrupts belong by default: the online CPUs of
// its NUMA node (snapshot.NICIRQs, the same interpretation irq show and the
// IRQ-NUMA-AFFINITY rule use), or every online CPU when the platform names
// no node for it.
func PinCPUs(s *snapshot.Snapshot, nic snapshot.NIC) []int {
	if local := s.NICIRQs(nic).Local; len(local) > 0 {
		return local
	}
	return s.OnlineCPUs()
}

// PinPlan spreads a NIC's IRQs one per CPU over cpus (round-robin, in IRQ
// order), the binding seed 002's bind_irqs_affinity_list.sh did by hand, and
// optionally sets RPS/XPS masks. With no cpus it uses PinCPUs. Pure: it
// reads only the snapshot.
func PinPlan(s *snapshot.Snapshot, dev string, cpus []int, opt PinOptions) (Plan, error) {
	var nic *snapshot.NIC
	for i := range s.Net.Interfaces {
		if s.Net.Interfaces[i].Name == dev {
			nic = &s.Net.Interfaces[i]
		}
	}
	if nic == nil {
		return Plan{}, fmt.Errorf("no network interface %q on this host", dev)
	}
	if len(cpus) == 0 {
		cpus = PinCPUs(s, *nic)
	}
	if len(cpus) == 0 {
		return Plan{}, fmt.Errorf("the snapshot lists no online CPU to pin %s to; pass the CPUs", dev)
	}
	online := s.CPU.Online
	if len(online) > 0 && !cpuset.Contains(online, cpus) {
		return Plan{}, fmt.Errorf("CPUs %s are not all online (online: %s)", cpuset.FormatList(cpus), cpuset.FormatList(online))
	}
	p := Plan{Workload: "irq pin " + dev}
	if len(nic.IRQs) == 0 && !opt.RPS && !opt.XPS {
		return p, fmt.Errorf("%s has no IRQs of its own (a virtual device?); use --rps/--xps to steer it in software", dev)
	}
	for i, q := range s.NICIRQs(*nic).IRQs {
		cpu := cpus[i%len(cpus)]
		p.Items = append(p.Items, Item{
			Rule:  "IRQ-NUMA-AFFINITY",
			Title: fmt.Sprintf("%s IRQ %d → CPU %d", dev, q.Number, cpu),
			Change: audit.KnobChange(knob.MustLookup("irqs[*].affinity").With(strconv.Itoa(q.Number)),
				strconv.Itoa(cpu), cpuset.FormatList(q.IRQ.Affinity)),
		})
	}
	nr := len(online)
	if nr == 0 {
		nr = cpus[len(cpus)-1] + 1
	}
	if opt.RPS {
		mask := cpuset.FormatMask(cpus, nr)
		for _, q := range nic.RxQueues {
			p.Items = append(p.Items, Item{
				Rule:   "NET-RPS",
				Title:  fmt.Sprintf("%s %s RPS → CPUs %s", dev, q.Name, cpuset.FormatList(cpus)),
				Change: audit.KnobChange(knob.MustLookup("net.interfaces[*].rx_queues[*].rps_cpus").With(dev, q.Name), mask, q.RPS),
			})
		}
	}
	if opt.XPS {
		for i, q := range nic.TxQueues {
			cpu := cpus[i%len(cpus)]
			p.Items = append(p.Items, Item{
				Rule:   "NET-XPS",
				Title:  fmt.Sprintf("%s %s XPS → CPU %d", dev, q.Name, cpu),
				Change: audit.KnobChange(knob.MustLookup("net.interfaces[*].tx_queues[*].xps_cpus").With(dev, q.Name), cpuset.FormatMask([]int{cpu}, nr), q.XPS),
			})
		}
	}
	return p, nil
}
