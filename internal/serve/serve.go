// Package serve is perflab's web console: a read-only HTTP server over the
// run store with views of hosts, history, comparisons, audits, snapshot
// diffs and flame graphs.
//
// Every page is self-contained: its CSS, script and data are inline, and
// its Content-Security-Policy (report.CSP plus form-action/frame-ancestors/
// base-uri) forbids every fetch, so a page can make no request at all, to
// this server or elsewhere; navigation is plain links and GET forms. The
// full selection of a view is its URL's query, so a URL is a permalink.
// Each view also answers ?format=json (its data) and ?format=html (the
// page without navigation, as a file; for comparisons exactly what
// 'perflab compare --format html' writes).
//
// The views reuse the packages that compute and render their content
// (compare, report, history, audit, flame/render, flame/diff), so the
// console shows what the command line shows. The server itself only
// validates the selection, queries the store (bounded, paginated, indexed)
// and frames the result. net/http carries the rest; no web framework fits
// a handful of GET views better than the standard library.
package serve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/perflab/perflab/internal/compare"
	"github.com/perflab/perflab/internal/store"
)

// Config is what the command line sets.
type Config struct {
	Listen      string // host:port; default 127.0.0.1:8080
	Token       string // required on every request when set
	AllowImport bool   // enables POST /import (token required)
	FlameDir    string // a directory of .folded files the flame view reads; "" disables it
	// AllowHost names more Host headers to answer (with a token only):
	// the names a reverse proxy or the users reach the console by.
	AllowHost []string
	// TLSCert and TLSKey serve HTTPS; a non-loopback address needs them
	// unless AllowPlaintext (the user insists, e.g. behind a TLS proxy).
	TLSCert, TLSKey string
	AllowPlaintext  bool
	// CacheDir keeps the host index between runs of the console (a file
	// per store); "" keeps it in memory only.
	CacheDir string
	Log      io.Writer
}

// ErrNeedToken is returned by CheckListen for a non-loopback address
// without a token.
var ErrNeedToken = errors.New("needs a token")

// Server is the console over one store.
type Server struct {
	cfg Config
	st  *store.Store
	log *log.Logger

	mu       sync.Mutex
	audits   map[string]audited             // by snapshot id and workload
	compares map[string]*compare.Comparison // by compareKey

	ix index // the hosts page's index (index.go)
}

// New returns a server over st. st is only read, except by /import when
// cfg.AllowImport is set.
func New(st *store.Store, cfg Config) *Server {
	if cfg.Log == nil {
		cfg.Log = io.Discard
	}
	s := &Server{cfg: cfg, st: st, log: log.New(cfg.Log, "", log.LstdFlags|log.LUTC), audits: map[string]audited{}, compares: map[string]*compare.Comparison{}}
	s.ix.cache = cachePath(cfg.CacheDir, st.Path)
	return s
}

// CheckListen refuses what would expose the store without authentication:
// a listen address that is not loopback without a token, and imports
// without a token.
func CheckListen(cfg Config) error {
	host, _, err := net.SplitHostPort(cfg.Listen)
	if err != nil {
		return fmt.Errorf("--listen %q: %v (use HOST:PORT, e.g. 127.0.0.1:8080)", cfg.Listen, err)
	}
	if cfg.Token != "" && strings.TrimSpace(cfg.Token) == "" {
		return errors.New("the token is only white space: give a real secret (e.g. 'head -c 24 /dev/urandom | base64 > token' and --token-file token)")
	}
	if cfg.Token != strings.TrimSpace(cfg.Token) {
		return errors.New("the token begins or ends with white space: remove it (a token file's trailing newline is removed for you)")
	}
	if len(cfg.AllowHost) > 0 && cfg.Token == "" {
		return fmt.Errorf("--allow-host %w: a console answering other host names must require a token (--token-file)", ErrNeedToken)
	}
	if (cfg.TLSCert == "") != (cfg.TLSKey == "") {
		return errors.New("--tls-cert and --tls-key go together: give both")
	}
	if cfg.AllowImport && cfg.Token == "" {
		return fmt.Errorf("--allow-import %w: give --token T, so that only holders of the token can write runs", ErrNeedToken)
	}
	if isLoopback(host) {
		return nil
	}
	if cfg.Token == "" {
		return fmt.Errorf("--listen %s is reachable from other hosts and %w: give --token-file FILE, or listen on 127.0.0.1 behind a reverse proxy that authenticates", cfg.Listen, ErrNeedToken)
	}
	if cfg.TLSCert == "" && !cfg.AllowPlaintext {
		return fmt.Errorf("--listen %s is reachable from other hosts and would send the token in clear: give --tls-cert and --tls-key, or --allow-plaintext behind a TLS proxy", cfg.Listen)
	}
	return nil
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// HTTPServer is the http.Server with perflab's timeouts and limits.
func (s *Server) HTTPServer() *http.Server {
	return &http.Server{
		Addr:              s.cfg.Listen,
		Handler:           s.Handler(),
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       30 * time.Second, // an import body may be a few MB
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       60 * time.Second,
		MaxHeaderBytes:    16 << 10,
		ErrorLog:          s.log,
	}
}

// Serve listens and serves until ctx ends, then shuts down gracefully.
// ready, when not nil, receives the address listened on.
func (s *Server) Serve(ctx context.Context, ready func(addr string)) error {
	if err := CheckListen(s.cfg); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", s.cfg.Listen)
	if err != nil {
		return err
	}
	hs := s.HTTPServer()
	ictx, stopIndex := context.WithCancel(ctx)
	defer stopIndex()
	s.ix.loadCache(s.st.Path) // before the first request: a restart starts warm
	s.ix.mu.Lock()
	s.ix.serving = true // the hosts page waits for the build's read of the store, not longer (index.go)
	s.ix.mu.Unlock()
	s.warm(ictx) // and on primed connections (warm.go)
	// Collect the start-up's garbage (the cache file's decoding, the
	// prime's comparisons) now, not in the first requests: a collection
	// marks the whole index (~130 MB at 10,000 hosts, ~80 ms on two CPUs)
	// and landed in one cold comparison in twenty.
	runtime.GC()
	go s.maintain(ictx)
	if ready != nil {
		ready(ln.Addr().String())
	}
	errc := make(chan error, 1)
	go func() {
		if s.cfg.TLSCert != "" {
			errc <- hs.ServeTLS(ln, s.cfg.TLSCert, s.cfg.TLSKey)
			return
		}
		errc <- hs.Serve(ln)
	}()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		err := hs.Shutdown(sctx)
		s.saveCache(s.st.Path) // what the index computed survives the restart
		return err
	}
}

// Handler routes the views behind the middleware.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", s.view(s.hosts))
	mux.HandleFunc("GET /history", s.view(s.history))
	mux.HandleFunc("GET /compare", s.view(s.compare))
	mux.HandleFunc("GET /audit", s.view(s.audit))
	mux.HandleFunc("GET /snapshots", s.view(s.snapshots))
	mux.HandleFunc("GET /runs", s.view(s.runs))
	mux.HandleFunc("GET /flame", s.flame)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok\n") })
	if s.cfg.AllowImport {
		mux.HandleFunc("POST /import", s.importRuns)
	}
	return s.logged(s.recovered(s.guarded(s.limited(s.authorized(s.sameOrigin(mux))))))
}
