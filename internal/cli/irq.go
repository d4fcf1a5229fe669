package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/perflab/perflab/internal/clierr"
	"github.com/perflab/perflab/internal/cpuset"
	"github.com/perflab/perflab/internal/report"
	"github.com/perflab/perflab/internal/snapshot"
	"github.com/perflab/perflab/internal/termfmt"
	"github.com/perflab/perflab/internal/tune"
	"github.com/spf13/cobra"
)

func newIrqCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "irq",
		Short: "Show and pin NIC interrupts, RPS and XPS (replaces hand-written IRQ scripts)",
		Example: `  perflab irq show eth0
  perflab irq pin eth0 --cpus 68-71 --rps --xps --yes`,
	}
	cmd.AddCommand(newIrqShowCmd(e), newIrqPinCmd(e))
	return cmd
}

// irqView is one NIC's interrupt and steering state, as shown and exported.
type irqView struct {
	NIC        string             `json:"nic"`
	Driver     string             `json:"driver"`
	NUMANode   int                `json:"numa_node"`
	NodeCPUs   string             `json:"node_cpus"`
	RxQueues   int                `json:"rx_queues"`
	TxQueues   int                `json:"tx_queues"`
	IRQs       []irqCPU           `json:"irqs"`
	RPS        []string           `json:"rps_cpus"`
	XPS        []string           `json:"xps_cpus"`
	Irqbalance bool               `json:"irqbalance_running"`
	Channels   *snapshot.Channels `json:"channels,omitempty"`
}

type irqCPU struct {
	IRQ     int    `json:"irq"`
	Name    string `json:"name"`
	CPUs    string `json:"cpus"`     // affinity mask (smp_affinity_list)
	Landing string `json:"landing"`  // where it is delivered: snapshot.IRQ.Landing
	OffNode bool   `json:"off_node"` // lands on CPUs outside the NIC's NUMA node
	Total   uint64 `json:"total"`
}

func irqViews(s *snapshot.Snapshot, dev string) ([]irqView, error) {
	var out []irqView
	for _, nic := range s.Net.Interfaces {
		if dev != "" && nic.Name != dev {
			continue
		}
		if dev == "" && nic.Virtual {
			continue
		}
		v := irqView{NIC: nic.Name, Driver: nic.Driver, NUMANode: nic.NUMANode, RxQueues: len(nic.RxQueues), TxQueues: len(nic.TxQueues),
			Irqbalance: s.Services["irqbalance"].Running, Channels: nic.Channels}
		if cpus := s.NodeCPUs(nic.NUMANode); cpus != nil {
			v.NodeCPUs = cpuset.FormatList(cpus)
		}
		for _, q := range s.NICIRQs(nic).IRQs {
			v.IRQs = append(v.IRQs, irqCPU{IRQ: q.Number, Name: q.IRQ.Actions, CPUs: cpuset.FormatList(q.IRQ.Affinity),
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
		return nil, clierr.Usagef("list interfaces with 'perflab irq show'", "no network interface %q", dev)
	}
	return out, nil
}

func newIrqShowCmd(e *env) *cobra.Command {
	var root string
	var out outputFlags
	cmd := &cobra.Command{
		Use:     "show [DEV]",
		Short:   "Per NIC: queues, IRQs and their CPUs, the NIC's NUMA node, RPS/XPS masks, irqbalance",
		Example: "  perflab irq show\n  perflab irq show eth0 --format json",
		Args:    cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := out.validate(); err != nil {
				return err
			}
			s, _, err := collectRoot(root, 0)
			if err != nil {
				return err
			}
			dev := ""
			if len(args) == 1 {
				dev = args[0]
			}
			views, err := irqViews(s, dev)
			if err != nil {
				return err
			}
			st := termfmt.Style{On: termfmt.ColorEnabled(e.stdout) && out.output == ""}
			return writeOut(&out, e.stdout, func(w io.Writer) error {
				if out.format == "json" {
					if views == nil {
						views = []irqView{}
					}
					return writeJSON(w, views)
				}
				printIrqViews(w, views, st)
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&root, "root", "/", "host root filesystem")
	out.register(cmd, "text", "text", "json")
	return cmd
}

func printIrqViews(w io.Writer, views []irqView, st termfmt.Style) {
	if len(views) == 0 {
		fmt.Fprintln(w, "No physical network interfaces (use 'perflab irq show DEV' for a virtual one).")
	}
	for _, v := range views {
		node := "none"
		if v.NUMANode >= 0 {
			node = fmt.Sprintf("%d (CPUs %s)", v.NUMANode, v.NodeCPUs)
		}
		fmt.Fprintf(w, "%s  driver %s  NUMA node %s  queues rx %d / tx %d", st.Bold(v.NIC), orDash(v.Driver), node, v.RxQueues, v.TxQueues)
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

func newIrqPinCmd(e *env) *cobra.Command {
	var root, cpus string
	var rps, xps, yes bool
	cmd := &cobra.Command{
		Use:   "pin DEV [--cpus LIST]",
		Short: "Spread a NIC's IRQs over CPUs (one each), optionally set RPS/XPS; journaled like tune",
		Example: `  perflab irq pin eth0 --cpus 68-71 --yes
  perflab irq pin eth0 --cpus 4-7 --rps --xps --yes   # then: perflab tune revert`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var list []int // empty: the online CPUs of the NIC's NUMA node (tune.PinCPUs)
			if cpus != "" {
				l, err := cpuset.ParseList(cpus)
				if err != nil || len(l) == 0 {
					return clierr.Usagef("e.g. --cpus 4-7 or --cpus 0,2,4", "bad --cpus %q", cpus)
				}
				list = l
			}
			s, fs, err := collectRoot(root, 0)
			if err != nil {
				return err
			}
			p, err := tune.PinPlan(s, args[0], list, tune.PinOptions{RPS: rps, XPS: xps})
			if err != nil {
				return clierr.Usagef("see 'perflab irq show'", "%v", err)
			}
			if s.Services["irqbalance"].Running {
				fmt.Fprintln(e.stderr, "warning: irqbalance is running and will move these IRQs again; stop it first (systemctl stop irqbalance)")
			}
			st := termfmt.Style{On: termfmt.ColorEnabled(e.stdout)}
			if p.Check(fs) > 0 {
				report.TunePlan(e.stdout, p, st)
				return clierr.Runtimef("run as root on the host itself", "%d knob(s) cannot be changed here; nothing was changed", len(blockedItems(p)))
			}
			report.TunePlan(e.stdout, p, st)
			if !yes {
				return clierr.Usagef("pass --yes to apply", "refusing to change IRQ affinity without --yes")
			}
			applied, err := tune.Host{FS: fs}.Apply(cmd.Context(), p, tune.ApplyOptions{Source: "irq pin " + args[0] + " --cpus " + cpus})
			if err != nil {
				return clierr.Runtimef("", "%v", err)
			}
			fmt.Fprintf(e.stdout, "Pinned: %d knob(s) changed. Undo with 'perflab tune revert'.\n", len(applied))
			return nil
		},
	}
	cmd.Flags().StringVar(&root, "root", "/", "host root filesystem")
	cmd.Flags().StringVar(&cpus, "cpus", "", "CPUs to spread the IRQs over, e.g. 68-71 (default: the online CPUs of the NIC's NUMA node)")
	cmd.Flags().BoolVar(&rps, "rps", false, "also steer receive processing of every rx queue to these CPUs")
	cmd.Flags().BoolVar(&xps, "xps", false, "also map tx queue i to the i-th CPU")
	cmd.Flags().BoolVarP(&yes, "yes", "y", false, "apply without asking")
	return cmd
}
