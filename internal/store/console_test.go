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
