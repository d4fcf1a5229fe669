package cli

import (
	"fmt"

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

// irqViews is report.IRQShow with its error worded for the command line.
func irqViews(s *snapshot.Snapshot, dev string) (report.IRQViews, error) {
	views, err := report.IRQShow(s, dev)
	if err != nil {
		return nil, clierr.Usagef("list interfaces with 'perflab irq show'", "%v", err)
	}
	return views, nil
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
			return writeResult(&out, e.stdout, views)
		},
	}
	cmd.Flags().StringVar(&root, "root", "/", "host root filesystem")
	out.register(cmd, "text", "text", "json")
	return cmd
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
