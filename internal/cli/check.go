package cli

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/perflab/perflab/internal/audit"
	"github.com/perflab/perflab/internal/bench"
	"github.com/perflab/perflab/internal/check"
	"github.com/perflab/perflab/internal/clierr"
	"github.com/perflab/perflab/internal/report"
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
	f.register(cmd)
	return cmd
}

func (f *checkFlags) register(cmd *cobra.Command) {
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
	completeWith(cmd, "format", f.out.allowed...)
	completeWith(cmd, "fail-on", "none", "info", "low", "medium", "high", "critical")
	_ = cmd.RegisterFlagCompletionFunc("workload", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return audit.WorkloadNames(), cobra.ShellCompDirectiveDefault
	})
	var suites []string
	for _, s := range bench.Suites {
		suites = append(suites, s.Name)
	}
	completeWith(cmd, "suite", suites...)
}

// completeWith completes flag with a fixed list of words.
func completeWith(cmd *cobra.Command, flag string, words ...string) {
	_ = cmd.RegisterFlagCompletionFunc(flag, func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return words, cobra.ShellCompDirectiveNoFileComp
	})
}

// checkFlagNames words bench.Options fields as check's flags.
var checkFlagNames = map[string]string{"MaxRuns": "--max-runs", "Budget": "--budget", "Dir": "--dir", "MinRuns": "the minimum of", "Params": "--param"}

// validate checks the flags that need no host: the output, --fail-on,
// --label, and that the bench flags make sense with --no-bench.
func (f *checkFlags) validate(changed func(string) bool) (audit.Severity, bool, error) {
	if err := f.out.validate(); err != nil {
		return 0, false, err
	}
	threshold, failOn, err := parseFailOn(f.failOn)
	if err != nil {
		return 0, false, err
	}
	if f.html == "-" {
		return 0, false, clierr.Usagef("use --format html to print the page on standard output", "-o - would mix the HTML report with the summary")
	}
	if err := checkOutputPath(f.html); err != nil {
		return 0, false, err
	}
	if strings.TrimSpace(f.label) == "" {
		return 0, false, clierr.Usagef("e.g. --label check", "--label must not be empty")
	}
	for _, n := range []string{"suite", "param", "budget", "max-runs", "dir"} {
		if f.noBench && changed(n) {
			return 0, false, clierr.Usagef("drop --"+n+" or --no-bench", "--%s has no effect with --no-bench", n)
		}
	}
	lim := bench.Options{Precision: bench.DefaultPrecision, MinRuns: bench.DefaultMinRuns, Budget: bench.DefaultBudget}
	if changed("budget") {
		lim.Budget = f.budget
	}
	if changed("max-runs") {
		lim.MaxRuns = f.maxRuns
	}
	return threshold, failOn, optionErr(lim.Validate(), checkFlagNames)
}

// benchOptions plans the suite and sets the harness options of a check.
func (f *checkFlags) benchOptions(e *env, opt *check.Options) error {
	names := splitList(f.suite)
	if len(names) == 0 {
		return clierr.Usagef("e.g. --suite quick; see 'perflab bench list'", "--suite must name a suite or probes")
	}
	plan, err := resolvePlan(e, names, f.params)
	if err != nil {
		return optionErr(err, checkFlagNames)
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
		if err := bench.CheckDir(f.dir); err != nil {
			return optionErr(err, checkFlagNames)
		}
	}
	opt.Items, opt.Suite = plan.Items, plan.Suite
	opt.Bench = bench.Options{Precision: bench.DefaultPrecision, MinRuns: bench.DefaultMinRuns, MaxRuns: bench.DefaultMaxRuns,
		Budget: bench.DefaultBudget, Warmup: bench.DefaultWarmup, Dir: f.dir, Log: io.Discard,
		Progress: bench.NewProgress(e.stderr, termfmt.IsTTY(e.stderr))}
	if err := bench.Validate(plan.Items, opt.Bench); err != nil {
		return optionErr(err, checkFlagNames)
	}
	for _, n := range plan.Notes {
		fmt.Fprintln(e.stderr, "note: "+n)
	}
	return nil
}

func runCheck(cmd *cobra.Command, e *env, f *checkFlags) error {
	threshold, failOn, err := f.validate(cmd.Flags().Changed)
	if err != nil {
		return err
	}
	w, err := resolveWorkload(f.workload)
	if err != nil {
		return err
	}
	w.Trusted = w.Trusted || f.trusted
	fs, err := openRoot("/")
	if err != nil {
		return err
	}
	opt := check.Options{FS: fs, Workload: w, Source: "live", Version: Version, Label: f.label}
	if !f.noBench {
		if err := f.benchOptions(e, &opt); err != nil {
			return err
		}
		// Open the store before measuring: a database this perflab
		// cannot write must fail now, not after a minute.
		if opt.Store, err = openStore(f.db); err != nil {
			return err
		}
		defer opt.Store.Close()
		fmt.Fprintf(e.stderr, "perflab check: auditing for %s, then measuring %d probe(s)%s (Ctrl-C stops cleanly)\n",
			w.Label(), len(opt.Items), budgetWords(opt.Items))
	}
	res, err := check.Run(cmd.Context(), opt)
	if err != nil {
		if res == nil {
			return clierr.Runtimef("", "%v", err)
		}
		return clierr.Runtimef("the runs measured so far may be incomplete in the database", "%v", err)
	}
	if opt.Store != nil && res.Stored > 0 {
		fmt.Fprintf(e.stderr, "stored %d run(s) in %s under label %s\n", res.Stored, opt.Store.Path, f.label)
	}
	doc := report.NewCheckDoc(res, Version, f.label, opt.Suite)
	if err := f.writeReports(e, doc); err != nil {
		return err
	}
	return checkExit(res, failOn, threshold)
}

// writeReports writes the HTML report (unless -o ”) and the summary.
func (f *checkFlags) writeReports(e *env, doc *report.CheckDoc) error {
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
	return nil
}

// checkExit is the check's exit: interrupted or nothing measured is a
// runtime error, findings at --fail-on fail the check.
func checkExit(res *check.Result, failOn bool, threshold audit.Severity) error {
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
	st := termfmt.Style{On: format == report.FormatText && termfmt.ColorEnabled(e.stdout)}
	return report.Write(e.stdout, doc, format, report.Options{Style: st})
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
