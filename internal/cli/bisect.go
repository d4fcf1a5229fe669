package cli

import (
	"errors"
	"fmt"
	"time"

	"github.com/perflab/perflab/internal/bench"
	"github.com/perflab/perflab/internal/bisect"
	"github.com/perflab/perflab/internal/clierr"
	"github.com/perflab/perflab/internal/hostfs"
	"github.com/perflab/perflab/internal/snapshot"
	"github.com/perflab/perflab/internal/termfmt"
	"github.com/perflab/perflab/internal/tune"
	"github.com/spf13/cobra"
)

type bisectFlags struct {
	out             outputFlags
	good, metric    string
	db, cpus        string
	params          []string
	blocks, confirm int
	budget          time.Duration
	dryRun, yes     bool
	noStore         bool
}

func newBisectCmd(e *env) *cobra.Command {
	var f bisectFlags
	cmd := &cobra.Command{
		Use:   "bisect --good GOOD PROBE|SUITE",
		Short: "Confirm which setting causes a gap by flipping it to the good host's value and measuring again",
		Long: `bisect takes the settings that differ between a good host (--good: a snapshot
file, a run export, or a stored label or run id) and this one, flips them to
the good values through tune's journal in groups, measures each state
against this host as it is in interleaved blocks, narrows down to the
settings that recover the gap, and confirms each one by applying and
reverting it three times. Differences it cannot flip at run time (boot
parameters, the kernel, the CPU model) are listed with the instruction that
would test them. The host ends exactly as it started; after kill -9,
'perflab tune revert' restores it. See docs/bisect.md.`,
		Example: `  perflab snapshot -o good.json                          # on the good host
  perflab bisect --good good.json memory.pagefault --yes
  perflab bisect --good good.json probe:net.tcp --metric bandwidth --format json --yes
  perflab bisect --good node7 cpu --dry-run               # the plan and its budget`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runBisect(cmd, e, &f, args) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.good, "good", "", "the good host: a snapshot file, a run export, or a stored label or run id")
	fl.StringVar(&f.metric, "metric", "", "the metric with the gap (default: the one flipping everything moves most)")
	fl.IntVar(&f.blocks, "blocks", 2, "interleaved blocks per screening measurement")
	fl.IntVar(&f.confirm, "confirm", 3, "apply/revert cycles that confirm each found cause")
	fl.DurationVar(&f.budget, "budget", 10*time.Second, "time budget of each measurement of each probe")
	fl.StringVar(&f.cpus, "cpus", "", "pin the probes to these CPUs")
	fl.StringArrayVar(&f.params, "param", nil, "probe parameter key=value or PROBE:key=value (repeatable)")
	fl.StringVar(&f.db, "db", "", "run database: a --good label or run id, and where the result is stored")
	fl.BoolVar(&f.noStore, "no-store", false, "do not store the result (it is stored as bisect:ID for 'perflab report')")
	fl.BoolVar(&f.dryRun, "dry-run", false, "print the candidates, the untestable differences and the budget; change nothing")
	fl.BoolVarP(&f.yes, "yes", "y", false, "change the host's settings without asking (they are restored at the end)")
	f.out.register(cmd, "text", "text", "json", "md", "html")
	return cmd
}

func runBisect(cmd *cobra.Command, e *env, f *bisectFlags, args []string) error {
	opt, err := f.options(cmd, e, args)
	if err != nil {
		return err
	}
	if f.dryRun {
		return writeResult(&f.out, e.stdout, bisect.DryRun(opt))
	}
	if !f.yes {
		return clierr.Usagef("pass --yes: bisect flips the listed settings (journaled, restored at the end); --dry-run shows them", "refusing to change the host's settings without --yes")
	}
	opt.Bench.Progress = bench.NewProgress(e.stderr, termfmt.IsTTY(e.stderr))
	res, err := bisect.Run(cmd.Context(), opt)
	if res != nil && !f.noStore && err == nil {
		if id, serr := storeReport(cmd.Context(), f.db, "bisect", res); serr != nil {
			fmt.Fprintf(e.stderr, "perflab: the result was not stored: %v\n", serr)
		} else {
			fmt.Fprintf(e.stderr, "stored as bisect:%s (perflab report bisect:%s)\n", id, id)
		}
	}
	if res != nil {
		if werr := writeResult(&f.out, e.stdout, res); werr != nil {
			return werr
		}
	}
	switch {
	case err != nil && errors.Is(err, bench.ErrInterrupted):
		return clierr.Runtimef("every flipped setting was restored", "interrupted")
	case err != nil:
		return err
	case res != nil && !res.Restored:
		return clierr.Runtimef("run 'perflab tune revert'", "the host was not fully restored")
	}
	return nil
}

// options maps the flags: the good snapshot, the candidates, the probes.
func (f *bisectFlags) options(cmd *cobra.Command, e *env, args []string) (bisect.Options, error) {
	var opt bisect.Options
	if err := f.out.validate(); err != nil {
		return opt, err
	}
	if f.good == "" {
		return opt, clierr.Usagef("e.g. --good good.json (perflab snapshot -o good.json on the good host)", "--good is required")
	}
	src := newSources(f.db)
	defer src.Close()
	good, err := bisect.ResolveGood(cmd.Context(), f.good, src)
	if err != nil {
		return opt, sideErr(err)
	}
	fs, err := hostfs.New("/")
	if err != nil {
		return opt, clierr.Runtimef("", "reading the host: %v", err)
	}
	here, err := snapshot.Collect(fs, snapshot.Options{})
	if err != nil {
		return opt, clierr.Runtimef("", "snapshot: %v", err)
	}
	plan, err := resolvePlan(e, args, f.params)
	if err != nil {
		return opt, optionErr(err, benchFlagNames)
	}
	for i := range plan.Items {
		plan.Items[i].Budget = f.budget
	}
	cands, un := bisect.Candidates(good.Snapshot, here)
	opt = bisect.Options{Host: tune.Host{FS: fs}, Items: plan.Items, Metric: f.metric, Candidates: cands, Untestable: un,
		Blocks: f.blocks, Confirm: f.confirm,
		Bench: bench.DefaultOptions()}
	opt.Bench.Budget, opt.Bench.Version, opt.Bench.Suite = f.budget, Version, plan.Suite
	if f.cpus != "" {
		if opt.Bench.CPUs, err = parseCPUs("--cpus", f.cpus); err != nil {
			return opt, err
		}
	}
	if f.metric != "" && len(plan.Items) > 0 {
		opt.GoodValue = good.Value(plan.Items[0].Probe.Name(), f.metric)
	}
	if f.blocks < 1 || f.confirm < 2 {
		return opt, clierr.Usagef("e.g. --blocks 2 --confirm 3", "--blocks %d / --confirm %d: need at least 1 block and 2 confirmations", f.blocks, f.confirm)
	}
	return opt, nil
}
