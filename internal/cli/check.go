package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/perflab/perflab/internal/audit"
	"github.com/perflab/perflab/internal/bench"
	"github.com/perflab/perflab/internal/check"
	"github.com/perflab/perflab/internal/clierr"
	"github.com/perflab/perflab/internal/report"
	"github.com/perflab/perflab/internal/store"
	"github.com/perflab/perflab/internal/termfmt"
	"github.com/spf13/cobra"
)

// DefaultCheckReport is where 'perflab check' writes its HTML report.
const DefaultCheckReport = "perflab-report.html"

type checkFlags struct {
	workload, failOn, db, label, suite, html, dir string
	trusted, noBench                              bool
	params                                        []string
	budget                                        time.Duration
	maxRuns                                       int
	out                                           outputFlags
}

func newCheckCmd(e *env) *cobra.Command {
	var f checkFlags
	cmd := &cobra.Command{
		Use:   "check",
		Short: "Audit this host, measure it and write one HTML report (the command to start with)",
		Long: `check is the one command to start with. It takes a snapshot of this host,
audits it for --workload, runs the quick bench suite (about 70 seconds; skip
it with --no-bench), stores the runs under --label (default check) and
writes one self-contained HTML report (-o, default ./` + DefaultCheckReport + `)
that puts the findings next to the measurements.

When the run database holds an earlier check of this machine (same machine
id, label and suite), this check is compared with the newest one, and the
report says what changed, with the host settings and activity most likely
to explain it.

The terminal gets a summary (--format text|md|json|html): failing findings
by severity with the fixes of the top few, each metric's median with its
95% interval, and the likely causes of any change. The HTML file is written
whatever --format says; -o '' writes none.

Exit codes: 0 nothing fails at or above --fail-on (default none: never
fail), 1 something does, 2 bad flags, 3 runtime error (also when Ctrl-C
interrupted the measurements: what was measured is stored and reported).`,
		Example: `  perflab check                                  # audit + quick bench, ./perflab-report.html
  perflab check -o report.html                   # the README's first command
  perflab check --workload web --fail-on high    # cron/CI: exit 1 on a high or critical finding
  perflab check --no-bench --format md           # audit only, a ticket-ready summary in seconds
  perflab check --suite memory --label nightly   # another suite, compared with the last nightly check`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runCheck(cmd, e, &f) },
	}
	fl := cmd.Flags()
	fl.StringVarP(&f.workload, "workload", "w", "general", audit.WorkloadFlagHelp())
	fl.BoolVar(&f.trusted, "trusted", false, "the host is single-tenant and runs only trusted code (judge mitigations and audit as performance costs)")
	fl.StringVarP(&f.html, "output", "o", DefaultCheckReport, "write the HTML report to FILE ('' for none)")
	f.out.allowed = []string{"text", "html", "md", "json"}
	fl.StringVar(&f.out.format, "format", "text", "terminal summary format: "+strings.Join(f.out.allowed, "|"))
	fl.StringVar(&f.db, "db", "", "run database (default $XDG_DATA_HOME/perflab/perflab.db)")
	fl.StringVar(&f.label, "label", check.DefaultLabel, "label the runs, and compare with the previous check under this label")
	fl.BoolVar(&f.noBench, "no-bench", false, "audit only: no measurements, nothing stored (seconds instead of a minute)")
	fl.StringVar(&f.suite, "suite", "quick", "bench suite, or probes separated by commas (see 'perflab bench list')")
	fl.StringVar(&f.failOn, "fail-on", "none", "exit 1 when a finding fails at or above this severity: none|info|low|medium|high|critical")
	fl.StringVar(&f.dir, "dir", "", "directory for scratch files (the disk probe tests its filesystem; default $TMPDIR)")
	// Expert knobs, shared with 'perflab bench'; hidden to keep the
	// newcomer's help short (docs/check.md lists them).
	fl.StringArrayVar(&f.params, "param", nil, "probe parameter key=value or PROBE:key=value (repeatable)")
	fl.DurationVar(&f.budget, "budget", 0, "time budget per probe (default: the suite's)")
	fl.IntVar(&f.maxRuns, "max-runs", 0, "at most this many measured repetitions per probe (default: the suite's)")
	for _, n := range []string{"param", "budget", "max-runs"} {
		_ = fl.MarkHidden(n)
	}
	_ = cmd.RegisterFlagCompletionFunc("format", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return f.out.allowed, cobra.ShellCompDirectiveNoFileComp
	})
	_ = cmd.RegisterFlagCompletionFunc("workload", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return audit.WorkloadNames(), cobra.ShellCompDirectiveDefault
	})
	_ = cmd.RegisterFlagCompletionFunc("fail-on", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return []string{"none", "info", "low", "medium", "high", "critical"}, cobra.ShellCompDirectiveNoFileComp
	})
	_ = cmd.RegisterFlagCompletionFunc("suite", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		var names []string
		for _, s := range bench.Suites {
			names = append(names, s.Name)
		}
		return names, cobra.ShellCompDirectiveNoFileComp
	})
	return cmd
}

func runCheck(cmd *cobra.Command, e *env, f *checkFlags) error {
	if err := f.out.validate(); err != nil {
		return err
	}
	threshold, failOn, err := parseFailOn(f.failOn)
	if err != nil {
		return err
	}
	if f.html == "-" {
		return clierr.Usagef("use --format html to print the page on standard output", "-o - would mix the HTML report with the summary")
	}
	if err := checkOutputPath(f.html); err != nil {
		return err
	}
	if strings.TrimSpace(f.label) == "" {
		return clierr.Usagef("e.g. --label check", "--label must not be empty")
	}
	if f.noBench {
		for _, n := range []string{"suite", "param", "budget", "max-runs", "dir"} {
			if cmd.Flags().Changed(n) {
				return clierr.Usagef("drop --"+n+" or --no-bench", "--%s has no effect with --no-bench", n)
			}
		}
	}
	if cmd.Flags().Changed("budget") && f.budget <= 0 {
		return clierr.Usagef("e.g. --budget 10s", "--budget %s must be positive", f.budget)
	}
	if cmd.Flags().Changed("max-runs") && f.maxRuns < bench.DefaultMinRuns {
		return clierr.Usagef(fmt.Sprintf("use at least %d", bench.DefaultMinRuns), "--max-runs %d is below the %d repetitions a 95%% CI needs", f.maxRuns, bench.DefaultMinRuns)
	}
	w, err := resolveWorkload(f.workload)
	if err != nil {
		return err
	}
	if f.trusted {
		w.Trusted = true
	}
	fs, err := openRoot("/")
	if err != nil {
		return err
	}
	opt := check.Options{FS: fs, Workload: w, Source: "live", Version: Version, Label: f.label}

	var st *store.Store
	if !f.noBench {
		names := splitList(f.suite)
		if len(names) == 0 {
			return clierr.Usagef("e.g. --suite quick; see 'perflab bench list'", "--suite must name a suite or probes")
		}
		plan, err := probeCatalog().Resolve(names, f.params)
		if err != nil {
			return err
		}
		for i := range plan.Items {
			if f.budget > 0 {
				plan.Items[i].Budget = f.budget
			}
			if f.maxRuns > 0 {
				plan.Items[i].MaxRuns = f.maxRuns
			}
		}
		if f.dir != "" {
			if fi, err := os.Stat(f.dir); err != nil || !fi.IsDir() {
				return clierr.Usagef("create it or pick another --dir", "--dir %s is not a directory", f.dir)
			}
		}
		opt.Items, opt.Suite = plan.Items, plan.Suite
		opt.Bench = bench.Options{Precision: bench.DefaultPrecision, MinRuns: bench.DefaultMinRuns, MaxRuns: bench.DefaultMaxRuns,
			Budget: bench.DefaultBudget, Warmup: bench.DefaultWarmup, Dir: f.dir, Log: io.Discard,
			Progress: bench.NewProgress(e.stderr, termfmt.IsTTY(e.stderr))}
		if err := bench.Validate(plan.Items, opt.Bench); err != nil {
			return err
		}
		// Open the store before measuring: a database this perflab cannot
		// write must fail now, not after a minute.
		if st, err = openStore(f.db); err != nil {
			return err
		}
		defer st.Close()
		opt.Store = st
		for _, n := range plan.Notes {
			fmt.Fprintln(e.stderr, "note: "+n)
		}
		fmt.Fprintf(e.stderr, "perflab check: auditing for %s, then measuring %d probe(s)%s (Ctrl-C stops cleanly)\n",
			w.Label(), len(plan.Items), budgetWords(plan.Items))
	}

	res, err := check.Run(cmd.Context(), opt)
	if err != nil {
		if res == nil {
			return clierr.Runtimef("", "%v", err)
		}
		return clierr.Runtimef("the runs measured so far may be incomplete in the database", "%v", err)
	}
	doc := &report.CheckDoc{Perflab: Version, Host: res.Snapshot.Host.Hostname, TakenAt: res.Snapshot.TakenAt,
		Label: f.label, Suite: opt.Suite, Audit: res.Audit, Comparison: res.Comparison, Notes: res.Notes}
	if res.Previous != nil && res.Comparison != nil && len(res.Comparison.Sides) == 2 {
		doc.Previous = &report.CheckPrevious{At: res.Previous.At, Runs: len(res.Previous.Runs), SnapshotID: res.Previous.SnapshotID}
	}
	if st != nil && res.Stored > 0 {
		fmt.Fprintf(e.stderr, "stored %d run(s) in %s under label %s\n", res.Stored, st.Path, f.label)
	}

	if f.html != "" {
		ho := outputFlags{output: f.html}
		if err := writeOut(&ho, e.stdout, func(w io.Writer) error { return report.CheckHTML(w, doc) }); err != nil {
			var ce *clierr.Error
			if errors.As(err, &ce) {
				return err
			}
			return clierr.Runtimef("check the -o path", "writing %s: %v", f.html, err)
		}
		if abs, err := filepath.Abs(f.html); err == nil {
			doc.HTMLPath = abs
		} else {
			doc.HTMLPath = f.html
		}
	}
	if err := writeCheckSummary(e, f.out.format, doc); err != nil {
		return clierr.Runtimef("", "writing the summary: %v", err)
	}

	if errors.Is(res.BenchErr, bench.ErrInterrupted) {
		return clierr.Runtimef("what was measured is stored, marked incomplete, and in the report", "interrupted")
	}
	if res.BenchErr != nil && res.Comparison == nil {
		var ce *clierr.Error
		if errors.As(res.BenchErr, &ce) && len(res.Runs) == 0 {
			return res.BenchErr
		}
		return clierr.Runtimef("see the notes above; 'perflab deps' lists missing tools", "no probe could measure: %v", res.BenchErr)
	}
	if failOn && audit.FailsAt(res.Audit.Findings, threshold) {
		worst, _ := audit.Worst(res.Audit.Findings)
		return clierr.CheckFailed(fmt.Sprintf("check: findings fail at %s (--fail-on %s)", worst, threshold))
	}
	return nil
}

func writeCheckSummary(e *env, format string, doc *report.CheckDoc) error {
	switch format {
	case "json":
		return report.CheckJSON(e.stdout, doc)
	case "md":
		return report.CheckMarkdown(e.stdout, doc)
	case "html":
		return report.CheckHTML(e.stdout, doc)
	}
	return report.CheckText(e.stdout, doc, termfmt.Style{On: termfmt.ColorEnabled(e.stdout)})
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// budgetWords is " (about 70s)": the sum of the items' budgets, an upper
// bound a newcomer can plan with.
func budgetWords(items []bench.Item) string {
	var total time.Duration
	for _, it := range items {
		if it.Budget <= 0 {
			total += bench.DefaultBudget
			continue
		}
		total += it.Budget
	}
	return fmt.Sprintf(", at most about %s", total.Round(time.Second))
}
