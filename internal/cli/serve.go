package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/perflab/perflab/internal/clierr"
	"github.com/perflab/perflab/internal/serve"
	"github.com/perflab/perflab/internal/store"
	"github.com/spf13/cobra"
)

func newServeCmd(e *env) *cobra.Command {
	var cfg serve.Config
	var db, tokenFile string
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Browse the run store in a web browser: hosts, history, comparisons, audits, flame graphs",
		Long: `serve is a read-only web console over the run store: hosts with their
drift and failing findings, a metric's history with change points and the
settings that changed, comparisons of runs, labels or hosts (perflab
compare's verdicts and report), audits and snapshot diffs, and flame graphs
of the .folded files in --flame DIR. Every view's selection is in its URL;
each exports as JSON and as the self-contained HTML 'perflab report' writes.

It listens on 127.0.0.1 only unless a token is given (--token-file FILE or
$PERFLAB_SERVE_TOKEN; never on the command line, where 'ps' shows it) and,
for any other address, --tls-cert/--tls-key (or --allow-plaintext behind a
TLS proxy). With a token, requests need 'Authorization: Bearer T' (or open
a URL once with ?token=T, which sets a cookie). It answers only Host names
that are loopback or the listen address, plus --allow-host NAME with a
token. --allow-import adds POST /import for 'perflab runs export'
documents, needs the token in the Authorization header and refuses
cross-site requests. docs/serve.md and docs/security.md have the details.`,
		Example: `  perflab serve                                   # http://127.0.0.1:8080/
  perflab serve --db postgres://perflab@db/perflab --listen 0.0.0.0:8443 \
      --token-file /etc/perflab/token --tls-cert cert.pem --tls-key key.pem --allow-host perflab.example.com
  PERFLAB_SERVE_TOKEN=$(cat token) perflab serve --allow-import
  perflab serve --flame ./profiles                # browse and diff .folded files`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg.Log = e.stderr
			if err := serveToken(&cfg, tokenFile); err != nil {
				return err
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
	serveFlags(cmd, &cfg, &db, &tokenFile)
	return cmd
}

func serveFlags(cmd *cobra.Command, cfg *serve.Config, db, tokenFile *string) {
	f := cmd.Flags()
	f.StringVar(&cfg.Listen, "listen", "127.0.0.1:8080", "address to serve on (non-loopback needs a token and TLS)")
	f.StringVar(db, "db", "", "run database (default $XDG_DATA_HOME/perflab/perflab.db)")
	f.StringVar(tokenFile, "token-file", "", "require the token in this file on every request (or $PERFLAB_SERVE_TOKEN)")
	f.StringVar(&cfg.Token, "token", "", "the token itself (visible in ps: prefer --token-file)")
	_ = f.MarkHidden("token")
	f.StringSliceVar(&cfg.AllowHost, "allow-host", nil, "also answer requests for this Host name (needs a token; repeatable)")
	f.StringVar(&cfg.TLSCert, "tls-cert", "", "serve HTTPS with this certificate (PEM)")
	f.StringVar(&cfg.TLSKey, "tls-key", "", "the certificate's private key (PEM)")
	f.BoolVar(&cfg.AllowPlaintext, "allow-plaintext", false, "serve plain HTTP on a non-loopback address (behind a TLS proxy)")
	f.BoolVar(&cfg.AllowImport, "allow-import", false, "accept run exports on POST /import (needs --token)")
	f.StringVar(&cfg.FlameDir, "flame", "", "directory of .folded files for the flame view (read only)")
	f.StringVar(&cfg.CacheDir, "cache-dir", defaultServeCache(), "keep the hosts page's index (verdicts, audits) here between runs; \"\" keeps it in memory")
}

// defaultServeCache is $XDG_CACHE_HOME/perflab (~/.cache/perflab), or ""
// when there is no home.
func defaultServeCache() string {
	d, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(d, "perflab")
}

// serveToken takes the token from --token-file or $PERFLAB_SERVE_TOKEN
// (the hidden --token still works, with a warning: argv is public).
func serveToken(cfg *serve.Config, file string) error {
	switch {
	case file != "":
		b, err := os.ReadFile(file)
		if err != nil {
			return clierr.Usagef("give a readable file holding the token", "--token-file: %v", err)
		}
		cfg.Token = strings.TrimRight(string(b), "\r\n")
		if cfg.Token == "" {
			return clierr.Usagef("write a secret into it, e.g. 'head -c 24 /dev/urandom | base64 > FILE'", "--token-file %s is empty", file)
		}
	case cfg.Token != "":
		fmt.Fprintln(os.Stderr, "perflab serve: warning: --token is visible to every user in 'ps'; use --token-file or $PERFLAB_SERVE_TOKEN")
	default:
		cfg.Token = os.Getenv("PERFLAB_SERVE_TOKEN")
	}
	return nil
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
