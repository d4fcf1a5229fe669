package cli

import (
	"errors"
	"fmt"
	"os"

	"github.com/perflab/perflab/internal/clierr"
	"github.com/perflab/perflab/internal/serve"
	"github.com/perflab/perflab/internal/store"
	"github.com/spf13/cobra"
)

func newServeCmd(e *env) *cobra.Command {
	var cfg serve.Config
	var db string
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Browse the run store in a web browser: hosts, history, comparisons, audits, flame graphs",
		Long: `serve is a read-only web console over the run store: hosts with their
drift and failing findings, a metric's history with change points and the
settings that changed, comparisons of runs, labels or hosts (perflab
compare's verdicts and report), audits and snapshot diffs, and flame graphs
of the .folded files in --flame DIR. Every view's selection is in its URL;
each exports as JSON and as the self-contained HTML 'perflab report' writes.

It listens on 127.0.0.1 only unless --token is given: any other address
without a token is refused. With a token, requests need
'Authorization: Bearer T' (or open a URL once with ?token=T, which sets a
cookie). --allow-import adds POST /import for 'perflab runs export'
documents and requires --token. docs/serve.md has the details.`,
		Example: `  perflab serve                                   # http://127.0.0.1:8080/
  perflab serve --db postgres://perflab@db/perflab --listen 0.0.0.0:8080 --token "$(cat token)"
  perflab serve --flame ./profiles                # browse and diff .folded files`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg.Log = e.stderr
			if cfg.Token == "" {
				cfg.Token = os.Getenv("PERFLAB_SERVE_TOKEN")
			}
			if err := serve.CheckListen(cfg); err != nil {
				return clierr.Usagef("", "%v", err)
			}
			st, err := openServeStore(db, cfg.AllowImport)
			if err != nil {
				return err
			}
			defer st.Close()
			err = serve.New(st, cfg).Serve(cmd.Context(), func(addr string) {
				fmt.Fprintf(e.stderr, "perflab serve: http://%s/ (store %s)\n", addr, st.Path)
			})
			if err != nil {
				return clierr.Runtimef("pick a free address with --listen", "serve on %s: %v", cfg.Listen, err)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&cfg.Listen, "listen", "127.0.0.1:8080", "address to serve on (non-loopback needs --token)")
	f.StringVar(&db, "db", "", "run database (default $XDG_DATA_HOME/perflab/perflab.db)")
	f.StringVar(&cfg.Token, "token", "", "require this token on every request (also $PERFLAB_SERVE_TOKEN)")
	f.BoolVar(&cfg.AllowImport, "allow-import", false, "accept run exports on POST /import (needs --token)")
	f.StringVar(&cfg.FlameDir, "flame", "", "directory of .folded files for the flame view (read only)")
	return cmd
}

// openServeStore opens the store read-only, or writable for imports.
func openServeStore(db string, write bool) (*store.Store, error) {
	if !write {
		return openStoreReadOnly(db)
	}
	st, err := store.Open(db)
	if err != nil {
		if errors.Is(err, store.ErrReadOnly) {
			return nil, clierr.Wrap(clierr.Runtime, err, "--allow-import writes runs: use a database this user may write")
		}
		return nil, storeOpenErr(err)
	}
	return st, nil
}
