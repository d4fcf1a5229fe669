package cli

import (
	"bufio"
	"context"
	"fmt"
	"github.com/perflab/perflab/internal/bench"
	"strings"
	"time"

	"github.com/perflab/perflab/internal/clierr"
	"github.com/perflab/perflab/internal/report"
	"github.com/perflab/perflab/internal/snapshot"
	"github.com/perflab/perflab/internal/termfmt"
	"github.com/perflab/perflab/internal/tune"
	"github.com/spf13/cobra"
)

func newTuneCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "tune",
		Short: "Preview, apply, verify and revert a workload's tuning as a transaction",
		Long: `tune applies what the audit expects for a workload. Every knob's old value is
journaled (fsynced, under /var/lib/perflab/tune) before it is written; a failed
write or Ctrl-C rolls back what was applied; 'verify' reports drift; 'revert'
restores the exact previous values, also after perflab was killed mid-apply.
Kernel command-line parameters and service changes are printed as
instructions, never applied.`,
		Example: `  perflab tune plan web                 # what would change, and why
  perflab tune apply web --yes --persist
  perflab tune verify                    # exit 1 on drift
  perflab tune revert
  perflab tune apply ./my-proxy.yaml     # a profile that extends a built-in workload
  perflab tune apply web --container web1 --yes   # the container's namespaced sysctls and cgroup only
  perflab tune revert --container web1`,
	}
	cmd.AddCommand(newTunePlanCmd(e), newTuneApplyCmd(e), newTuneVerifyCmd(e), newTuneRevertCmd(e), newTuneStatusCmd(e), newTuneForgetCmd(e), newTuneSearchCmd(e))
	return cmd
}

type tuneFlags struct {
	root    string
	ref     string
	trusted bool
	out     outputFlags
}

func (f *tuneFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.root, "root", "/", "host root filesystem to tune (a copied tree for a dry run)")
	registerContainer(cmd, &f.ref)
	cmd.Flags().BoolVar(&f.trusted, "trusted", false, "the host runs only your own code: side-channel mitigations may be traded for speed")
	f.out.register(cmd, "text", "text", "json")
}

func (f *tuneFlags) plan(name string) (tune.Plan, tune.Host, error) {
	if err := f.out.validate(); err != nil {
		return tune.Plan{}, tune.Host{}, err
	}
	w, err := resolveWorkload(name)
	if err != nil {
		return tune.Plan{}, tune.Host{}, err
	}
	if f.trusted {
		w.Trusted = true
	}
	s, fs, t, err := collectTarget(f.root, f.ref, 0, snapshot.Options{})
	if err != nil {
		return tune.Plan{}, tune.Host{FS: fs}, err
	}
	h := tune.Host{FS: fs}
	if t != nil {
		h = t.TuneHost()
	}
	p := tune.MakePlan(s, w)
	h.Check(&p)
	return p, h, nil
}

// tuneHost is the tune.Host of --root, or of --container on it.
func tuneHost(root, ref string) (tune.Host, error) {
	fs, err := openRoot(root)
	if err != nil {
		return tune.Host{}, err
	}
	t, err := openTarget(fs, ref, 0)
	if err != nil || t == nil {
		return tune.Host{FS: fs}, err
	}
	return t.TuneHost(), nil
}

func newTunePlanCmd(e *env) *cobra.Command {
	var f tuneFlags
	cmd := &cobra.Command{
		Use:     "plan WORKLOAD|FILE",
		Short:   "Show the changes a workload implies for this host; nothing is written",
		Example: "  perflab tune plan kv\n  perflab tune plan web --format json",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			p, _, err := f.plan(args[0])
			if err != nil {
				return err
			}
			return writeResult(&f.out, e.stdout, p)
		},
	}
	f.register(cmd)
	return cmd
}

type tuneApplyFlags struct {
	tuneFlags
	yes, persist, skipBlocked bool
	measure                   string
	blocks                    int
	budget                    time.Duration
}

func newTuneApplyCmd(e *env) *cobra.Command {
	var f tuneApplyFlags
	cmd := &cobra.Command{
		Use:   "apply WORKLOAD|FILE",
		Short: "Apply the plan as a journaled transaction (rolls back on any failure)",
		Long: `apply writes the plan's knobs as one journaled transaction: the old value of
each knob is journaled before it is written, and any failure or Ctrl-C rolls
back. 'perflab tune revert' restores everything later.

--measure SUITE first measures what the plan does: interleaved blocks put
the host "before" (the journal reverted) and "after" (the plan applied), each
measured once per block in random order; the blocks pair, so the host's drift
cancels, and every metric's effect is printed with its 95% CI. The host is
left tuned (unless the measurement fails or is interrupted: then it is
reverted). Seed 002 tested tcp_tw_reuse "separately, to prevent a negative
optimisation": this is that test, for the whole plan.`,
		Example: `  perflab tune apply web --yes
  perflab tune apply db --persist --yes   # also write /etc/sysctl.d/99-perflab.conf
  perflab tune apply web --measure net --blocks 6 --yes   # measure before/after, then leave it tuned`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runTuneApply(cmd, e, &f, args[0]) },
	}
	f.register(cmd)
	cmd.Flags().BoolVarP(&f.yes, "yes", "y", false, "apply without asking (needed when not on a terminal)")
	cmd.Flags().BoolVar(&f.persist, "persist", false, "also persist sysctls in "+tune.PersistPath)
	cmd.Flags().BoolVar(&f.skipBlocked, "skip-blocked", false, "apply the knobs that can be changed and skip the rest (default: change nothing)")
	cmd.Flags().StringVar(&f.measure, "measure", "", "measure SUITE (or PROBE) before and after in interleaved blocks, print each effect with its CI, then leave the host tuned")
	cmd.Flags().IntVar(&f.blocks, "blocks", 6, "with --measure: blocks of before/after")
	cmd.Flags().DurationVar(&f.budget, "budget", 10*time.Second, "with --measure: time budget of each measurement of each probe")
	return cmd
}

func runTuneApply(cmd *cobra.Command, e *env, f *tuneApplyFlags, name string) error {
	p, h, err := f.plan(name)
	if err != nil {
		return err
	}
	st := termfmt.Style{On: termfmt.ColorEnabled(e.stdout)}
	report.TunePlan(e.stdout, p, st)
	if p, err = dropBlocked(e, h, p, f.skipBlocked); err != nil {
		return err
	}
	if len(p.Items) == 0 {
		return nil
	}
	if ok, err := confirmApply(e, f.yes); !ok || err != nil {
		return err
	}
	opt := tune.ApplyOptions{Source: "tune apply " + name, Persist: f.persist,
		Log: func(format string, a ...any) { fmt.Fprintf(e.stderr, "  "+format+"\n", a...) }}
	if f.measure != "" {
		return measureApply(cmd.Context(), e, h, p, opt, f)
	}
	applied, err := h.Apply(cmd.Context(), p, opt)
	if err != nil {
		return clierr.Runtimef("", "%v", err)
	}
	fmt.Fprintf(e.stdout, "Applied %d knob(s). Check with 'perflab tune verify'; undo with 'perflab tune revert'.\n", len(applied))
	return nil
}

// dropBlocked leaves out the knobs that cannot be written: in a
// container's scope those it does not own (the plan says why), on a host
// only with --skip-blocked.
func dropBlocked(e *env, h tune.Host, p tune.Plan, skip bool) (tune.Plan, error) {
	blocked := blockedItems(p)
	switch {
	case len(blocked) == 0:
		return p, nil
	case h.Scope != nil:
		fmt.Fprintf(e.stderr, "perflab: %d knob(s) are not the container's and are left alone (see the plan above)\n", len(blocked))
	case !skip:
		return p, clierr.Runtimef("run as root on the host itself, or pass --skip-blocked to apply the rest", "%d knob(s) cannot be changed here (%s); nothing was changed", len(blocked), strings.Join(blocked, "; "))
	default:
		fmt.Fprintf(e.stderr, "perflab: skipping %d knob(s) that cannot be changed here\n", len(blocked))
	}
	return withoutBlocked(p), nil
}

// confirmApply asks on a terminal unless --yes; false means do nothing.
func confirmApply(e *env, yes bool) (bool, error) {
	if yes {
		return true, nil
	}
	if !termfmt.IsTTY(e.stdout) {
		return false, clierr.Usagef("pass --yes to apply without a prompt", "refusing to change the host non-interactively")
	}
	fmt.Fprint(e.stdout, "Apply these changes? [y/N] ")
	ans, _ := bufio.NewReader(e.stdin).ReadString('\n')
	if a := strings.ToLower(strings.TrimSpace(ans)); a != "y" && a != "yes" {
		fmt.Fprintln(e.stdout, "Nothing changed.")
		return false, nil
	}
	return true, nil
}

// measureApply is tune apply --measure: the plan measured before/after in
// interleaved blocks (tune.Host.MeasureApply), its effects printed, the
// host left tuned.
func measureApply(ctx context.Context, e *env, h tune.Host, p tune.Plan, opt tune.ApplyOptions, f *tuneApplyFlags) error {
	plan, err := resolvePlan(e, []string{f.measure}, nil)
	if err != nil {
		return optionErr(err, benchFlagNames)
	}
	bo := bench.DefaultOptions()
	bo.Budget, bo.Version, bo.Suite, bo.Label = f.budget, Version, plan.Suite, "tune-"+p.Workload
	bo.Progress = bench.NewProgress(e.stderr, termfmt.IsTTY(e.stderr))
	for i := range plan.Items {
		plan.Items[i].Budget = f.budget
	}
	m, err := h.MeasureApply(ctx, p, opt, plan.Items, bench.InterleaveOptions{Blocks: f.blocks, MinBlocks: min(3, f.blocks)}, bo)
	if m != nil && m.Interleaved != nil {
		if werr := report.Interleaved(e.stdout, m.Interleaved, "text", termfmt.Style{On: termfmt.ColorEnabled(e.stdout)}); werr != nil {
			return werr
		}
	}
	if err != nil {
		return clierr.Runtimef("the host was reverted", "%v", err)
	}
	fmt.Fprintf(e.stdout, "Applied %d knob(s) after measuring them. Check with 'perflab tune verify'; undo with 'perflab tune revert'.\n", len(m.Applied))
	return nil
}

// withoutBlocked drops the items that cannot be applied here.
func withoutBlocked(p tune.Plan) tune.Plan {
	keep := p.Items[:0:0]
	for _, it := range p.Items {
		if it.Blocked == "" {
			keep = append(keep, it)
		}
	}
	p.Items = keep
	return p
}

func blockedItems(p tune.Plan) []string {
	var out []string
	for _, it := range p.Items {
		if it.Blocked != "" {
			out = append(out, it.Blocked)
		}
	}
	return out
}

func newTuneVerifyCmd(e *env) *cobra.Command {
	return tuneJournalCmd("verify", "Check every applied knob: OK or DRIFT (exit 1 on drift)",
		"  perflab tune verify\n  perflab tune verify --format json",
		func(h tune.Host, out *outputFlags) error {
			drift, err := h.Verify()
			if err != nil {
				return clierr.Runtimef("", "%v", err)
			}
			if err := writeResult(out, e.stdout, report.TuneDrift(drift)); err != nil {
				return err
			}
			if bad := tune.Drifted(drift); bad > 0 {
				return clierr.CheckFailed(fmt.Sprintf("%d knob(s) drifted from the applied tuning", bad))
			}
			return nil
		})
}

// tuneJournalCmd is the shape of tune's read-only journal commands (verify,
// status): --root, --container and --format text|json, then run on the
// host.
func tuneJournalCmd(use, short, example string, run func(h tune.Host, out *outputFlags) error) *cobra.Command {
	var root, ref string
	var out outputFlags
	cmd := &cobra.Command{
		Use: use, Short: short, Example: example, Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := out.validate(); err != nil {
				return err
			}
			h, err := tuneHost(root, ref)
			if err != nil {
				return err
			}
			return run(h, &out)
		},
	}
	cmd.Flags().StringVar(&root, "root", "/", "host root filesystem")
	registerContainer(cmd, &ref)
	out.register(cmd, "text", "text", "json")
	return cmd
}

func newTuneRevertCmd(e *env) *cobra.Command {
	var root, ref string
	var force bool
	cmd := &cobra.Command{
		Use:     "revert",
		Short:   "Restore every knob tune changed to its value before perflab (idempotent)",
		Example: "  perflab tune revert\n  perflab tune revert --force   # after a reboot",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			h, err := tuneHost(root, ref)
			if err != nil {
				return err
			}
			restored, err := h.Revert(tune.RevertOptions{Force: force,
				Log: func(format string, a ...any) { fmt.Fprintf(e.stderr, "  "+format+"\n", a...) }})
			if err != nil {
				return clierr.Runtimef("", "%v", err)
			}
			fmt.Fprintf(e.stdout, "Reverted %d knob(s); the host is as it was before perflab tune.\n", len(restored))
			return nil
		},
	}
	cmd.Flags().StringVar(&root, "root", "/", "host root filesystem")
	registerContainer(cmd, &ref)
	cmd.Flags().BoolVar(&force, "force", false, "revert a journal written before the last reboot")
	return cmd
}

func newTuneStatusCmd(e *env) *cobra.Command {
	return tuneJournalCmd("status", "Show what tune has applied and not reverted", "  perflab tune status",
		func(h tune.Host, out *outputFlags) error {
			j, err := h.Status()
			if err != nil {
				return clierr.Runtimef("", "%v", err)
			}
			return writeResult(out, e.stdout, j)
		})
}

func newTuneForgetCmd(e *env) *cobra.Command {
	var root, ref string
	cmd := &cobra.Command{
		Use:     "forget",
		Short:   "Drop the journal without restoring (e.g. after a reboot reset the knobs)",
		Example: "  perflab tune forget",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			h, err := tuneHost(root, ref)
			if err != nil {
				return err
			}
			if err := h.Forget(); err != nil {
				return clierr.Runtimef("", "%v", err)
			}
			fmt.Fprintln(e.stdout, "Journal archived; nothing was changed on the host.")
			return nil
		},
	}
	cmd.Flags().StringVar(&root, "root", "/", "host root filesystem")
	registerContainer(cmd, &ref)
	return cmd
}
