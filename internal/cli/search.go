package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/perflab/perflab/internal/bench"
	"github.com/perflab/perflab/internal/clierr"
	"github.com/perflab/perflab/internal/hostfs"
	"github.com/perflab/perflab/internal/report"
	"github.com/perflab/perflab/internal/search"
	"github.com/perflab/perflab/internal/store"
	"github.com/perflab/perflab/internal/termfmt"
	"github.com/perflab/perflab/internal/tune"
	"github.com/spf13/cobra"
)

type searchFlags struct {
	out                      outputFlags
	measure, objective, db   string
	exportProfile, cpus      string
	params, knobs, pins      []string
	blocks, confirm, maxBlk  int
	minGain                  float64
	budget, runBudget        time.Duration
	only, namespaced         bool
	apply, yes, dryRun, noSt bool
}

func newTuneSearchCmd(e *env) *cobra.Command {
	var f searchFlags
	cmd := &cobra.Command{
		Use:   "search WORKLOAD --measure PROBE",
		Short: "Find the settings that make a probe faster here, confirm the gain, keep only the knobs that matter",
		Long: `search tries a ladder of values for each knob of the workload's space (its
targets, perflab's catalogue, your --knob additions) on this host, one knob
at a time against the configuration found so far (greedy coordinate
ascent). Every value is measured in interleaved blocks against the current
configuration through tune's journal, and kept only when its interval
clears ±--min-gain in the objective's direction (a step whose value looks
like a gain it cannot show yet is extended, up to --max-blocks). The winner is then shrunk
(a knob whose removal is not measurably worse is dropped) and confirmed on
FRESH interleaved blocks against the untouched baseline: only a confirmed
gain is reported as one. The host is restored at the end unless --apply
leaves the confirmed winner (journaled; 'perflab tune revert' undoes it).
In a network namespace other than the host's, only namespaced knobs are
searched. See docs/search.md.`,
		Example: `  perflab tune search web --measure net.tcp --param tests=bandwidth,connect --yes
  perflab tune search web --measure net.tcp --objective 'max:connect,latency<=40' --budget 15m --yes
  perflab tune search web --measure net.tcp --knob net.ipv4.tcp_rmem='4096 131072 6291456' --only --yes
  perflab tune search web --measure net.tcp --dry-run          # the space and the budget
  perflab tune search web --measure net.tcp --yes --apply --export-profile tuned.yaml`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runSearch(cmd, e, &f, args[0]) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.measure, "measure", "", "the probe that measures the workload (required)")
	fl.StringArrayVar(&f.params, "param", nil, "probe parameter key=value (repeatable)")
	fl.StringVar(&f.objective, "objective", "", "METRIC, max:METRIC or min:METRIC, with bounds: 'max:rps,p99<=5' (default: the probe's first metric)")
	fl.DurationVar(&f.budget, "budget", 30*time.Minute, "time the whole search may spend measuring (0: one pass over the space)")
	fl.DurationVar(&f.runBudget, "run-budget", 10*time.Second, "time budget of each probe run")
	fl.IntVar(&f.blocks, "blocks", 4, "interleaved blocks per screening step")
	fl.IntVar(&f.maxBlk, "max-blocks", 0, "extend a screening step whose value looks like a gain it cannot show yet, up to this many blocks (default 3 x --blocks; = --blocks: never)")
	fl.IntVar(&f.confirm, "confirm", 6, "fresh interleaved blocks of the final confirmation")
	fl.Float64Var(&f.minGain, "min-gain", 2, "smallest effect acted on, in percent: an interval must lie wholly beyond it")
	fl.StringArrayVar(&f.knobs, "knob", nil, "add a knob and its values: NAME=V1,V2 (sysctl name or /sys path; repeatable)")
	fl.BoolVar(&f.only, "only", false, "search only the --knob knobs")
	fl.StringArrayVar(&f.pins, "pin", nil, "hold this knob where it is (repeatable)")
	fl.BoolVar(&f.namespaced, "namespaced-only", false, "search only network-namespace knobs (automatic outside the host's namespace)")
	fl.StringVar(&f.cpus, "cpus", "", "pin the probe to these CPUs")
	fl.BoolVar(&f.apply, "apply", false, "leave the confirmed winner applied (journaled) instead of restoring the host")
	fl.StringVar(&f.exportProfile, "export-profile", "", "write the confirmed winner as a profile YAML for 'tune apply' and 'audit'")
	fl.StringVar(&f.db, "db", "", "run database where the result is stored")
	fl.BoolVar(&f.noSt, "no-store", false, "do not store the result (it is stored as search:ID for 'perflab report')")
	fl.BoolVar(&f.dryRun, "dry-run", false, "print the space and the budget; change nothing")
	fl.BoolVarP(&f.yes, "yes", "y", false, "change the host's settings (journaled, restored at the end unless --apply)")
	f.out.register(cmd, "text", "text", "json", "md", "html")
	return cmd
}

func runSearch(cmd *cobra.Command, e *env, f *searchFlags, workload string) error {
	opt, h, err := f.options(e, workload)
	if err != nil {
		return err
	}
	if f.dryRun {
		return writeOut(&f.out, e.stdout, func(w io.Writer) error { return report.SearchPlan(w, search.Plan(opt), f.out.format) })
	}
	if !f.yes {
		return clierr.Usagef("pass --yes: the search sets knobs through tune's journal and restores them at the end; --dry-run shows the space", "refusing to change the host's settings without --yes")
	}
	h.Bench.Progress = bench.NewProgress(e.stderr, termfmt.IsTTY(e.stderr))
	opt.Log = func(format string, args ...any) { fmt.Fprintf(e.stderr, "search: "+format+"\n", args...) }
	res, err := search.OnHost(cmd.Context(), opt, h, f.apply)
	if res != nil && err == nil {
		f.keep(cmd.Context(), e, res, workload)
	}
	if res != nil {
		if werr := writeResult(&f.out, e.stdout, res); werr != nil {
			return werr
		}
	}
	switch {
	case err != nil && errors.Is(err, bench.ErrInterrupted):
		return clierr.Runtimef("every knob the search set was restored", "interrupted")
	case err != nil:
		return err
	case !res.Restored && !res.Applied:
		return clierr.Runtimef("run 'perflab tune revert'", "the host was not fully restored")
	}
	return nil
}

// keep stores the result and writes the profile.
func (f *searchFlags) keep(ctx context.Context, e *env, res *search.Result, workload string) {
	if !f.noSt {
		if id, err := storeReport(ctx, f.db, "search", res); err != nil {
			fmt.Fprintf(e.stderr, "perflab: the result was not stored: %v\n", err)
		} else {
			fmt.Fprintf(e.stderr, "stored as search:%s (perflab report search:%s)\n", id, id)
		}
	}
	if f.exportProfile == "" {
		return
	}
	b, err := search.Profile(res, "searched-"+workload, workload)
	if err == nil {
		err = os.WriteFile(f.exportProfile, b, 0o644)
	}
	if err != nil {
		fmt.Fprintf(e.stderr, "perflab: no profile written: %v\n", err)
		return
	}
	fmt.Fprintf(e.stderr, "profile written to %s (perflab tune apply %s; perflab audit --workload %s)\n", f.exportProfile, f.exportProfile, f.exportProfile)
}

// options maps the flags to the search's options and the host measurer.
func (f *searchFlags) options(e *env, workload string) (search.Options, *search.Host, error) {
	var opt search.Options
	if err := f.out.validate(); err != nil {
		return opt, nil, err
	}
	if f.measure == "" {
		return opt, nil, clierr.Usagef("e.g. --measure net.tcp", "--measure is required: the probe that measures the workload")
	}
	w, err := resolveWorkload(workload)
	if err != nil {
		return opt, nil, err
	}
	so := search.SpaceOptions{Workload: w, Probe: f.measure, Only: f.only, Pin: f.pins, NamespacedOnly: f.namespaced || search.OutsideHostNetNS()}
	for _, s := range f.knobs {
		k, err := search.ParseKnobSpec(s)
		if err != nil {
			return opt, nil, clierr.Usagef("", "%v", err)
		}
		so.Add = append(so.Add, k)
	}
	if f.objective != "" {
		if opt.Objective, err = search.ParseObjective(f.objective); err != nil {
			return opt, nil, clierr.Usagef("", "%v", err)
		}
	}
	fs, err := hostfs.New("/")
	if err != nil {
		return opt, nil, clierr.Runtimef("", "reading the host: %v", err)
	}
	plan, err := resolvePlan(e, []string{f.measure}, f.params)
	if err != nil {
		return opt, nil, optionErr(err, benchFlagNames)
	}
	for i := range plan.Items {
		plan.Items[i].Budget = f.runBudget
	}
	var excluded []string
	opt.Knobs, excluded = search.Space(search.FromKnobs{FS: fs}, so)
	opt.Probe, opt.Blocks, opt.Confirm, opt.MinGain, opt.Budget = f.measure, f.blocks, f.confirm, f.minGain/100, f.budget
	opt.MaxBlocks = f.maxBlk
	h := &search.Host{Tune: tune.Host{FS: fs}, Items: plan.Items, Source: "tune search " + w.Name, Bench: bench.DefaultOptions()}
	h.Bench.Budget, h.Bench.Version, h.Bench.Suite = f.runBudget, Version, plan.Suite
	if f.cpus != "" {
		if h.Bench.CPUs, err = parseCPUs("--cpus", f.cpus); err != nil {
			return opt, nil, err
		}
	}
	opt.Excluded = excluded
	return opt, h, optionErr(opt.Validate(), searchFlagNames)
}

var searchFlagNames = map[string]string{"Blocks": "--blocks", "MaxBlocks": "--max-blocks", "Confirm": "--confirm", "MinGain": "--min-gain", "Budget": "--budget", "Knobs": "--knob"}

// showSearch renders a stored search.
func showSearch(ctx context.Context, e *env, out *outputFlags, db, id string) error {
	st, err := openStoreReadOnly(db)
	if err != nil {
		return err
	}
	defer st.Close()
	r, err := st.Report(ctx, "search", id)
	if errors.Is(err, store.ErrNotFound) {
		return clierr.Usagef("perflab tune search prints the id it stores a result under", "%v", err)
	}
	if err != nil {
		return clierr.Runtimef("", "%v", err)
	}
	res, err := report.DecodeSearch(r.Doc)
	if err != nil {
		return clierr.Runtimef("", "search %s: %v", r.ID, err)
	}
	return writeResult(out, e.stdout, res)
}
