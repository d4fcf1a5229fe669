package store

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/run"
	"github.com/perflab/perflab/internal/snapshot"
	"github.com/perflab/perflab/internal/testenv"
)

// writerSources makes n local SQLite stores to push from: each holds 10
// runs of its own and the same 5 shared runs, so every shared run is
// pushed by every writer at once.
func writerSources(t *testing.T, n int) []string {
	t.Helper()
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	mk := func(id, host string, i int) *run.Run {
		started := t0.Add(time.Duration(i) * time.Minute)
		r := &run.Run{Schema: run.Schema, ID: id, Probe: "cpu", Host: host, SnapshotID: "snap-" + host, Started: started,
			Ended: started.Add(time.Second), Complete: true, Stop: run.StopPrecision,
			Metrics: []run.Metric{{Name: "events_per_sec.t1", Unit: "events/s", Better: run.Higher}}}
		for it := range 3 {
			r.Samples = append(r.Samples, run.Sample{Metric: "events_per_sec.t1", Value: float64(1000 + i + it), Iteration: it})
		}
		r.Monitor = []run.MonitorPoint{{T: 1, UserPct: float64(i)}} // a run_series row each
		return r
	}
	var paths []string
	for k := range n {
		p := filepath.Join(t.TempDir(), fmt.Sprintf("w%d.db", k))
		s, err := Open(p)
		if err != nil {
			t.Fatal(err)
		}
		var runs []*run.Run
		for j := range 10 {
			runs = append(runs, mk(fmt.Sprintf("w%03d-%d", k, j), fmt.Sprintf("host%03d", k), j))
		}
		for j := range 5 {
			runs = append(runs, mk(fmt.Sprintf("shared-%d", j), "shared", 100+j))
		}
		snaps := []*snapshot.Snapshot{
			{Schema: snapshot.Schema, ID: "snap-" + fmt.Sprintf("host%03d", k), TakenAt: t0, Host: snapshot.Host{Hostname: fmt.Sprintf("host%03d", k)}},
			{Schema: snapshot.Schema, ID: "snap-shared", TakenAt: t0, Host: snapshot.Host{Hostname: "shared"}},
		}
		if err := s.CopyRuns(context.Background(), runs, snaps); err != nil {
			t.Fatal(err)
		}
		s.Close()
		paths = append(paths, p)
	}
	return paths
}

// checkConcurrentPush: 100 writers, each its own store handle as separate
// processes would be, push at once into dst; none fails, every run is
// stored exactly once with all its samples and medians (and in its host's
// list of medians), and the runs the writers say they added sum to the
// runs stored (each added by one).
func checkConcurrentPush(t *testing.T, dst string) {
	const writers, sources = 100, 20
	srcs := writerSources(t, sources)
	if s, err := Open(dst); err != nil { // the schema, as the first push would make it
		t.Fatal(err)
	} else {
		s.Close()
	}
	ctx := context.Background()
	var wg sync.WaitGroup
	added := make([]int, writers)
	errs := make([]error, writers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d, err := Open(dst)
			if err != nil {
				errs[w] = err
				return
			}
			defer d.Close()
			src, err := OpenReadOnly(srcs[w%sources])
			if err != nil {
				errs[w] = err
				return
			}
			defer src.Close()
			res, err := Push(ctx, d, src, nil)
			added[w], errs[w] = res.Added, err
			if err == nil && res.Added+res.Present != 15 {
				errs[w] = fmt.Errorf("added %d + present %d, want 15", res.Added, res.Present)
			}
		}()
	}
	wg.Wait()
	for w, err := range errs {
		if err != nil {
			t.Errorf("writer %d: %v", w, err)
		}
	}
	s, err := OpenReadOnly(dst)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	want := sources*10 + 5
	total := 0
	for _, n := range added {
		total += n
	}
	if total != want {
		t.Errorf("writers added %d runs in all, want %d (each run added by exactly one)", total, want)
	}
	for table, per := range map[string]int{"runs": 1, "samples": 3, "run_metrics": 1, "run_series": 1} {
		var n, distinct int
		if err := s.db.QueryRow(`SELECT count(*) FROM ` + table).Scan(&n); err != nil {
			t.Fatal(err)
		}
		col := "id"
		if table != "runs" {
			col = "run_id"
		}
		if err := s.db.QueryRow(`SELECT count(DISTINCT ` + col + `) FROM ` + table).Scan(&distinct); err != nil {
			t.Fatal(err)
		}
		if n != want*per || distinct != want {
			t.Errorf("%s: %d rows of %d runs, want %d of %d", table, n, distinct, want*per, want)
		}
	}
	// Every writer appended its runs' medians to the hosts' lists, the
	// 100 writers of the shared host at once: none lost or doubled.
	checkHostMedians(t, s)
	checkHostLabels(t, s)
}

func TestConcurrentPushSQLite(t *testing.T) {
	checkConcurrentPush(t, filepath.Join(t.TempDir(), "shared.db"))
}

func TestConcurrentPushPostgres(t *testing.T) {
	testenv.Short(t)
	checkConcurrentPush(t, testenv.Postgres(t))
}
