package serve

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/store"
	"github.com/perflab/perflab/internal/testenv"
)

// driftStore is a generated store with more runs per pair than a drift
// reads (so the limit matters), a step on the first host, snapshots.
func driftStore(t *testing.T, target string, hosts int) {
	t.Helper()
	start := time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)
	genStore(t, target, genSpec{Hosts: hosts, RunsPerHost: driftRuns + 6, Steps: 1, Start: start, Every: 12 * time.Hour, SnapEvery: 9})
	st, err := store.Open(target)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	// The last host's newest cpu run 30% slower: a worse verdict.
	ctx := context.Background()
	runs, err := st.Runs(ctx, store.Filter{Host: hostName(hosts - 1), Probe: "cpu", Limit: 1})
	if err != nil || len(runs) != 1 {
		t.Fatalf("newest cpu run of %s: %v", hostName(hosts-1), err)
	}
	slow := *runs[0]
	slow.ID, slow.Started, slow.Ended = "slow", slow.Started.Add(time.Hour), slow.Ended.Add(time.Hour)
	slow.Samples = slices.Clone(slow.Samples)
	for i := range slow.Samples {
		slow.Samples[i].Value *= 0.7
	}
	if err := st.SaveRun(ctx, &slow, nil); err != nil {
		t.Fatal(err)
	}
}

// The index's batched path (driftsOf: the runs of many pairs read at
// once) gives every pair exactly the drift, verdict and reason of the
// one-pair path (driftOf), on SQLite and PostgreSQL; a pair whose newest
// run is not among the runs read (added since the aggregate) is read
// alone.
func TestDriftsOfSameAsDriftOf(t *testing.T) {
	check := func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		s := New(st, Config{Listen: "127.0.0.1:0"})
		phs, err := st.ProbeHosts(ctx)
		if err != nil {
			t.Fatal(err)
		}
		// The first pair with an older run as its "newest": a pair read
		// before newer runs came.
		older, _, err := st.RunRefs(ctx, store.Page{Filter: store.Filter{Probe: phs[0].Probe, Host: phs[0].Host, Limit: 1}, Offset: driftRuns + 2})
		if err != nil || len(older) != 1 {
			t.Fatalf("an older run of %s on %s: %v", phs[0].Probe, phs[0].Host, err)
		}
		phs = append(phs, store.ProbeHost{Probe: phs[0].Probe, Host: phs[0].Host, Newest: older[0].ID})
		// And one whose newest run was deleted meanwhile: that pair
		// fails alone.
		gone := store.ProbeHost{Probe: phs[1].Probe, Host: phs[1].Host, Newest: "deleted-meanwhile"}
		got, errs, err := s.driftsOf(ctx, append(slices.Clone(phs), gone))
		if err != nil {
			t.Fatal(err)
		}
		if i := slices.IndexFunc(errs, func(e error) bool { return e != nil }); i != len(phs) {
			t.Fatalf("the first pair failing is %d (%v), want only the deleted run's, %d", i, errs, len(phs))
		}
		worse := 0
		for i, ph := range phs {
			want, err := s.driftOf(ctx, ph)
			if err != nil {
				t.Fatal(err)
			}
			gj, _ := json.Marshal(got[i])
			wj, _ := json.Marshal(want)
			if string(gj) != string(wj) {
				t.Errorf("%s on %s (newest %s):\nbatched %s\nalone   %s", ph.Probe, ph.Host, ph.Newest, gj, wj)
			}
			if want != nil && want.Verdict == "worse" {
				worse++
			}
		}
		if len(phs) < 8 || worse == 0 {
			t.Errorf("%d pairs, %d worse: the store lacks the cases it should hold", len(phs), worse)
		}
	}
	t.Run("sqlite", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "perflab.db")
		driftStore(t, path, 4)
		check(t, openRO(t, path))
	})
	t.Run("postgres", func(t *testing.T) {
		dsn := testenv.Postgres(t)
		driftStore(t, dsn, 4)
		st, err := store.Open(dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		check(t, st)
	})
}

// A hosts page on a store with more pending verdicts than it computes
// first answers with every probe of every row either with its exact
// verdict (the one-pair path's) or marked pending, never both nor
// neither, however much its wait allowed; what it left is computed on,
// and the next pages show it. (Whether a verdict makes the first page is
// up to the machine's speed; what is shown is not.)
func TestHostsPagePending(t *testing.T) {
	path := filepath.Join(t.TempDir(), "perflab.db")
	start := time.Now()
	genStore(t, path, genSpec{Hosts: syncFill/2 + 4, RunsPerHost: 4, Steps: 1,
		Start: time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC), Every: 12 * time.Hour, SnapEvery: 4})
	t.Logf("generated in %s", time.Since(start))
	st := openRO(t, path)
	s := New(st, Config{Listen: "127.0.0.1:0"})
	h := s.Handler()
	ctx := context.Background()
	check := func(d hostsDoc) (pending int) {
		t.Helper()
		for _, r := range d.Hosts {
			var shown []string
			for _, x := range r.Drift {
				shown = append(shown, x.Probe)
				want, err := s.driftOf(ctx, store.ProbeHost{Probe: x.Probe, Host: r.Host, Newest: x.RunID})
				if err != nil {
					t.Fatal(err)
				}
				gj, _ := json.Marshal(x)
				wj, _ := json.Marshal(want)
				if string(gj) != string(wj) {
					t.Errorf("%s %s: page %s, driftOf %s", r.Host, x.Probe, gj, wj)
				}
			}
			for _, p := range r.Pending {
				if slices.Contains(shown, p) {
					t.Errorf("%s %s: both a verdict and pending", r.Host, p)
				}
			}
			// A pair without an earlier run has no drift: every pair
			// here has 4 runs.
			if len(shown)+len(r.Pending) != 2 {
				t.Errorf("%s: verdicts of %v and pending %v, want the 2 probes between them", r.Host, shown, r.Pending)
			}
			if r.AuditPending == (r.Summary != nil) {
				t.Errorf("%s: audit pending %v with summary %v", r.Host, r.AuditPending, r.Summary)
			}
			pending += len(r.Pending)
		}
		return pending
	}
	var first hostsDoc
	getJSON(t, h, "/?format=json&per=12", &first)
	if first.Index.Pending == 0 && check(first) > 0 {
		t.Error("rows pending while the index says none are")
	}
	check(first)
	// The page's fill runs on after it answered; the rest is the build's.
	s.build(ctx)
	var later hostsDoc
	getJSON(t, h, "/?format=json&per=12&page=1", &later)
	if n := check(later); n > 0 || later.Index.Pending != 0 {
		t.Errorf("after the build: %d of the page's verdicts and %d of the index pending", n, later.Index.Pending)
	}
	checkSummaries(t, s)
}

// Under Serve, the hosts page waits for the background read of the
// store's hosts only until its deadline: before the read ends (or
// begins) it answers that the index is being read, with no hosts (never
// a partial list); after a failed read a page starts one that outlives
// it.
func TestHostsPageWhileIndexRead(t *testing.T) {
	s := New(openRO(t, plantedStore(t)), Config{Listen: "127.0.0.1:0"})
	h := s.Handler()
	s.ix.mu.Lock()
	s.ix.serving = true
	s.ix.reading = make(chan struct{}) // the build's read, not ending
	s.ix.mu.Unlock()
	var d hostsDoc
	getJSON(t, h, "/?format=json", &d)
	if d.Index.Loaded || len(d.Hosts) != 0 || d.Total != 0 {
		t.Fatalf("while the read is in flight: index %+v, %d hosts of %d", d.Index, len(d.Hosts), d.Total)
	}
	if code, body := get(t, h, "/"); code != 200 || !strings.Contains(body, `"loaded":false`) {
		t.Errorf("HTML page while reading: %d", code)
	}
	s.ix.mu.Lock()
	s.ix.reading = nil // ended, the build's read not begun yet
	s.ix.mu.Unlock()
	getJSON(t, h, "/?format=json", &d)
	if d.Index.Loaded || len(d.Hosts) != 0 {
		t.Fatalf("before the build's read: index %+v, %d hosts", d.Index, len(d.Hosts))
	}
	s.ix.mu.Lock()
	s.ix.readErr = errors.New("the database went away") // the read failed
	s.ix.mu.Unlock()
	for start := time.Now(); ; {
		getJSON(t, h, "/?format=json", &d)
		if !d.Index.Loaded && len(d.Hosts) != 0 {
			t.Fatalf("not loaded, yet %d hosts", len(d.Hosts))
		}
		if d.Index.Loaded {
			break
		}
		if time.Since(start) > time.Minute {
			t.Fatal("the page's own read never loaded the index")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if d.Total != 4 || len(d.Hosts) != 4 {
		t.Errorf("loaded: %d hosts of %d, want 4", len(d.Hosts), d.Total)
	}
}
