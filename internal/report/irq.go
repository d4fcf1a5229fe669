package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/perflab/perflab/internal/cpuset"
	"github.com/perflab/perflab/internal/snapshot"
	"github.com/perflab/perflab/internal/termfmt"
)

// irqView is one NIC's interrupt and steering state, as shown and exported.
// IRQView is one NIC as 'irq show' prints it: its queues, where each of
// its IRQs lands and its RPS/XPS masks.
type IRQView struct {
	NIC        string             `json:"nic"`
	Driver     string             `json:"driver"`
	NUMANode   int                `json:"numa_node"`
	NodeCPUs   string             `json:"node_cpus"`
	RxQueues   int                `json:"rx_queues"`
	TxQueues   int                `json:"tx_queues"`
	IRQs       []IRQCPU           `json:"irqs"`
	RPS        []string           `json:"rps_cpus"`
	XPS        []string           `json:"xps_cpus"`
	Irqbalance bool               `json:"irqbalance_running"`
	Channels   *snapshot.Channels `json:"channels,omitempty"`
}

// IRQCPU is one of a NIC's IRQs.
type IRQCPU struct {
	IRQ     int    `json:"irq"`
	Name    string `json:"name"`
	CPUs    string `json:"cpus"`     // affinity mask (smp_affinity_list)
	Landing string `json:"landing"`  // where it is delivered: snapshot.IRQ.Landing
	OffNode bool   `json:"off_node"` // lands on CPUs outside the NIC's NUMA node
	Total   uint64 `json:"total"`
}

// IRQViews is what 'irq show' prints.
type IRQViews []IRQView

// IRQShow builds the views of the physical NICs, or of dev alone (any NIC,
// virtual too); an error names a dev the snapshot does not have.
func IRQShow(s *snapshot.Snapshot, dev string) (IRQViews, error) {
	out := IRQViews{}
	for _, nic := range s.Net.Interfaces {
		if dev != "" && nic.Name != dev {
			continue
		}
		if dev == "" && nic.Virtual {
			continue
		}
		v := IRQView{NIC: nic.Name, Driver: nic.Driver, NUMANode: nic.NUMANode, RxQueues: len(nic.RxQueues), TxQueues: len(nic.TxQueues),
			Irqbalance: s.Services["irqbalance"].Running, Channels: nic.Channels}
		if cpus := s.NodeCPUs(nic.NUMANode); cpus != nil {
			v.NodeCPUs = cpuset.FormatList(cpus)
		}
		for _, q := range s.NICIRQs(nic).IRQs {
			v.IRQs = append(v.IRQs, IRQCPU{IRQ: q.Number, Name: q.IRQ.Actions, CPUs: cpuset.FormatList(q.IRQ.Affinity),
				Landing: cpuset.FormatList(q.Landing), OffNode: q.OffNode, Total: q.IRQ.Total})
		}
		for _, q := range nic.RxQueues {
			v.RPS = append(v.RPS, q.Name+"="+q.RPS)
		}
		for _, q := range nic.TxQueues {
			v.XPS = append(v.XPS, q.Name+"="+q.XPS)
		}
		out = append(out, v)
	}
	if dev != "" && len(out) == 0 {
		return nil, fmt.Errorf("no network interface %q", dev)
	}
	return out, nil
}

func irqText(w io.Writer, views IRQViews, st termfmt.Style) {
	if len(views) == 0 {
		fmt.Fprintln(w, "No physical network interfaces (use 'perflab irq show DEV' for a virtual one).")
	}
	for _, v := range views {
		node := "none"
		if v.NUMANode >= 0 {
			node = fmt.Sprintf("%d (CPUs %s)", v.NUMANode, v.NodeCPUs)
		}
		fmt.Fprintf(w, "%s  driver %s  NUMA node %s  queues rx %d / tx %d", st.Bold(v.NIC), dashIfEmpty(v.Driver), node, v.RxQueues, v.TxQueues)
		if v.Channels != nil {
			fmt.Fprintf(w, "  channels combined %d/%d", v.Channels.Combined, v.Channels.MaxCombined)
		}
		fmt.Fprintln(w)
		if v.Irqbalance {
			fmt.Fprintln(w, "  irqbalance is running: it rewrites affinities that are pinned by hand")
		}
		for _, q := range v.IRQs {
			mark := ""
			if q.OffNode {
				mark = st.Yellow("  off the NIC's node")
			}
			if q.Landing != q.CPUs && q.Landing != "" {
				mark = "  lands on " + q.Landing + mark
			}
			fmt.Fprintf(w, "  IRQ %-5d %-28s CPUs %-10s %12d interrupts%s\n", q.IRQ, q.Name, q.CPUs, q.Total, mark)
		}
		fmt.Fprintf(w, "  RPS %s\n  XPS %s\n", strings.Join(v.RPS, " "), strings.Join(v.XPS, " "))
	}
}
