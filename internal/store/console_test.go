package store

import (
	"reflect"
	"testing"
	"time"
)

// The console's queries answer alike on SQLite and PostgreSQL, and page,
// filter by time and read one metric as they say.
func TestConsoleQueries(t *testing.T) {
	lite, _ := openTemp(t)
	fill(t, lite)
	check := func(t *testing.T, s *Store) (hs []HostSummary, snaps []SnapshotRef, refs []RunRef, total int, phs []ProbeHost, mr []MetricRun) {
		t.Helper()
		var err error
		if hs, err = s.Hosts(ctx); err != nil {
			t.Fatal(err)
		}
		if snaps, err = s.SnapshotsOf(ctx, "h1", 5); err != nil {
			t.Fatal(err)
		}
		t0 := time.Date(2025, 5, 1, 12, 0, 0, 0, time.UTC)
		p := Page{Filter: Filter{Probe: "cpu", Limit: 2}, From: t0.Add(time.Minute), To: t0.Add(3 * time.Minute), Offset: 1}
		if refs, total, err = s.RunRefs(ctx, p); err != nil {
			t.Fatal(err)
		}
		if phs, err = s.ProbeHosts(ctx); err != nil {
			t.Fatal(err)
		}
		if mr, err = s.MetricRuns(ctx, Page{Filter: Filter{Limit: 3}}, "alpha"); err != nil {
			t.Fatal(err)
		}
		return
	}
	hs, snaps, refs, total, phs, mr := check(t, lite)
	// 5 runs started at t0, t0, t0+1m, t0+1m, t0+2m: the range [t0+1m,
	// t0+3m) holds 3; skipping the newest leaves 2.
	if len(hs) != 1 || hs[0].Runs != 5 || len(snaps) != 2 || total != 3 || len(refs) != 2 || refs[0].Started.Before(refs[1].Started) {
		t.Errorf("hosts %+v snaps %d refs %d/%d", hs, len(snaps), len(refs), total)
	}
	if len(phs) != 1 || phs[0].Newest != "ab5" {
		t.Errorf("probe hosts %+v", phs)
	}
	if len(mr) != 3 || !reflect.DeepEqual(mr[0].Values, []float64{2.5, 2.4}) || mr[0].CPUs != "1" || mr[0].Params["size"] != "64KiB" {
		t.Errorf("metric runs %+v", mr)
	}
	t.Run("postgres", func(t *testing.T) {
		pg, _ := openPG(t)
		fill(t, pg)
		hs2, snaps2, refs2, total2, phs2, mr2 := check(t, pg)
		for _, c := range []struct {
			name string
			a, b any
		}{{"hosts", hs, hs2}, {"snapshots", snaps, snaps2}, {"refs", refs, refs2}, {"total", total, total2}, {"probe hosts", phs, phs2}, {"metric runs", mr, mr2}} {
			if !reflect.DeepEqual(c.a, c.b) {
				t.Errorf("%s: sqlite %+v, postgres %+v", c.name, c.a, c.b)
			}
		}
	})
}

// The host index's aggregate names the same newest run as ProbeHosts and
// NewestOfHost, and answers alike on SQLite and PostgreSQL.
func TestConsoleIndex(t *testing.T) {
	read := func(t *testing.T, s *Store) ([]PairSig, []HostSnap, []RunRef, string) {
		t.Helper()
		pairs, snaps, err := s.ConsoleIndex(ctx)
		if err != nil {
			t.Fatal(err)
		}
		newest, err := s.NewestOfHost(ctx, "h1", "")
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range []Filter{{}, {Limit: 2}, {Label: "before"}, {Probe: "cpu", Host: "h1", Limit: 3}} {
			a, err := s.Runs(ctx, f)
			if err != nil {
				t.Fatal(err)
			}
			b, err := s.RunsBatch(ctx, f)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(a, b) {
				t.Errorf("%+v: RunsBatch %v, Runs %v", f, ids(b), ids(a))
			}
		}
		sig, err := s.StoreSig(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return pairs, snaps, newest, sig
	}
	lite, _ := openTemp(t)
	fill(t, lite)
	pairs, snaps, newest, sig := read(t, lite)
	phs, _ := lite.ProbeHosts(ctx)
	if len(pairs) != 1 || len(phs) != 1 || pairs[0].Newest != phs[0].Newest || pairs[0].Runs != phs[0].Runs {
		t.Errorf("pairs %+v, probe hosts %+v", pairs, phs)
	}
	if len(newest) != 1 || newest[0].ID != phs[0].Newest {
		t.Errorf("newest of h1: %+v, want %s", newest, phs[0].Newest)
	}
	if len(snaps) != 1 || snaps[0].Host != "h1" {
		t.Errorf("snapshots %+v", snaps)
	}
	t.Run("postgres", func(t *testing.T) {
		pg, _ := openPG(t)
		fill(t, pg)
		pairs2, snaps2, newest2, sig2 := read(t, pg)
		if !reflect.DeepEqual(pairs, pairs2) || !reflect.DeepEqual(snaps, snaps2) || !reflect.DeepEqual(newest, newest2) || sig != sig2 {
			t.Errorf("sqlite %+v %+v %+v %s\npostgres %+v %+v %+v %s", pairs, snaps, newest, sig, pairs2, snaps2, newest2, sig2)
		}
	})
}
