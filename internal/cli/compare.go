package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/perflab/perflab/internal/bench"
	"github.com/perflab/perflab/internal/clierr"
	"github.com/perflab/perflab/internal/compare"
	"github.com/perflab/perflab/internal/report"
	"github.com/perflab/perflab/internal/store"
	"github.com/perflab/perflab/internal/termfmt"
	"github.com/spf13/cobra"
)

type compareFlags struct {
	out         outputFlags
	db          string
	alpha       float64
	margin      float64
	failOnWorse bool
	noHistory   bool
}

func newCompareCmd(e *env) *cobra.Command {
	var f compareFlags
	cmd := &cobra.Command{
		Use:   "compare A B [C …]",
		Short: "Compare runs with sound statistics and explain the difference",
		Long: `compare joins the runs named by each argument (a run id or unique prefix,
a label meaning all runs with it, a file exported by 'perflab runs export',
or a file of Go benchmark output as benchstat reads) and compares every
metric of the later sides with the first: medians with exact 95% intervals,
the Mann–Whitney test Holm-adjusted across all metrics, the Hodges–Lehmann
shift as Δ with its interval, and a TOST equivalence check.

The report leads with the likely causes: the host settings and monitor
series that differ between the sides, ranked by whether the metrics they
are known to move actually moved. docs/compare.md documents verdicts and
the JSON schema; docs/statistics.md the statistics.`,
		Example: `  perflab compare before after                  # two labels from the run database
  perflab compare 3f2a91 7be004 --format html -o ab.html
  perflab compare old.txt new.txt               # go test -bench output, like benchstat
  perflab compare nodeA.json nodeB.json --fail-on-regression   # exit 1 on a significant regression`,
		Args: cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error { return runCompare(cmd.Context(), e, &f, args) },
	}
	f.out.register(cmd, "text", "text", "md", "json", "html")
	fl := cmd.Flags()
	fl.StringVar(&f.db, "db", "", "run database for run ids and labels (default $XDG_DATA_HOME/perflab/perflab.db)")
	fl.Float64Var(&f.alpha, "alpha", 0.05, "family-wise significance level (Holm–Bonferroni over all metrics)")
	fl.Float64Var(&f.margin, "margin", 0.02, "equivalence margin: results within ±this fraction are reported as ~=")
	fl.BoolVar(&f.failOnWorse, "fail-on-regression", false, "exit 1 when any metric is significantly worse than the first side")
	fl.BoolVar(&f.noHistory, "no-history", false, "do not use earlier runs of the same probes on the same hosts for the A/A noise floor")
	return cmd
}

func runCompare(ctx context.Context, e *env, f *compareFlags, args []string) error {
	if err := f.out.validate(); err != nil {
		return err
	}
	if !(f.alpha > 0 && f.alpha < 0.5) {
		return clierr.Usagef("use a level such as 0.05", "--alpha %v is not between 0 and 0.5", f.alpha)
	}
	if !(f.margin > 0 && f.margin < 1) {
		return clierr.Usagef("use a fraction such as 0.02 for ±2%", "--margin %v is not between 0 and 1", f.margin)
	}
	src := newSources(f.db)
	defer src.Close()
	sides, err := src.Sides(ctx, args)
	if err != nil {
		return sideErr(err)
	}
	opt := compare.Options{Alpha: f.alpha, Margin: f.margin, RowRank: bench.RowRank}
	if !f.noHistory {
		opt.History = src.History(ctx, sides)
	}
	c, err := compare.Compare(sides, opt)
	if err != nil {
		return clierr.Usagef("compare runs of the same probes, measured in the same units", "%v", err)
	}
	if err := renderComparison(e, &f.out, c); err != nil {
		return err
	}
	if f.failOnWorse {
		return regressionErr(c)
	}
	return nil
}

// regressionErr fails the command when a later side is worse in any metric.
func regressionErr(c *compare.Comparison) error {
	var worse []string
	for _, p := range c.Pairs {
		if n := p.Counts[compare.Worse]; n > 0 {
			worse = append(worse, fmt.Sprintf("%s: %d metric(s) significantly worse than %s", c.Sides[p.Other].Name, n, c.Sides[0].Name))
		}
	}
	if len(worse) > 0 {
		return clierr.CheckFailed("regression: " + strings.Join(worse, "; "))
	}
	return nil
}

// renderComparison writes c in the chosen format, atomically with -o.
func renderComparison(e *env, out *outputFlags, c *compare.Comparison) error {
	w, commit, err := out.open(e.stdout)
	if err != nil {
		return err
	}
	st := termfmt.Style{On: out.format == report.FormatText && termfmt.ColorEnabled(w)}
	if err := report.Write(w, c, out.format, report.Options{Style: st}); err != nil {
		if cw, ok := w.(*cleanupWriter); ok {
			cw.f.Close()
			os.Remove(cw.f.Name())
		}
		return clierr.Runtimef("", "write report: %v", err)
	}
	if err := commit(); err != nil {
		return clierr.Runtimef("check free space and permissions", "%v", err)
	}
	return nil
}

// newSources resolves compare and report arguments; the database is
// opened read-only, since they only read runs.
func newSources(db string) *compare.Sources {
	return &compare.Sources{Open: func() (*store.Store, error) { return store.OpenReadOnly(db) }}
}

// sideErr words an argument that names no runs, with its exit code.
func sideErr(err error) error {
	var se *compare.SideError
	if !errors.As(err, &se) {
		return err
	}
	const fileHint = "give a file from 'perflab runs export' or 'go test -bench'"
	switch se.Kind {
	case compare.NoSuchFile:
		return clierr.Usagef("check the path", "%s", se.Msg)
	case compare.NoDatabase:
		return clierr.Usagef("store runs with 'perflab bench' first, or check --db; 'perflab runs list' shows what is stored", "%s", se.Msg)
	case compare.OpenFailed:
		return storeOpenErr(se.Err)
	case compare.UnknownName:
		return clierr.Usagef("see 'perflab runs list'", "%s", se.Msg)
	case compare.AmbiguousID, compare.NoRunsInFile:
		return clierr.Usagef("", "%s", se.Msg)
	case compare.EmptyFile, compare.NotRunFile:
		return clierr.Usagef(fileHint, "%s", se.Msg)
	case compare.BadExport:
		return exportErr(se.Arg, se.Err, fileHint)
	}
	return clierr.Runtimef("", "%s", se.Msg)
}
