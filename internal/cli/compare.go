package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/perflab/perflab/internal/bench"
	"github.com/perflab/perflab/internal/clierr"
	"github.com/perflab/perflab/internal/compare"
	"github.com/perflab/perflab/internal/report"
	"github.com/perflab/perflab/internal/run"
	"github.com/perflab/perflab/internal/snapshot"
	"github.com/perflab/perflab/internal/store"
	"github.com/perflab/perflab/internal/termfmt"
	"github.com/spf13/cobra"
)

func newCompareCmd(e *env) *cobra.Command {
	var (
		out         outputFlags
		db          string
		alpha       float64
		margin      float64
		failOnWorse bool
		noHistory   bool
	)
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
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := out.validate(); err != nil {
				return err
			}
			if !(alpha > 0 && alpha < 0.5) {
				return clierr.Usagef("use a level such as 0.05", "--alpha %v is not between 0 and 0.5", alpha)
			}
			if !(margin > 0 && margin < 1) {
				return clierr.Usagef("use a fraction such as 0.02 for ±2%", "--margin %v is not between 0 and 1", margin)
			}
			src := &sources{db: db}
			defer src.close()
			sides, err := src.sides(cmd.Context(), args)
			if err != nil {
				return err
			}
			opt := compare.Options{Alpha: alpha, Margin: margin, RowRank: bench.RowRank}
			if !noHistory {
				opt.History = src.history(cmd.Context(), sides)
			}
			c, err := compare.Compare(sides, opt)
			if err != nil {
				return clierr.Usagef("compare runs of the same probes, measured in the same units", "%v", err)
			}
			if err := renderComparison(e, &out, c); err != nil {
				return err
			}
			if failOnWorse {
				var worse []string
				for _, p := range c.Pairs {
					if n := p.Counts[compare.Worse]; n > 0 {
						worse = append(worse, fmt.Sprintf("%s: %d metric(s) significantly worse than %s", c.Sides[p.Other].Name, n, c.Sides[0].Name))
					}
				}
				if len(worse) > 0 {
					return clierr.CheckFailed("regression: " + strings.Join(worse, "; "))
				}
			}
			return nil
		},
	}
	out.register(cmd, "text", "text", "md", "json", "html")
	f := cmd.Flags()
	f.StringVar(&db, "db", "", "run database for run ids and labels (default $XDG_DATA_HOME/perflab/perflab.db)")
	f.Float64Var(&alpha, "alpha", 0.05, "family-wise significance level (Holm–Bonferroni over all metrics)")
	f.Float64Var(&margin, "margin", 0.02, "equivalence margin: results within ±this fraction are reported as ~=")
	f.BoolVar(&failOnWorse, "fail-on-regression", false, "exit 1 when any metric is significantly worse than the first side")
	f.BoolVar(&noHistory, "no-history", false, "do not use earlier runs of the same probes on the same hosts for the A/A noise floor")
	return cmd
}

// renderComparison writes c in the chosen format, atomically with -o.
func renderComparison(e *env, out *outputFlags, c *compare.Comparison) error {
	w, commit, err := out.open(e.stdout)
	if err != nil {
		return err
	}
	switch out.format {
	case "md":
		err = report.Markdown(w, c)
	case "json":
		err = report.JSON(w, c)
	case "html":
		err = report.HTML(w, c)
	default:
		err = report.Text(w, c, termfmt.Style{On: termfmt.ColorEnabled(w)})
	}
	if err != nil {
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

// sources resolves command-line arguments to runs: files first (an export
// or Go benchmark output), then the run database, opened only when an
// argument needs it.
type sources struct {
	db string
	st *store.Store
}

func (s *sources) close() {
	if s.st != nil {
		s.st.Close()
	}
}

// store opens the database read-only: compare and report only read runs,
// so they work on a database this user may not write.
func (s *sources) store() (*store.Store, error) {
	if s.st == nil {
		st, err := openStoreReadOnly(s.db)
		if err != nil {
			return nil, err
		}
		s.st = st
	}
	return s.st, nil
}

func (s *sources) sides(ctx context.Context, args []string) ([]compare.Side, error) {
	var out []compare.Side
	for _, a := range args {
		side, err := s.side(ctx, a)
		if err != nil {
			return nil, err
		}
		out = append(out, side)
	}
	return out, nil
}

// side resolves one argument. A path that exists is read as a file; other
// arguments are looked up in the database as a label (all its runs) and
// then as a run id or unique id prefix.
func (s *sources) side(ctx context.Context, arg string) (compare.Side, error) {
	side := compare.Side{Name: arg, Snapshots: map[string]*snapshot.Snapshot{}}
	if fi, err := os.Stat(arg); err == nil && !fi.IsDir() {
		return readSideFile(arg)
	}
	if looksLikeFile(arg) {
		return side, clierr.Usagef("check the path", "%s: no such file", arg)
	}
	st, err := s.store()
	if errors.Is(err, store.ErrNoDatabase) {
		return side, clierr.Usagef("store runs with 'perflab bench' first, or check --db; 'perflab runs list' shows what is stored",
			"%q is neither a file, a label nor a run id, and %v", arg, errors.Unwrap(err))
	}
	if err != nil {
		return side, err
	}
	runs, err := st.Runs(ctx, store.Filter{Label: arg})
	if err != nil {
		return side, clierr.Runtimef("", "read runs: %v", err)
	}
	if len(runs) == 0 {
		r, err := st.Run(ctx, arg)
		switch {
		case errors.Is(err, store.ErrNotFound):
			return side, clierr.Usagef("see 'perflab runs list'", "%q is neither a file, a label nor a run id in %s", arg, st.Path)
		case errors.Is(err, store.ErrAmbiguous):
			return side, clierr.Usagef("", "%v", err)
		case err != nil:
			return side, clierr.Runtimef("", "read run %s: %v", arg, err)
		}
		runs = []*run.Run{r}
	}
	side.Runs = runs
	for _, r := range runs {
		if r.SnapshotID == "" || side.Snapshots[r.SnapshotID] != nil {
			continue
		}
		snap, err := st.Snapshot(ctx, r.SnapshotID)
		if err != nil {
			// A run without its snapshot can still be compared; only the
			// explanation is poorer.
			continue
		}
		side.Snapshots[r.SnapshotID] = snap
	}
	return side, nil
}

func looksLikeFile(arg string) bool {
	return strings.ContainsRune(arg, os.PathSeparator) || strings.HasSuffix(arg, ".json") || strings.HasSuffix(arg, ".txt")
}

// readSideFile reads a run export (JSON) or Go benchmark output (text),
// telling them apart by the first non-blank byte.
func readSideFile(path string) (compare.Side, error) {
	side := compare.Side{Name: path, Snapshots: map[string]*snapshot.Snapshot{}}
	f, err := os.Open(path)
	if err != nil {
		return side, clierr.Runtimef("", "%v", err)
	}
	defer f.Close()
	br := bufio.NewReader(f)
	first, err := firstByte(br)
	if err != nil {
		return side, clierr.Usagef("give a file from 'perflab runs export' or 'go test -bench'", "%s is empty", path)
	}
	if first == '{' {
		ex, err := run.ReadExport(br)
		if err != nil {
			return side, exportErr(path, err, "give a file from 'perflab runs export' or 'go test -bench'")
		}
		if len(ex.Runs) == 0 {
			return side, clierr.Usagef("", "%s: the export holds no runs", path)
		}
		side.Runs, side.Snapshots = ex.Runs, ex.Snapshots
		return side, nil
	}
	runs, err := compare.ReadGoBench(br, path)
	if err != nil {
		if errors.Is(err, compare.ErrNotGoBench) {
			return side, clierr.Usagef("give a file from 'perflab runs export' or 'go test -bench'", "%s is neither a perflab run export nor Go benchmark output", path)
		}
		return side, clierr.Runtimef("", "%v", err)
	}
	side.Runs = runs
	return side, nil
}

func firstByte(br *bufio.Reader) (byte, error) {
	for {
		b, err := br.ReadByte()
		if err != nil {
			return 0, err
		}
		if b != ' ' && b != '\t' && b != '\n' && b != '\r' {
			return b, br.UnreadByte()
		}
	}
}

// history loads earlier runs of the sides' probes on the sides' hosts for
// the A/A noise floor. It only uses a database that an argument already
// opened, and it is best effort: without history there is no noise floor.
func (s *sources) history(ctx context.Context, sides []compare.Side) []*run.Run {
	if s.st == nil {
		return nil
	}
	type ph struct{ probe, host string }
	seen := map[ph]bool{}
	var keys []ph
	for _, sd := range sides {
		for _, r := range sd.Runs {
			k := ph{r.Probe, r.Host}
			if !seen[k] {
				seen[k] = true
				keys = append(keys, k)
			}
		}
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].probe+keys[i].host < keys[j].probe+keys[j].host })
	var out []*run.Run
	for _, k := range keys {
		runs, err := s.st.Runs(ctx, store.Filter{Probe: k.probe, Host: k.host, Limit: 20})
		if err != nil {
			return out
		}
		out = append(out, runs...)
	}
	return out
}
