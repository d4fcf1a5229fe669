package cli

import (
	"errors"

	"github.com/perflab/perflab/internal/changepoint"
	"github.com/perflab/perflab/internal/clierr"
	"github.com/perflab/perflab/internal/history"
	"github.com/perflab/perflab/internal/report"
	"github.com/perflab/perflab/internal/store"
	"github.com/spf13/cobra"
)

func newRunsHistoryCmd(e *env, db *string) *cobra.Command {
	var (
		out  outputFlags
		host string
		o    changepoint.Options
	)
	cmd := &cobra.Command{
		Use:   "history PROBE METRIC",
		Short: "A metric over time per host, with its change points and the settings that changed there",
		Long: `history shows one metric of one probe over the stored runs, oldest first,
one value per run (the median of its samples), as a sparkline per host and
parameter set. Change points are found with E-divisive means and a
permutation test (docs/statistics.md); each is annotated with the settings
that differ between the snapshots of the runs on either side of it.`,
		Example: `  perflab runs history cpu events_per_sec.t1
  perflab runs history memory.bandwidth copy.t1 --host node7 --format json
  perflab runs history cpu events_per_sec.t1 --min-segment 6 --format md`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := out.validate(); err != nil {
				return err
			}
			return runHistory(cmd, e, &out, *db, host, args[0], args[1], o)
		},
	}
	out.register(cmd, "text", "text", "json", "md")
	cmd.Flags().StringVar(&host, "host", "", "only runs on this host")
	cmd.Flags().IntVar(&o.MinSegment, "min-segment", changepoint.DefaultMinSegment, "fewest runs on each side of a change point (at least 2)")
	cmd.Flags().Float64Var(&o.Alpha, "alpha", changepoint.DefaultAlpha, "significance level of each change point")
	return cmd
}

func runHistory(cmd *cobra.Command, e *env, out *outputFlags, db, host, probe, metric string, o changepoint.Options) error {
	if o.MinSegment < 2 || o.Alpha <= 0 || o.Alpha >= 1 {
		return clierr.Usagef("", "--min-segment must be at least 2 and --alpha between 0 and 1 (got %d and %g)", o.MinSegment, o.Alpha)
	}
	s, err := openStoreReadOnly(db)
	if err != nil {
		return err
	}
	defer s.Close()
	ctx := cmd.Context()
	runs, err := s.Runs(ctx, store.Filter{Probe: probe, Host: host})
	if err != nil {
		return storeErr(err)
	}
	if len(runs) == 0 {
		return clierr.Usagef("'perflab runs list' shows the probes and hosts stored", "no runs of probe %q%s in %s", probe, onHost(host), s.Path)
	}
	series := history.Build(runs, probe, metric, o)
	if len(series) == 0 {
		return clierr.Usagef("'perflab runs show ID' lists a run's metrics", "no run of %s%s has metric %q", probe, onHost(host), metric)
	}
	missing := func(err error) bool { return errors.Is(err, store.ErrNotFound) }
	for _, sr := range series {
		if err := sr.Annotate(ctx, s.Snapshot, missing); err != nil {
			return storeErr(err)
		}
	}
	return writeResult(out, e.stdout, &report.History{Method: history.MethodOf(o), Series: series})
}

func onHost(host string) string {
	if host == "" {
		return ""
	}
	return " on host " + host
}
