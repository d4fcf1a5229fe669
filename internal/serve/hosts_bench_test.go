package serve

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/compare"
	"github.com/perflab/perflab/internal/run"
	"github.com/perflab/perflab/internal/store"
)

// fleetIndex is a complete host index of hosts hosts with probes probes
// each, shaped like the fleet store's (bench/fleetstore.sh: 10 probes × 10
// runs a host, so 9 baseline runs a verdict; every 100th host's first
// probe worse, every 7th host with failing findings): what the hosts page
// reads on a console whose index is built. The verdicts are made up; the
// page's cost is per host and row, not in the numbers.
func fleetIndex(hosts, probes int) []*hostEntry {
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	hs := make([]*hostEntry, hosts)
	for i := range hs {
		h := &hostEntry{Host: fmt.Sprintf("node%05d", i), Runs: probes * 10, LastRun: t0.Add(time.Duration(i) * time.Second),
			Snap:    store.HostSnap{Host: fmt.Sprintf("node%05d", i), ID: fmt.Sprintf("%016x", 1<<40+i), TakenAt: t0},
			Audited: true, Summary: &snapSummary{Kernel: "6.18.0-1-amd64", CPU: "AMD EPYC 7B13", Threads: 2, MemGiB: 24, Virt: "kvm"}}
		if i%7 == 0 {
			h.Findings, h.Worst = map[string]int{"medium": 2, "low": 1}, "medium"
		}
		for p := range probes {
			probe := fmt.Sprintf("probe%02d", p)
			d := &drift{Probe: probe, Metric: "ops", Unit: "ops/s", Better: run.Higher, Latest: 100, Previous: 101, Median: 100.5,
				Runs: 9, Verdict: compare.Equivalent, Calibration: 9, RunID: fmt.Sprintf("%016x", i*100+p*10+9), PreviousID: fmt.Sprintf("%016x", i*100+p*10+8)}
			if i%100 == 0 && p == 0 {
				d.Verdict = compare.Worse
			}
			lo, mid, hi := -0.8, -0.5, 0.2
			d.DeltaLoPct, d.DeltaPct, d.DeltaHiPct = &lo, &mid, &hi
			for k := range 9 {
				d.BaselineIDs = append(d.BaselineIDs, fmt.Sprintf("%016x", i*100+p*10+k))
			}
			h.Pairs = append(h.Pairs, &pairEntry{PairSig: store.PairSig{Probe: probe, Host: h.Host, Runs: 10, Newest: d.RunID, NewestAt: h.LastRun, Sig: "s"},
				Done: true, Drift: d})
		}
		hs[i] = h
	}
	return hs
}

// fleetServer is a console over a SQLite store whose hosts hosts each
// have one run labelled "fleet" (host_labels: a row per host, as on the
// fleet store), with fleetIndex's index loaded.
func fleetServer(b *testing.B, hosts, probes int) *Server {
	path := filepath.Join(b.TempDir(), "perflab.db")
	st, err := store.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	src := readReal(b).Runs[0]
	var runs []*run.Run
	for i := range hosts {
		r := cloneRun(b, src)
		r.ID, r.Host, r.Label, r.SnapshotID = fmt.Sprintf("b%015x", i), fmt.Sprintf("node%05d", i), "fleet", ""
		runs = append(runs, r)
	}
	if err := st.CopyRuns(context.Background(), runs, nil); err != nil {
		b.Fatal(err)
	}
	st.Close()
	s := New(openRO(b, path), Config{Listen: "127.0.0.1:0"})
	s.ix.mu.Lock()
	s.ix.setHosts(fleetIndex(hosts, probes))
	s.ix.loaded, s.ix.readAt = true, time.Now().UTC()
	s.ix.mu.Unlock()
	return s
}

// BenchmarkHostsPage is the hosts page's server time over a complete
// index of 10,000 hosts × 10 probes (the fleet store's shape), page by
// page as bench/console.sh requests them; ns/op and allocs/op are one
// request. The label filter's query is SQLite's here (PostgreSQL's on the
// fleet store: docs/fleet-scale.md).
func BenchmarkHostsPage(b *testing.B) {
	s := fleetServer(b, 10000, 10)
	h := s.Handler()
	// The label's hosts read from the store on every request (as on the
	// first request of a label after the index read the store).
	uncached := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.ix.mu.Lock()
		s.ix.labels = nil
		s.ix.mu.Unlock()
		h.ServeHTTP(w, r)
	})
	for _, p := range []struct {
		name, url string
		h         http.Handler
	}{
		{"hosts", "/", h},
		{"json", "/?format=json", h},
		{"worse", "/?verdict=worse", h},
		{"name-page-3", "/?host=node000&page=3&per=20", h},
		{"probe-label", "/?probe=probe03&label=fleet", h},
		{"by-name-page-100", "/?sort=name&page=100", h},
		{"probe-label-uncached", "/?probe=probe03&label=fleet", uncached},
	} {
		b.Run(p.name, func(b *testing.B) {
			b.ReportAllocs()
			size := 0
			for b.Loop() {
				rec := httptest.NewRecorder()
				p.h.ServeHTTP(rec, localRequest("GET", p.url, nil))
				if rec.Code != http.StatusOK {
					b.Fatalf("%s: %d %s", p.url, rec.Code, rec.Body.String())
				}
				size = rec.Body.Len()
			}
			b.ReportMetric(float64(size), "page-bytes")
		})
	}
}
