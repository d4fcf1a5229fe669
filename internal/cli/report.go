package cli

import (
	"context"
	"errors"
	"strings"

	"github.com/perflab/perflab/internal/clierr"
	"github.com/perflab/perflab/internal/compare"
	"github.com/perflab/perflab/internal/report"
	"github.com/perflab/perflab/internal/store"
	"github.com/spf13/cobra"
)

func newReportCmd(e *env) *cobra.Command {
	var (
		out outputFlags
		db  string
	)
	cmd := &cobra.Command{
		Use:   "report RUN|bisect:ID|search:ID",
		Short: "Render one run (or all runs with a label) as text, Markdown, JSON or HTML",
		Long: `report renders the runs named by RUN — a run id or unique prefix, a label,
an exported run file or Go benchmark output — the way compare renders a
comparison: each metric's median with its exact 95% interval, range and
CV, the curves (memory latency over working-set size) and sample strips in
HTML, and the run-to-run spread when the database holds repeated runs.
bisect:ID shows a stored bisection again, search:ID a stored tune search.`,
		Example: `  perflab report 3f2a91                      # one run from the database
  perflab report nightly --format html -o nightly.html
  perflab report bench.txt --format md        # go test -bench output
  perflab report bisect:3f2a --format html -o bisect.html
  perflab report search:9c1e --format md`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := out.validate(); err != nil {
				return err
			}
			if id, ok := strings.CutPrefix(args[0], "bisect:"); ok {
				return showBisect(cmd.Context(), e, &out, db, id)
			}
			if id, ok := strings.CutPrefix(args[0], "search:"); ok {
				return showSearch(cmd.Context(), e, &out, db, id)
			}
			src := newSources(db)
			defer src.Close()
			sides, err := src.Sides(cmd.Context(), args)
			if err != nil {
				return sideErr(err)
			}
			c, err := compare.Compare(sides, compare.Options{History: src.History(cmd.Context(), sides)})
			if err != nil {
				return clierr.Usagef("", "%v", err)
			}
			return renderComparison(e, &out, c)
		},
	}
	out.register(cmd, "text", "text", "md", "json", "html")
	cmd.Flags().StringVar(&db, "db", "", "run database (default $XDG_DATA_HOME/perflab/perflab.db)")
	return cmd
}

// showBisect renders a stored bisection.
func showBisect(ctx context.Context, e *env, out *outputFlags, db, id string) error {
	st, err := openStoreReadOnly(db)
	if err != nil {
		return err
	}
	defer st.Close()
	r, err := st.Report(ctx, "bisect", id)
	if errors.Is(err, store.ErrNotFound) {
		return clierr.Usagef("perflab bisect prints the id it stores a result under", "%v", err)
	}
	if err != nil {
		return clierr.Runtimef("", "%v", err)
	}
	res, err := report.DecodeBisect(r.Doc)
	if err != nil {
		return clierr.Runtimef("", "bisect %s: %v", r.ID, err)
	}
	return writeResult(out, e.stdout, res)
}
