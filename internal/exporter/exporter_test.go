package exporter

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/audit"
	"github.com/perflab/perflab/internal/fixture"
	"github.com/perflab/perflab/internal/hostfs"
	"github.com/perflab/perflab/internal/run"
	"github.com/perflab/perflab/internal/testenv"
	"github.com/perflab/perflab/internal/tune"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

func benchRun() *run.Run {
	r := &run.Run{Schema: run.Schema, ID: "r1", Probe: "cpu", Label: "base", Complete: true, Stop: run.StopPrecision,
		Ended:   time.Unix(1700000000, 0),
		Metrics: []run.Metric{{Name: "events_per_sec.t1", Unit: "events/s", Better: run.Higher}}}
	for i, v := range []float64{100, 104, 98, 101, 99, 103, 102} {
		r.Samples = append(r.Samples, run.Sample{Metric: "events_per_sec.t1", Value: v, Iteration: i})
	}
	return r
}

// newExporter builds an exporter on a copy of the metal tree with one knob
// tuned and then changed behind perflab's back.
func newExporter(t testing.TB) (*Exporter, hostfs.FS) {
	t.Helper()
	fs := fixture.Tree(t, "metal", nil)
	h := tune.Host{FS: fs}
	p := tune.Plan{Items: []tune.Item{{Rule: "NET-SOMAXCONN", Change: audit.Change{Kind: audit.KindSysctl, Target: "net.core.somaxconn", Value: "65535"}}}}
	if _, err := h.Apply(context.Background(), p, tune.ApplyOptions{Source: "test"}); err != nil {
		t.Fatal(err)
	}
	if err := fs.WriteFile("/proc/sys/net/core/somaxconn", []byte("1024\n")); err != nil {
		t.Fatal(err)
	}
	w, err := audit.LookupWorkload("web")
	if err != nil {
		t.Fatal(err)
	}
	e := New(Config{FS: fs, Workload: w, Interval: time.Minute, Version: "test", Tune: h,
		Runs: func(context.Context) ([]*run.Run, error) { return []*run.Run{benchRun()}, nil }})
	if err := e.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	return e, fs
}

func scrape(t testing.TB, h http.Handler) []byte {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if rec.Code != 200 {
		t.Fatalf("scrape: %d %s", rec.Code, rec.Body)
	}
	return rec.Body.Bytes()
}

func parse(t testing.TB, b []byte) map[string]*dto.MetricFamily {
	t.Helper()
	p := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := p.TextToMetricFamilies(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("exposition does not parse: %v", err)
	}
	return mfs
}

func find(mf *dto.MetricFamily, labels map[string]string) (float64, bool) {
	if mf == nil {
		return 0, false
	}
next:
	for _, m := range mf.Metric {
		have := map[string]string{}
		for _, l := range m.Label {
			have[l.GetName()] = l.GetValue()
		}
		for k, v := range labels {
			if have[k] != v {
				continue next
			}
		}
		return m.GetGauge().GetValue(), true
	}
	return 0, false
}

func TestSeries(t *testing.T) {
	e, _ := newExporter(t)
	mfs := parse(t, scrape(t, e.Handler()))

	if got, want := len(mfs["perflab_audit_rule_failed"].GetMetric()), len(audit.Rules()); got != want {
		t.Errorf("%d rule series, want one per rule (%d)", got, want)
	}
	// The metal tree runs intel_pstate powersave: a web host fails CPU-GOVERNOR.
	if v, ok := find(mfs["perflab_audit_rule_failed"], map[string]string{"rule": "CPU-GOVERNOR", "workload": "web"}); !ok || v != 1 {
		t.Errorf("CPU-GOVERNOR series = %v, %v; want 1", v, ok)
	}
	if v, ok := find(mfs["perflab_cpu_scaling_governor"], map[string]string{"cpu": "0", "governor": "powersave"}); !ok || v != 1 {
		t.Errorf("governor enum powersave = %v, %v", v, ok)
	}
	if v, ok := find(mfs["perflab_thp_enabled"], map[string]string{"mode": "madvise"}); !ok || v != 1 {
		t.Errorf("thp enum madvise = %v, %v", v, ok)
	}
	if v, ok := find(mfs["perflab_tune_drift"], map[string]string{"target": "net.core.somaxconn"}); !ok || v != 1 {
		t.Errorf("drift of somaxconn = %v, %v; want 1", v, ok)
	}
	if v, ok := find(mfs["perflab_bench_median"], map[string]string{"probe": "cpu", "metric": "events_per_sec.t1", "unit": "events/s"}); !ok || v != 101 {
		t.Errorf("bench median = %v, %v; want 101", v, ok)
	}
	if _, ok := mfs["perflab_build_info"]; !ok {
		t.Error("no perflab_build_info")
	}
}

// TestRefreshKeepsLastGoodOnError: a broken part counts an error and keeps
// the other parts fresh.
func TestRefreshKeepsLastGoodOnError(t *testing.T) {
	e, _ := newExporter(t)
	e.cfg.Runs = func(context.Context) ([]*run.Run, error) { return nil, fmt.Errorf("database is locked") }
	if err := e.Refresh(context.Background()); err == nil || !strings.Contains(err.Error(), "bench") {
		t.Fatalf("refresh error = %v", err)
	}
	mfs := parse(t, scrape(t, e.Handler()))
	var got float64
	for _, m := range mfs["perflab_exporter_refresh_errors_total"].GetMetric() {
		for _, l := range m.Label {
			if l.GetValue() == "bench" {
				got = m.GetCounter().GetValue()
			}
		}
	}
	if got != 1 {
		t.Errorf("bench refresh errors = %v, want 1", got)
	}
	if _, ok := find(mfs["perflab_bench_median"], map[string]string{"probe": "cpu"}); !ok {
		t.Error("a failed bench refresh dropped the previous bench series")
	}
	rec := httptest.NewRecorder()
	e.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/healthz", nil))
	if rec.Code != http.StatusServiceUnavailable {
		t.Errorf("/healthz = %d after a failed refresh", rec.Code)
	}
}

var metricName = regexp.MustCompile(`perflab_[a-z0-9_]+`)

// exportedNames lists every metric family the exporter can produce.
func exportedNames(t *testing.T, e *Exporter) map[string]bool {
	names := map[string]bool{}
	for name := range parse(t, scrape(t, e.Handler())) {
		names[name] = true
	}
	return names
}

// TestDeployFilesUseExportedMetrics: every perflab_* metric named by the
// alert rules and the Grafana dashboard is one the exporter produces, so a
// rename cannot silently break alerting.
func TestDeployFilesUseExportedMetrics(t *testing.T) {
	e, _ := newExporter(t)
	names := exportedNames(t, e)
	for _, f := range []string{"../../deploy/prometheus/alerts.yml", "../../deploy/prometheus/alerts_test.yml", "../../deploy/grafana/perflab.json"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		used := map[string]bool{}
		for _, m := range metricName.FindAllString(string(b), -1) {
			used[m] = true
		}
		if len(used) == 0 {
			t.Errorf("%s names no perflab metric", f)
		}
		for m := range used {
			if !names[m] {
				t.Errorf("%s uses %s, which the exporter does not produce", f, m)
			}
		}
	}
}

func TestPromtool(t *testing.T) {
	promtool := testenv.RequireTool(t, "promtool")
	e, _ := newExporter(t)
	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = bytes.NewReader(scrape(t, e.Handler()))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("promtool check metrics: %v\n%s", err, out)
	}
	for _, args := range [][]string{{"check", "rules", "alerts.yml"}, {"test", "rules", "alerts_test.yml"}} {
		cmd := exec.Command(promtool, args...)
		cmd.Dir = "../../deploy/prometheus"
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("promtool %v: %v\n%s", args, err, out)
		}
	}
}

// TestPrometheusScrapes runs a real Prometheus against the exporter on
// loopback and asks it, in PromQL, for the finding series.
func TestPrometheusScrapes(t *testing.T) {
	testenv.Short(t)
	prom := testenv.RequireTool(t, "prometheus")
	e, _ := newExporter(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addrc := make(chan net.Addr, 1)
	go e.Serve(ctx, "127.0.0.1:0", func(a net.Addr) { addrc <- a })
	addr := <-addrc

	dir := t.TempDir()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	promAddr := ln.Addr().String()
	ln.Close()
	cfg := fmt.Sprintf("global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: perflab\n    static_configs:\n      - targets: ['%s']\n", addr)
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, prom, "--config.file="+filepath.Join(dir, "prometheus.yml"),
		"--storage.tsdb.path="+filepath.Join(dir, "data"), "--web.listen-address="+promAddr)
	var logs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cancel(); cmd.Wait() }()

	q := `perflab_audit_rule_failed{rule="CPU-GOVERNOR",workload="web"}`
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		resp, err := http.Get("http://" + promAddr + "/api/v1/query?query=" + url.QueryEscape(q))
		if err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if strings.Contains(string(body), `"rule":"CPU-GOVERNOR"`) && strings.Contains(string(body), `"1"]`) {
				return
			}
		}
		time.Sleep(500 * time.Millisecond)
	}
	t.Fatalf("Prometheus never returned %s\n%s", q, logs.String())
}

// TestNoGoroutineGrowth scrapes concurrently many times and checks that
// nothing accumulates (a leak here would grow forever in production).
func TestNoGoroutineGrowth(t *testing.T) {
	e, _ := newExporter(t)
	srv := httptest.NewServer(e.Handler())
	defer srv.Close()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 50}}
	get := func() {
		resp, err := client.Get(srv.URL + "/metrics")
		if err != nil {
			t.Error(err)
			return
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	run := func(n int) {
		var wg sync.WaitGroup
		for w := 0; w < 50; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < n/50; i++ {
					get()
				}
			}()
		}
		wg.Wait()
	}
	run(100) // warm: connections and buffers
	before := runtime.NumGoroutine()
	run(500) // bench/exporter.sh runs 10,000 without the race detector
	// Closed connections' goroutines end soon after, not at once: on a
	// loaded machine under -race "soon" can pass any fixed sleep, so the
	// count is polled. A leak stays above the bound for the whole 10 s.
	after := runtime.NumGoroutine()
	for deadline := time.Now().Add(10 * time.Second); after > before+5 && time.Now().Before(deadline); after = runtime.NumGoroutine() {
		time.Sleep(20 * time.Millisecond)
	}
	if after > before+5 {
		t.Errorf("goroutines grew from %d to %d over 500 scrapes (10 s after the last)", before, after)
	}
}

// BenchmarkScrape is /metrics under 50 concurrent scrapers over loopback,
// client and server in this process on the same cores, as
// bench/exporter.sh runs it (budget: p99 ≤ 5 ms). Beside perflab's
// handler it runs the floor: a handler that writes the very same response
// (headers and bytes, captured from perflab's) and does nothing else, so
// the figures say how much of the latency is perflab's and how much is
// net/http, loopback TCP and 50 goroutines sharing the CPUs. "gzip" is a
// scraper that accepts gzip as Prometheus does; "plain" one that does not.
func BenchmarkScrape(b *testing.B) {
	e, _ := newExporter(b)
	for _, gz := range []bool{true, false} {
		enc := map[bool]string{true: "gzip", false: "plain"}[gz]
		b.Run("perflab/"+enc, func(b *testing.B) { benchScrape(b, e.Handler(), gz) })
		b.Run("floor/"+enc, func(b *testing.B) { benchScrape(b, floorHandler(b, e.Handler(), gz), gz) })
	}
}

// floorHandler captures h's response to one scrape and returns a handler
// that writes exactly that: the least any server could do per scrape.
func floorHandler(b *testing.B, h http.Handler, gz bool) http.Handler {
	rec := httptest.NewRecorder()
	req := httptest.NewRequest("GET", "/metrics", nil)
	if gz {
		req.Header.Set("Accept-Encoding", "gzip")
	}
	h.ServeHTTP(rec, req)
	if rec.Code != 200 {
		b.Fatalf("scrape: %d", rec.Code)
	}
	hdr, body := rec.Header().Clone(), rec.Body.Bytes()
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		for k, v := range hdr {
			w.Header()[k] = v
		}
		w.Write(body)
	})
}

func benchScrape(b *testing.B, h http.Handler, gz bool) {
	srv := httptest.NewServer(h)
	defer srv.Close()
	// DisableCompression: the body is read as sent, gzipped or not, as a
	// scraper that stores bytes would; Prometheus decompresses, which
	// costs the scraper, not the exporter.
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64, DisableCompression: true}}
	defer client.CloseIdleConnections()
	var mu sync.Mutex
	lat := make([]time.Duration, 0, b.N)
	b.SetParallelism(25) // × GOMAXPROCS (2 here) = 50 concurrent scrapers
	b.ResetTimer()
	cpu0 := cpuTime()
	b.RunParallel(func(pb *testing.PB) {
		var mine []time.Duration
		req, _ := http.NewRequest("GET", srv.URL+"/metrics", nil)
		if gz {
			req.Header.Set("Accept-Encoding", "gzip")
		}
		for pb.Next() {
			t0 := time.Now()
			resp, err := client.Do(req)
			if err != nil {
				b.Error(err)
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			mine = append(mine, time.Since(t0))
		}
		mu.Lock()
		lat = append(lat, mine...)
		mu.Unlock()
	})
	b.StopTimer()
	// CPU time per scrape, client and server together: on a shared
	// machine wall-time latency mostly measures the other jobs.
	b.ReportMetric(float64(cpuTime()-cpu0)/1e3/float64(b.N), "cpu-µs/op")
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	if len(lat) > 0 {
		b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "ms-p50")
		b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "ms-p99")
	}
}

// cpuTime is the process's user+system CPU time in ns.
func cpuTime() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// stepHistory is 16 runs of cpu on h1, one an hour: from the 9th on the
// host is 10% slower; h2's 16 runs are flat.
func stepHistory() []*run.Run {
	t0 := time.Unix(1700000000, 0)
	var runs []*run.Run
	for _, host := range []string{"h1", "h2"} {
		for i := 0; i < 16; i++ {
			centre := 1000.0
			if host == "h1" && i >= 8 {
				centre = 900
			}
			start := t0.Add(time.Duration(i) * time.Hour)
			r := &run.Run{Schema: run.Schema, ID: fmt.Sprintf("%s-%02d", host, i), Probe: "cpu", Host: host,
				Params: map[string]string{"threads": "1"}, Complete: true, Stop: run.StopFixed,
				Started: start, Ended: start.Add(time.Minute),
				Metrics: []run.Metric{{Name: "events_per_sec.t1", Unit: "events/s", Better: run.Higher}}}
			for k := 0; k < 5; k++ {
				v := centre * (1 + 0.003*float64((k*3+i)%7-3))
				r.Samples = append(r.Samples, run.Sample{Metric: "events_per_sec.t1", Value: v, Iteration: k})
			}
			runs = append(runs, r)
		}
	}
	return runs
}

func TestChangePointSeries(t *testing.T) {
	fs := fixture.Tree(t, "metal", nil)
	w, err := audit.LookupWorkload("general")
	if err != nil {
		t.Fatal(err)
	}
	calls := 0
	e := New(Config{FS: fs, Workload: w, Version: "test", Tune: tune.Host{FS: fs},
		Runs: func(context.Context) ([]*run.Run, error) { calls++; return stepHistory(), nil }})
	for i := 0; i < 2; i++ { // the second refresh reuses the cached search
		if err := e.Refresh(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	mfs := parse(t, scrape(t, e.Handler()))
	h1 := map[string]string{"host": "h1", "probe": "cpu", "metric": "events_per_sec.t1", "params": "threads=1", "unit": "events/s", "better": "higher"}
	if v, ok := find(mfs["perflab_change_point_timestamp_seconds"], h1); !ok || v != float64(1700000000+8*3600) {
		t.Errorf("h1 change point time = %v, %v; want the 9th run's start %d", v, ok, 1700000000+8*3600)
	}
	if v, ok := find(mfs["perflab_change_point_shift_ratio"], h1); !ok || v > -0.09 || v < -0.11 {
		t.Errorf("h1 shift = %v, %v; want about −0.10", v, ok)
	}
	if v, ok := find(mfs["perflab_change_point_pvalue"], h1); !ok || v > 0.01 {
		t.Errorf("h1 p-value = %v, %v", v, ok)
	}
	if _, ok := find(mfs["perflab_change_point_timestamp_seconds"], map[string]string{"host": "h2"}); ok {
		t.Error("flat h2 has a change point series")
	}
	if calls != 2 {
		t.Errorf("runs loaded %d times, want once per refresh", calls)
	}
}
