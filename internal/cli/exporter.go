package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/perflab/perflab/internal/clierr"
	"github.com/perflab/perflab/internal/exporter"
	"github.com/perflab/perflab/internal/run"
	"github.com/perflab/perflab/internal/store"
	"github.com/perflab/perflab/internal/tune"
	"github.com/spf13/cobra"
)

func newExporterCmd(e *env) *cobra.Command {
	var listen, root, workload, db string
	var interval time.Duration
	var trusted bool
	cmd := &cobra.Command{
		Use:   "exporter",
		Short: "Serve audit findings, knob states, tune drift and bench results as Prometheus metrics",
		Long: `exporter serves /metrics for Prometheus: one 0/1 series per audit rule
(perflab_audit_rule_failed), knob enums (perflab_cpu_scaling_governor,
perflab_thp_enabled, perflab_clocksource, perflab_kernel_mitigations), tune
drift per knob (perflab_tune_drift), the latest bench median per probe and
metric (perflab_bench_median) and perflab_build_info. The host is re-read every
--interval in the background; a scrape only serialises cached values.
Alert rules: deploy/prometheus/alerts.yml; dashboard: deploy/grafana/perflab.json.`,
		Example: `  perflab exporter --workload web
  perflab exporter --listen 0.0.0.0:9567 --interval 5m`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if interval < time.Second {
				return clierr.Usagef("e.g. --interval 60s", "--interval %s is too short", interval)
			}
			if err := checkListen(listen); err != nil {
				return err
			}
			w, err := resolveWorkload(workload)
			if err != nil {
				return err
			}
			w.Trusted = w.Trusted || trusted
			fs, err := openRoot(root)
			if err != nil {
				return err
			}
			cfg := exporter.Config{FS: fs, Workload: w, Interval: interval, Version: Version, Tune: tune.Host{FS: fs}}
			if cfg.Runs, err = exporterRuns(e, db, cmd.Flags().Changed("db")); err != nil {
				return err
			}
			x := exporter.New(cfg)
			if err := x.Refresh(cmd.Context()); err != nil {
				fmt.Fprintf(e.stderr, "perflab: first refresh incomplete: %v\n", err)
			}
			go x.Run(cmd.Context(), func(err error) { fmt.Fprintf(e.stderr, "perflab: refresh: %v\n", err) })
			err = x.Serve(cmd.Context(), listen, func(a net.Addr) {
				fmt.Fprintf(e.stderr, "perflab exporter listening on http://%s/metrics (workload %s, refresh every %s)\n", a, w.Label(), interval)
			})
			if err != nil {
				return clierr.Runtimef("pick a free address with --listen", "cannot listen on %s: %v", listen, err)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&listen, "listen", "127.0.0.1:9567", "address to serve /metrics on")
	cmd.Flags().DurationVar(&interval, "interval", time.Minute, "how often to re-read the host (a scrape never does)")
	cmd.Flags().StringVar(&workload, "workload", "general", "workload (built-in, application alias such as redis, or profile file) the audit judges for")
	cmd.Flags().BoolVar(&trusted, "trusted", false, "the host runs only your own code (mitigations policy)")
	cmd.Flags().StringVar(&root, "root", "/", "host root filesystem")
	cmd.Flags().StringVar(&db, "db", "", "bench store (default: $XDG_DATA_HOME/perflab/perflab.db)")
	return cmd
}

// checkListen rejects a --listen that is not host:port before anything is
// collected; a taken port is still found by the listen itself.
func checkListen(addr string) error {
	const hint = "give host:port, e.g. --listen 127.0.0.1:9567"
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return clierr.Usagef(hint, "bad --listen %q: %v", addr, err)
	}
	if _, err := net.LookupPort("tcp", port); err != nil {
		return clierr.Usagef(hint, "bad --listen %q: port %q is not a TCP port", addr, port)
	}
	return nil
}

// exporterRuns is how the exporter reads bench series: from the run
// database opened read-only anew on each refresh, so the exporter never
// creates the database or holds it open, works on one it may not write,
// and picks up a database the first bench creates after it started. nil
// when a database that exists cannot be read (said on stderr), or an
// error when that database was named with --db.
func exporterRuns(e *env, db string, named bool) (func(context.Context) ([]*run.Run, error), error) {
	runs := func(ctx context.Context) ([]*run.Run, error) {
		st, err := store.OpenReadOnly(db)
		if errors.Is(err, store.ErrNoDatabase) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		defer st.Close()
		return st.Runs(ctx, store.Filter{Limit: 500})
	}
	st, err := openStoreReadOnly(db)
	switch {
	case err == nil:
		st.Close()
		return runs, nil
	case errors.Is(err, store.ErrNoDatabase):
		fmt.Fprintf(e.stderr, "perflab: no bench results yet (%v); they are exported once 'perflab bench' stores runs\n", errors.Unwrap(err))
		return runs, nil
	case named:
		// A --db named on purpose that cannot be read is a mistake to
		// report now, not a daemon silently without bench series.
		return nil, err
	}
	fmt.Fprintf(e.stderr, "perflab: no bench results exported: %v\n", err)
	return nil, nil
}
