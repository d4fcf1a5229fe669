package serve

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"
)

// benchStore is the 10,000-run store of bench/serve.sh: 10 hosts × 500
// runs of each of the two real probes (plus the 6 real runs), 12 hours
// apart, a snapshot every 20 runs, steps on two hosts. Generating it takes
// a while, so PERFLAB_SERVE_BENCH_DB names a file to keep it in between
// runs (made when missing).
func benchStore(b *testing.B) string {
	path := os.Getenv("PERFLAB_SERVE_BENCH_DB")
	if path == "" {
		path = filepath.Join(b.TempDir(), "perflab.db")
	}
	if _, err := os.Stat(path); err != nil {
		start := time.Now()
		genStore(b, path, genSpec{Hosts: 10, RunsPerHost: 500, Steps: 2,
			Start: time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC), Every: 12 * time.Hour, SnapEvery: 20})
		b.Logf("generated %s in %s", path, time.Since(start).Round(time.Second))
	}
	return path
}

// BenchmarkPages measures the server time of each view on the
// 10,000-run store, one request at a time, and reports the median and the
// 95th percentile (p95-ms, the figure docs/serve.md holds to < 100 ms).
func BenchmarkPages(b *testing.B) {
	st := openRO(b, benchStore(b))
	h := New(st, Config{Listen: "127.0.0.1:0"}).Handler()
	for _, p := range []struct{ name, url string }{
		{"hosts", "/"},
		{"history", "/history?probe=cpu&host=node01"},
		{"history-3-hosts", "/history?probe=syscall&host=node01&host=node02&host=node03&n=50"},
		{"history-zoom", "/history?probe=cpu&host=node01&from=2026-06-01&to=2026-07-01"},
		{"compare-labels", "/compare?s=node01-w000&s=node01-w024"},
		{"compare-hosts", "/compare?s=host:node01&s=host:node05"},
		{"runs-first-page", "/runs"},
		{"runs-deep-page", "/runs?page=150&per=50"},
		{"runs-host", "/runs?host=node07&probe=cpu&page=3"},
		{"audit", "/audit?host=node03"},
		{"snapshots", "/snapshots?host=node01"},
		{"hosts-json", "/?format=json"},
	} {
		b.Run(p.name, func(b *testing.B) { measure(b, h, p.url) })
	}
	// Cold: a new server for every request, so no cache helps (the hosts
	// view's audits, the comparisons).
	for _, p := range []struct{ name, url string }{
		{"hosts-cold", "/"},
		{"compare-labels-cold", "/compare?s=node01-w000&s=node01-w024"},
		{"compare-hosts-cold", "/compare?s=host:node01&s=host:node05"},
	} {
		b.Run(p.name, func(b *testing.B) {
			measure(b, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				New(st, Config{Listen: "127.0.0.1:0"}).Handler().ServeHTTP(w, r)
			}), p.url)
		})
	}
}

func measure(b *testing.B, h http.Handler, url string) {
	ds := make([]time.Duration, 0, b.N)
	for b.Loop() {
		rec := httptest.NewRecorder()
		start := time.Now()
		h.ServeHTTP(rec, localRequest("GET", url, nil))
		ds = append(ds, time.Since(start))
		if rec.Code != http.StatusOK {
			b.Fatalf("%s: %d %s", url, rec.Code, rec.Body.String())
		}
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	q := func(f float64) float64 { return float64(ds[int(f*float64(len(ds)-1))]) / 1e6 }
	b.ReportMetric(q(0.5), "p50-ms")
	b.ReportMetric(q(0.95), "p95-ms")
}
