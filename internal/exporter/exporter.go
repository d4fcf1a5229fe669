// Package exporter serves perflab's verdicts as Prometheus metrics: the
// audit's findings (one 0/1 series per rule), key knobs as node_exporter
// style enums, tune drift per knob, the latest bench result per probe and
// metric, the latest change point per host, probe and metric in the stored
// history (internal/history), and build info.
//
// A scrape never touches the host: the snapshot, audit, drift and bench
// results are refreshed in the background every interval, rendered once, and
// a scrape only writes those bytes (plus the exporter's own live Go and
// process metrics), so it costs well under 10 ms however
// many scrapers there are (docs/performance.md).
package exporter

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"html"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/perflab/perflab/internal/audit"
	"github.com/perflab/perflab/internal/changepoint"
	"github.com/perflab/perflab/internal/hostfs"
	"github.com/perflab/perflab/internal/metrics"
	"github.com/perflab/perflab/internal/run"
	"github.com/perflab/perflab/internal/snapshot"
	"github.com/perflab/perflab/internal/tune"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/common/expfmt"
)

// Config is what the exporter watches.
type Config struct {
	FS       hostfs.FS
	Workload *audit.Workload
	Interval time.Duration
	Version  string
	// Runs loads stored bench runs, newest first (nil: no bench series).
	Runs func(context.Context) ([]*run.Run, error)
	// Tune is the host whose tune journal is verified for drift.
	Tune tune.Host
}

// Exporter holds the collectors and refreshes them.
type Exporter struct {
	cfg      Config
	reg      *prometheus.Registry
	findings *metrics.Findings
	knobs    *metrics.Knobs
	drift    *metrics.Drift
	bench    *metrics.Bench
	changes  *metrics.ChangePoints

	refreshSeconds prometheus.Gauge
	refreshErrors  *prometheus.CounterVec
	lastRefresh    prometheus.Gauge

	// runtime holds the exporter's own Go and process metrics, so that
	// goroutine or memory growth shows. Gathering them costs about a
	// millisecond, so they are rendered at most once a second, in the
	// background: no scrape waits for them (see body).
	runtime     *prometheus.Registry
	rtRendering atomic.Bool

	mu      sync.Mutex
	lastErr error
	page    []byte // the verdicts' exposition, rendered once per refresh
	rtPage  []byte // the runtime metrics' exposition, rendered at most once a second
	rtAt    time.Time
	// resp is what a scrape writes: page and rtPage, joined and gzipped
	// once whenever either changes, swapped atomically so a scrape takes
	// no lock and allocates nothing for the body.
	resp atomic.Pointer[response]
}

// response is one rendering of /metrics, plain and gzipped.
type response struct {
	plain, gz []byte
	plainLen  string // Content-Length values, formatted once
	gzLen     string
	at        time.Time // when the runtime part was rendered
}

// New builds an exporter; call Refresh (or Run) before serving.
func New(cfg Config) *Exporter {
	if cfg.Interval <= 0 {
		cfg.Interval = time.Minute
	}
	e := &Exporter{
		cfg:      cfg,
		reg:      prometheus.NewRegistry(),
		findings: metrics.NewFindings(),
		knobs:    metrics.NewKnobs(),
		drift:    metrics.NewDrift(),
		bench:    metrics.NewBench(),
		changes:  metrics.NewChangePoints(changepoint.Options{}),
		refreshSeconds: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: metrics.Namespace, Subsystem: "exporter",
			Name: "refresh_duration_seconds", Help: "How long the last refresh (snapshot, audit, drift, bench) took."}),
		refreshErrors: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: metrics.Namespace, Subsystem: "exporter",
			Name: "refresh_errors_total", Help: "Refresh failures by part."}, []string{"part"}),
		lastRefresh: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: metrics.Namespace, Subsystem: "exporter",
			Name: "last_refresh_timestamp_seconds", Help: "Unix time of the last completed refresh."}),
	}
	e.reg.MustRegister(metrics.NewBuildInfo(cfg.Version), e.findings, e.knobs, e.drift, e.bench, e.changes,
		e.refreshSeconds, e.refreshErrors, e.lastRefresh)
	e.runtime = prometheus.NewRegistry()
	e.runtime.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	for _, p := range []string{"snapshot", "drift", "bench"} {
		e.refreshErrors.WithLabelValues(p)
	}
	return e
}

// Registry exposes the registry (for textfile output and tests).
func (e *Exporter) Registry() *prometheus.Registry { return e.reg }

// Refresh re-collects everything. A failing part keeps its previous series
// and counts an error; the others still refresh.
func (e *Exporter) Refresh(ctx context.Context) error {
	start := time.Now()
	var errs []error
	s, err := snapshot.Collect(e.cfg.FS, snapshot.Options{})
	if err != nil {
		e.refreshErrors.WithLabelValues("snapshot").Inc()
		errs = append(errs, fmt.Errorf("snapshot: %w", err))
	} else {
		e.findings.Update(s, e.cfg.Workload.Name, audit.Run(s, e.cfg.Workload))
		e.knobs.Update(s)
	}
	if d, err := e.cfg.Tune.Verify(); err != nil {
		e.refreshErrors.WithLabelValues("drift").Inc()
		errs = append(errs, fmt.Errorf("drift: %w", err))
	} else {
		e.drift.Update(d)
	}
	if e.cfg.Runs != nil {
		if runs, err := e.cfg.Runs(ctx); err != nil {
			e.refreshErrors.WithLabelValues("bench").Inc()
			errs = append(errs, fmt.Errorf("bench: %w", err))
		} else {
			e.bench.Update(runs)
			e.changes.Update(runs)
		}
	}
	e.refreshSeconds.Set(time.Since(start).Seconds())
	e.lastRefresh.Set(float64(time.Now().UnixNano()) / 1e9)
	err = errors.Join(errs...)
	page, rerr := render(e.reg)
	e.mu.Lock()
	e.lastErr = err
	if rerr == nil {
		e.page = page
	}
	e.publishLocked()
	e.mu.Unlock()
	return errors.Join(err, rerr)
}

// render gathers a registry and encodes it in the text exposition format.
// Every verdict series changes only on refresh, so a scrape can serve the
// bytes rendered then: that is what keeps a scrape far below 10 ms with 50
// concurrent scrapers on two cores.
func render(g prometheus.Gatherer) ([]byte, error) {
	mfs, err := g.Gather()
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	enc := expfmt.NewEncoder(&b, expfmt.NewFormat(expfmt.TypeTextPlain))
	for _, mf := range mfs {
		if err := enc.Encode(mf); err != nil {
			return nil, err
		}
	}
	return b.Bytes(), nil
}

// serveMetrics writes the cached verdicts and the runtime metrics: bytes
// rendered and compressed before the scrape came, with their length, in
// one write. A client that accepts gzip (Prometheus does) gets the
// compressed copy, about a tenth of the bytes to copy through loopback.
func (e *Exporter) serveMetrics(w http.ResponseWriter, r *http.Request) {
	resp := e.resp.Load()
	if resp == nil {
		http.Error(w, "no refresh has completed yet", http.StatusServiceUnavailable)
		return
	}
	if time.Since(resp.at) >= time.Second {
		e.rerenderRuntime()
	}
	h := w.Header()
	h["Content-Type"] = contentType
	h["Vary"] = varyAcceptEncoding
	body, n := resp.plain, resp.plainLen
	if acceptsGzip(r.Header.Get("Accept-Encoding")) {
		body, n = resp.gz, resp.gzLen
		h["Content-Encoding"] = gzipEncoding
	}
	h["Content-Length"] = []string{n}
	if r.Method != http.MethodHead {
		w.Write(body)
	}
}

var (
	contentType        = []string{string(expfmt.NewFormat(expfmt.TypeTextPlain))}
	varyAcceptEncoding = []string{"Accept-Encoding"}
	gzipEncoding       = []string{"gzip"}
)

// acceptsGzip reports whether an Accept-Encoding header lists gzip
// without refusing it (q=0).
func acceptsGzip(h string) bool {
	for h != "" {
		var part string
		part, h, _ = strings.Cut(h, ",")
		name, params, _ := strings.Cut(part, ";")
		if !strings.EqualFold(strings.TrimSpace(name), "gzip") {
			continue
		}
		q, ok := strings.CutPrefix(strings.ReplaceAll(params, " ", ""), "q=")
		if !ok {
			return true
		}
		v, err := strconv.ParseFloat(q, 64)
		return err != nil || v > 0
	}
	return false
}

// rerenderRuntime re-renders the runtime metrics in the background; the
// scrape that noticed they are a second old serves the previous ones, as
// do all others until the new rendering is published.
func (e *Exporter) rerenderRuntime() {
	if !e.rtRendering.CompareAndSwap(false, true) {
		return
	}
	go func() {
		defer e.rtRendering.Store(false)
		p, err := render(e.runtime)
		e.mu.Lock()
		defer e.mu.Unlock()
		if err == nil { // on error keep the last page: the verdicts matter more
			e.rtPage = p
		}
		e.rtAt = time.Now()
		e.publishLocked()
	}()
}

// publishLocked builds the response from page and rtPage; e.mu is held.
// The runtime part is rendered here (synchronously) only the first time.
func (e *Exporter) publishLocked() {
	if e.page == nil {
		return
	}
	if e.rtAt.IsZero() {
		if p, err := render(e.runtime); err == nil {
			e.rtPage = p
		}
		e.rtAt = time.Now()
	}
	plain := make([]byte, 0, len(e.page)+len(e.rtPage))
	plain = append(append(plain, e.page...), e.rtPage...)
	var gz bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&gz, gzip.BestSpeed)
	zw.Write(plain)
	zw.Close()
	e.resp.Store(&response{plain: plain, gz: gz.Bytes(), at: e.rtAt,
		plainLen: strconv.Itoa(len(plain)), gzLen: strconv.Itoa(gz.Len())})
}

// Run refreshes every interval until ctx ends.
func (e *Exporter) Run(ctx context.Context, onErr func(error)) {
	t := time.NewTicker(e.cfg.Interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := e.Refresh(ctx); err != nil && onErr != nil {
				onErr(err)
			}
		}
	}
}

// Handler serves /metrics, /healthz and a landing page, to GET and HEAD
// only (405 for anything else: nothing here accepts input).
func (e *Exporter) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/metrics", e.serveMetrics)
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) {
		e.mu.Lock()
		err := e.lastErr
		e.mu.Unlock()
		if err != nil {
			http.Error(w, "last refresh: "+err.Error(), http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, "<html><head><title>perflab exporter</title></head><body><h1>perflab exporter</h1><p>Workload %s, refreshed every %s. <a href=\"/metrics\">Metrics</a></p></body></html>\n",
			html.EscapeString(e.cfg.Workload.Name), e.cfg.Interval)
	})
	return getOnly(mux)
}

// getOnly answers 405 to every method but GET and HEAD.
func getOnly(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "405 method not allowed: the exporter only answers GET and HEAD", http.StatusMethodNotAllowed)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// Server is the http.Server the exporter serves with: header, read, write
// and idle timeouts, so idle keep-alive connections (a scraper that never
// closes, or many) are closed instead of held forever.
func (e *Exporter) Server() *http.Server {
	return &http.Server{
		Handler:           e.Handler(),
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       10 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       IdleTimeout,
		MaxHeaderBytes:    16 << 10,
	}
}

// IdleTimeout is how long the exporter keeps an idle keep-alive
// connection: longer than Prometheus's usual 15-60 s scrape interval would
// hold one connection per scraper; this is enough to reuse it between
// scrapes without keeping abandoned ones.
var IdleTimeout = 90 * time.Second

// Serve listens on addr and serves until ctx ends, then shuts down cleanly.
// ready, if not nil, receives the bound address (useful with port 0).
func (e *Exporter) Serve(ctx context.Context, addr string, ready func(net.Addr)) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := e.Server()
	if ready != nil {
		ready(ln.Addr())
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
		return nil
	case err := <-errc:
		return err
	}
}
