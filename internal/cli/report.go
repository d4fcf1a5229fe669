package cli

import (
	"github.com/perflab/perflab/internal/clierr"
	"github.com/perflab/perflab/internal/compare"
	"github.com/spf13/cobra"
)

func newReportCmd(e *env) *cobra.Command {
	var (
		out outputFlags
		db  string
	)
	cmd := &cobra.Command{
		Use:   "report RUN",
		Short: "Render one run (or all runs with a label) as text, Markdown, JSON or HTML",
		Long: `report renders the runs named by RUN — a run id or unique prefix, a label,
an exported run file or Go benchmark output — the way compare renders a
comparison: each metric's median with its exact 95% interval, range and
CV, the curves (memory latency over working-set size) and sample strips in
HTML, and the run-to-run spread when the database holds repeated runs.`,
		Example: `  perflab report 3f2a91                      # one run from the database
  perflab report nightly --format html -o nightly.html
  perflab report bench.txt --format md        # go test -bench output`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := out.validate(); err != nil {
				return err
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
