package cli

import (
	"strconv"
	"strings"
	"time"

	"github.com/perflab/perflab/internal/audit"
	"github.com/perflab/perflab/internal/clierr"
	"github.com/perflab/perflab/internal/fleet"
	"github.com/perflab/perflab/internal/store"
	"github.com/spf13/cobra"
)

func newFleetCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "fleet",
		Short: "Read many hosts' stored runs together",
	}
	cmd.AddCommand(newFleetReportCmd(e))
	return cmd
}

func newFleetReportCmd(e *env) *cobra.Command {
	var (
		out                    outputFlags
		db, label, since, wkld string
	)
	cmd := &cobra.Command{
		Use:   "report",
		Short: "Group hosts by CPU, kernel and settings; name the outliers of each metric and the fact that separates them",
		Long: `report reads the stored runs of many hosts (a shared PostgreSQL store, or a
SQLite store the hosts' results were imported or pushed into) and shows:

  - the hosts grouped by CPU model, microcode, kernel release and
    virtualisation, and every setting that differs between them (from each
    host's latest snapshot; state such as free memory is left out);
  - per probe and metric, the hosts whose value (the median of their runs'
    medians) is an outlier by a robust rule, and for each outlier group the
    fact that separates it from the other hosts, with the effect and its
    95% interval (hosts as units);
  - the audit findings for --workload and on how many hosts each holds.

The rule is in docs/fleet.md.`,
		Example: `  perflab fleet report --db postgres://perflab@db.example/perflab
  perflab fleet report --label nightly --since 7d --format md
  perflab fleet report --since 2026-11-01 --format html -o fleet.html`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := out.validate(); err != nil {
				return err
			}
			from, err := parseSince(since, time.Now())
			if err != nil {
				return err
			}
			w, err := resolveWorkload(wkld)
			if err != nil {
				return err
			}
			return runFleetReport(cmd, e, &out, db, label, from, w)
		},
	}
	out.register(cmd, "text", "text", "md", "json", "html")
	f := cmd.Flags()
	f.StringVar(&db, "db", "", "run database (default $XDG_DATA_HOME/perflab/perflab.db; a postgres:// URL for a shared store)")
	f.StringVar(&label, "label", "", "only runs with this label")
	f.StringVar(&since, "since", "", "only runs started since: a duration back from now (36h, 7d) or a date (2026-11-01)")
	f.StringVarP(&wkld, "workload", "w", "general", "workload the audit side judges against")
	return cmd
}

// parseSince reads --since: "" (all), a Go duration or N days ("7d"), or
// a date or RFC 3339 time.
func parseSince(s string, now time.Time) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if n, ok := strings.CutSuffix(s, "d"); ok {
		if d, err := strconv.Atoi(n); err == nil && d >= 0 {
			return now.AddDate(0, 0, -d), nil
		}
	}
	if d, err := time.ParseDuration(s); err == nil && d >= 0 {
		return now.Add(-d), nil
	}
	for _, layout := range []string{time.RFC3339, "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, clierr.Usagef("give a duration (36h, 7d) or a date (2026-11-01)", "cannot read --since %q", s)
}

func runFleetReport(cmd *cobra.Command, e *env, out *outputFlags, db, label string, since time.Time, w *audit.Workload) error {
	s, err := openStoreReadOnly(db)
	if err != nil {
		return err
	}
	defer s.Close()
	rep, err := fleet.FromStore(cmd.Context(), s, store.FleetFilter{Label: label, Since: since}, w)
	if err != nil {
		return storeErr(err)
	}
	if len(rep.Hosts) == 0 {
		return clierr.Usagef("'perflab runs list' shows what is stored", "no runs%s%s in %s", labelText(label), sinceText(since), s.Path)
	}
	return writeResult(out, e.stdout, rep)
}

func labelText(l string) string {
	if l == "" {
		return ""
	}
	return " labelled " + strconv.Quote(l)
}

func sinceText(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return " since " + t.UTC().Format(time.RFC3339)
}
