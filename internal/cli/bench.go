package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/perflab/perflab/internal/bench"
	"github.com/perflab/perflab/internal/clierr"
	"github.com/perflab/perflab/internal/cpuset"
	"github.com/perflab/perflab/internal/hostfs"
	"github.com/perflab/perflab/internal/monitor"
	"github.com/perflab/perflab/internal/probe/builtin"
	"github.com/perflab/perflab/internal/probe/tools"
	"github.com/perflab/perflab/internal/run"
	"github.com/perflab/perflab/internal/snapshot"
	"github.com/perflab/perflab/internal/store"
	"github.com/perflab/perflab/internal/termfmt"
	"github.com/spf13/cobra"
)

// probeCatalog is every probe this build has: the builtin probes and the
// adapters around standard tools.
func probeCatalog() *bench.Catalog {
	return bench.NewCatalog(append(builtin.All(), tools.All()...)...)
}

func newBenchCmd(e *env) *cobra.Command {
	var (
		out                      outputFlags
		label, cpus, dir, db     string
		serverCPUs, clientCPUs   string
		precision                float64
		maxRuns, minRuns, warmup int
		budget                   time.Duration
		params                   []string
		concurrency              string
		noStore, noNoiseCheck    bool
	)
	cmd := &cobra.Command{
		Use:   "bench [SUITE|PROBE]...",
		Short: "Measure the host with builtin probes, with confidence intervals",
		Long: `bench runs suites or single probes. Each probe is warmed up, then repeated
until the 95% confidence interval of every metric's median is within
±precision (default ±1%), or until --max-runs or the --budget is reached; the
report says which. Every raw sample, the parameters, the probe version, the
CPU placement, a host snapshot and a 1-second series of host activity (CPU
by state, context switches, interrupts, run queue, memory, PSI) are stored
under --label for 'perflab compare'.

Ctrl-C stops cleanly: the partial run is stored, marked incomplete, and the
probe's scratch files are removed.

--param key=value applies to every selected probe that has the parameter;
--param PROBE:key=value to one probe. 'perflab bench list' shows suites,
probes and their parameters. Where a name is both a suite and a probe (cpu,
disk), the suite runs; probe:NAME runs the probe alone.`,
		Example: `  perflab bench quick --label before          # every category in about a minute
  perflab bench baseline --label node7         # the full pre-production baseline (~10 min)
  perflab bench memory.latency --cpus 1 --param max=64MiB
  perflab bench disk --dir /var/lib/mysql      # test the filesystem that matters
  perflab bench kv --server-cpus 0 --client-cpus 1   # redis-server and redis-benchmark on separate cores
  perflab bench db --concurrency 1,20,100      # MySQL point selects: where does TPS peak, where does it fall?
  perflab bench probe:cpu --precision 0.005 --budget 2m --format json -o cpu.json
  perflab bench list`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := out.validate(); err != nil {
				return err
			}
			opt := bench.Options{
				Precision: precision, MinRuns: minRuns, MaxRuns: maxRuns, Warmup: warmup,
				Dir: dir, Label: label, Version: Version, Log: io.Discard,
				NoNoiseCheck: noNoiseCheck,
			}
			if minRuns < 1 {
				return clierr.Usagef("e.g. --min-runs 6 (the fewest with a 95% CI)", "--min-runs %d must be at least 1", minRuns)
			}
			if cmd.Flags().Changed("max-runs") && maxRuns < minRuns {
				return clierr.Usagef("raise --max-runs or lower --min-runs", "--max-runs %d is below --min-runs %d", maxRuns, minRuns)
			}
			if warmup < 0 {
				return clierr.Usagef("", "--warmup %d must not be negative", warmup)
			}
			if cmd.Flags().Changed("budget") && budget <= 0 {
				return clierr.Usagef("e.g. --budget 30s", "--budget %s must be positive", budget)
			}
			if cpus != "" {
				list, err := cpuset.ParseList(cpus)
				if err != nil || len(list) == 0 {
					return clierr.Usagef("e.g. --cpus 0-3,8", "bad --cpus %q", cpus)
				}
				if err := bench.CheckCPUs(list); err != nil {
					return err
				}
				opt.CPUs = list
			}
			plan, err := probeCatalog().Resolve(args, params)
			if err != nil {
				return err
			}
			if err := applyPlacement(plan, "server_cpus", "--server-cpus", serverCPUs); err != nil {
				return err
			}
			if err := applyPlacement(plan, "client_cpus", "--client-cpus", clientCPUs); err != nil {
				return err
			}
			if concurrency != "" && plan.SetWhereKnown("concurrency", concurrency) == 0 {
				return clierr.Usagef("it applies to sysbench.oltp_point_select, redis-benchmark, wrk.nginx and etcd (suites db, kv, web, etcd)",
					"--concurrency: none of the selected probes runs a server")
			}
			// Explicit flags override every entry's own limits; otherwise a
			// suite entry's budget and cap apply, and the defaults elsewhere.
			for i := range plan.Items {
				if cmd.Flags().Changed("budget") {
					plan.Items[i].Budget = budget
				}
				if cmd.Flags().Changed("max-runs") {
					plan.Items[i].MaxRuns = maxRuns
				}
			}
			opt.Budget = budget
			opt.Suite = plan.Suite
			if err := bench.Validate(plan.Items, opt); err != nil {
				return err
			}
			// Open the store before measuring: a database this perflab
			// cannot write must fail now, not after ten minutes.
			var st *store.Store
			if !noStore {
				if st, err = openStore(db); err != nil {
					return err
				}
				defer st.Close()
			}
			w, commit, err := out.open(e.stdout)
			if err != nil {
				return err
			}
			for _, n := range plan.Notes {
				fmt.Fprintln(e.stderr, "note: "+n)
			}
			return runBench(cmd.Context(), e, plan, opt, st, w, commit, out.format)
		},
	}
	out.register(cmd, "text", "text", "json", "md")
	f := cmd.Flags()
	f.StringVar(&label, "label", "", "label the runs (e.g. before, after, node7) for compare")
	f.StringVar(&cpus, "cpus", "", "pin the probes to these CPUs (list form: 0-3,8)")
	f.StringVar(&serverCPUs, "server-cpus", "", "pin the servers that tool probes start (nginx, redis-server, mariadbd, …) to these CPUs")
	f.StringVar(&clientCPUs, "client-cpus", "", "pin the load generators of tool probes (wrk, redis-benchmark, sysbench, …) to these CPUs")
	f.Float64Var(&precision, "precision", bench.DefaultPrecision, "stop when every 95% CI of the median is within ±this fraction (0 disables)")
	f.IntVar(&maxRuns, "max-runs", bench.DefaultMaxRuns, "at most this many measured repetitions per probe")
	f.IntVar(&minRuns, "min-runs", bench.DefaultMinRuns, "at least this many before the precision stop (6 is the fewest with a 95% CI)")
	f.DurationVar(&budget, "budget", bench.DefaultBudget, "time budget per probe, setup included (suites set their own unless given)")
	f.IntVar(&warmup, "warmup", bench.DefaultWarmup, "discarded warm-up repetitions per probe")
	f.StringVar(&concurrency, "concurrency", "", "measure the server probes at each of these client counts: 1,20,100 or 1-128 (doubling) or 20-100/20; reports the peak and where throughput falls")
	f.StringArrayVar(&params, "param", nil, "probe parameter key=value or PROBE:key=value (repeatable)")
	f.StringVar(&dir, "dir", "", "directory for scratch files (the disk probe tests its filesystem; default $TMPDIR)")
	f.StringVar(&db, "db", "", "run database (default $XDG_DATA_HOME/perflab/perflab.db)")
	f.BoolVar(&noStore, "no-store", false, "print the results without storing the runs")
	f.BoolVar(&noNoiseCheck, "no-noise-check", false, "skip the 0.1 s host-noise reading before and after each probe (docs/bench.md)")
	cmd.AddCommand(newBenchListCmd(e))
	return cmd
}

// applyPlacement sets a client/server probe parameter from its flag on
// every planned probe that has it.
func applyPlacement(plan *bench.Plan, key, flag, value string) error {
	if value == "" {
		return nil
	}
	list, err := cpuset.ParseList(value)
	if err != nil || len(list) == 0 {
		return clierr.Usagef("e.g. "+flag+" 1", "bad %s %q", flag, value)
	}
	if err := bench.CheckCPUs(list); err != nil {
		return clierr.Usagef("", "%s: %s", flag, strings.TrimPrefix(err.Error(), "--cpus: "))
	}
	used := false
	for i := range plan.Items {
		if _, ok := plan.Items[i].Probe.Defaults(false)[key]; ok {
			plan.Items[i].Params[key] = cpuset.FormatList(list)
			used = true
		}
	}
	if !used {
		return clierr.Usagef("it applies to wrk.nginx, redis-benchmark, sysbench.oltp_point_select, qperf, iperf3 and sockperf", "%s: none of the selected probes starts a server", flag)
	}
	return nil
}

// runBench measures the plan, storing each run as it finishes.
func runBench(ctx context.Context, e *env, plan *bench.Plan, opt bench.Options, st *store.Store, w io.Writer, commit func() error, format string) error {
	fs, err := hostfs.New("/")
	if err != nil {
		return clierr.Runtimef("", "reading the host: %v", err)
	}
	snap, err := snapshot.Collect(fs, snapshot.Options{})
	if err != nil {
		return clierr.Runtimef("", "snapshot: %v", err)
	}
	opt.Host = bench.Host{Name: snap.Host.Hostname, MachineID: snap.Host.MachineID, BootID: snap.Host.BootID, SnapshotID: snap.ID}
	if sm, err := monitor.New(fs); err == nil {
		opt.Monitor = sm
	} else {
		fmt.Fprintf(e.stderr, "note: no monitor series: %v\n", err)
	}
	opt.Progress = bench.NewProgress(e.stderr, termfmt.IsTTY(e.stderr))
	stored := 0
	opt.OnRun = func(r *run.Run) error {
		if st == nil {
			return nil
		}
		// Saving must outlive Ctrl-C: the context is already cancelled
		// when the partial run arrives here.
		if err := st.SaveRun(context.WithoutCancel(ctx), r, snap); err != nil {
			return clierr.Runtimef("the measurements were not stored", "storing run %s: %v", r.ID, err)
		}
		stored++
		return nil
	}
	runs, runErr := bench.Run(ctx, plan.Items, opt)
	if len(runs) > 0 {
		if err := writeBenchReport(w, runs, format, termfmt.Style{On: format == "text" && w == e.stdout && termfmt.ColorEnabled(e.stdout)}); err != nil {
			return clierr.Runtimef("", "writing the report: %v", err)
		}
		if err := commit(); err != nil {
			return clierr.Runtimef("check that the directory is writable", "%v", err)
		}
	}
	if st != nil && stored > 0 {
		fmt.Fprintf(e.stderr, "stored %d run(s) in %s%s\n", stored, st.Path, benchLabelNote(opt.Label))
	}
	if errors.Is(runErr, bench.ErrInterrupted) {
		ids := make([]string, 0, len(runs))
		for _, r := range runs {
			if !r.Complete {
				ids = append(ids, runShortID(r.ID))
			}
		}
		hint := "nothing was measured"
		if len(ids) > 0 && st != nil {
			hint = "partial run " + strings.Join(ids, ", ") + " stored, marked incomplete"
		}
		return clierr.Runtimef(hint, "interrupted")
	}
	return runErr
}

func benchLabelNote(l string) string {
	if l == "" {
		return " (no --label)"
	}
	return " under label " + l
}

// writeBenchReport prints each run's metrics: median ± CI half-width, n,
// CV and why it stopped. Text and md print a note that every run of the
// session carries once, after the runs (bench.SessionNotes); JSON keeps
// every run's notes with the run, for scripts.
func writeBenchReport(w io.Writer, runs []*run.Run, format string, st termfmt.Style) error {
	common, own := bench.SessionNotes(runs)
	switch format {
	case "json":
		out := make([]bench.RunReport, 0, len(runs))
		for _, r := range runs {
			out = append(out, bench.Report(r))
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	case "md":
		fmt.Fprintln(w, "| probe | metric | median ± 95% CI | ±% | n | CV | stop |")
		fmt.Fprintln(w, "|---|---|---|---|---|---|---|")
		for _, r := range runs {
			for _, m := range bench.Summarize(r) {
				fmt.Fprintf(w, "| %s | %s | %s | %s | %d | %s | %s |\n", r.Probe, m.Name, m.Measured(), benchRelText(m), m.N, benchCVText(m), r.Stop)
			}
		}
		writeNotesMD(w, runs, common, own)
		return nil
	}
	for i, r := range runs {
		if i > 0 {
			fmt.Fprintln(w)
		}
		writeRunText(w, r, own[i], st)
	}
	if len(common) > 0 {
		fmt.Fprintln(w)
		fmt.Fprintln(w, st.Bold("for every run:"))
		for _, n := range common {
			fmt.Fprintln(w, "  note: "+n)
		}
	}
	return nil
}

// writeNotesMD lists the notes under the md table: each run's own, then
// the ones every run has.
func writeNotesMD(w io.Writer, runs []*run.Run, common []string, own [][]string) {
	var lines []string
	for i, r := range runs {
		for _, n := range own[i] {
			lines = append(lines, fmt.Sprintf("- %s (run %s): %s", mdText(r.Probe), runShortID(r.ID), mdText(n)))
		}
	}
	if len(lines) > 0 {
		fmt.Fprintf(w, "\nNotes:\n\n%s\n", strings.Join(lines, "\n"))
	}
	if len(common) > 0 {
		fmt.Fprint(w, "\nFor every run:\n\n")
		for _, n := range common {
			fmt.Fprintln(w, "- "+mdText(n))
		}
	}
}

// mdText escapes what Markdown would otherwise read as markup in a note
// (commands with globs, paths with underscores, <placeholders>).
var mdText = strings.NewReplacer(`\`, `\\`, "*", `\*`, "_", `\_`, "`", "\\`", "[", `\[`, "]", `\]`, "<", "&lt;", ">", "&gt;", "\n", " ").Replace

// writeRunText is the text block of one run with the notes to print under
// it (shared with 'runs show', which passes all of the run's).
func writeRunText(w io.Writer, r *run.Run, notes []string, st termfmt.Style) {
	head := fmt.Sprintf("%s  run %s  %s", st.Bold(r.Probe), runShortID(r.ID), benchSeconds(r.Ended.Sub(r.Started)))
	if r.CPUs != "" {
		head += "  cpus " + r.CPUs
	}
	fmt.Fprintln(w, head)
	stop := bench.StopText(r)
	switch r.Stop {
	case run.StopPrecision, run.StopFixed:
		stop = st.Green(stop)
	case run.StopFailed, run.StopInterrupted:
		stop = st.Red(stop)
	default:
		stop = st.Yellow(stop)
	}
	fmt.Fprintln(w, "  stop: "+stop)
	sums := bench.Summarize(r)
	width := 0
	for _, m := range sums {
		width = max(width, len(m.Name))
	}
	for _, m := range sums {
		fmt.Fprintf(w, "  %-*s  %-32s %8s  n=%-3d cv %s\n", width, m.Name, m.Measured(), benchRelText(m), m.N, benchCVText(m))
	}
	for _, n := range notes {
		fmt.Fprintln(w, "  note: "+n)
	}
}

func benchRelText(m bench.MetricSummary) string {
	if m.Rel == nil {
		return "—"
	}
	return fmt.Sprintf("±%.2f%%", 100**m.Rel)
}

func benchCVText(m bench.MetricSummary) string {
	if m.CV == nil {
		return "—"
	}
	return fmt.Sprintf("%.2f%%", 100**m.CV)
}

func benchSeconds(d time.Duration) string {
	return fmt.Sprintf("%.1fs", d.Seconds())
}

func runShortID(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}

func newBenchListCmd(e *env) *cobra.Command {
	var out outputFlags
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List suites and probes with what they measure and their parameters",
		Example: `  perflab bench list
  perflab bench list --format json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := out.validate(); err != nil {
				return err
			}
			w, commit, err := out.open(e.stdout)
			if err != nil {
				return err
			}
			cat := probeCatalog()
			if out.format == "json" {
				type jitem struct {
					Probe, Fallback string
					Params          map[string]string `json:",omitempty"`
					Budget          string
					Measures        string
				}
				type jsuite struct {
					Name, Doc string
					Items     []jitem
				}
				type jprobe struct {
					Name, Doc string
					Defaults  map[string]string
					Quick     map[string]string
				}
				var doc struct {
					Suites []jsuite
					Probes []jprobe
				}
				for _, s := range bench.Suites {
					js := jsuite{Name: s.Name, Doc: s.Doc}
					for _, it := range s.Items {
						js.Items = append(js.Items, jitem{it.Probe, it.Fallback, it.Params, it.Budget.String(), it.Measures})
					}
					doc.Suites = append(doc.Suites, js)
				}
				for _, p := range cat.Probes() {
					doc.Probes = append(doc.Probes, jprobe{p.Name(), p.Doc(), p.Defaults(false), p.Defaults(true)})
				}
				enc := json.NewEncoder(w)
				enc.SetIndent("", "  ")
				if err := enc.Encode(doc); err != nil {
					return err
				}
				return commit()
			}
			st := termfmt.Style{On: out.output == "" && termfmt.ColorEnabled(e.stdout)}
			fmt.Fprintln(w, st.Bold("Suites"))
			for _, s := range bench.Suites {
				var total time.Duration
				var names []string
				for _, it := range s.Items {
					total += it.Budget
					n := it.Probe
					if _, ok := cat.Probe(it.Probe); !ok {
						if it.Fallback != "" {
							n = it.Fallback + " (for " + it.Probe + ")"
						} else {
							n = it.Probe + " (not in this build)"
						}
					}
					names = append(names, n)
				}
				fmt.Fprintf(w, "  %-9s ≤ %s  %s\n", s.Name, total, s.Doc)
				fmt.Fprintf(w, "  %-9s %s\n", "", st.Dim(strings.Join(names, ", ")))
			}
			fmt.Fprintln(w)
			fmt.Fprintln(w, st.Bold("Probes"))
			for _, p := range cat.Probes() {
				fmt.Fprintf(w, "  %s\n", st.Bold(p.Name()))
				fmt.Fprintf(w, "    %s\n", p.Doc())
				fmt.Fprintf(w, "    parameters: %s\n", p.Defaults(false))
				if q := p.Defaults(true).String(); q != p.Defaults(false).String() {
					fmt.Fprintf(w, "    in quick:   %s\n", q)
				}
			}
			return commit()
		},
	}
	out.register(cmd, "text", "text", "json")
	return cmd
}
