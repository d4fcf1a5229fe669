package store

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/run"
	"github.com/perflab/perflab/internal/testenv"
)

// openPG opens a fresh database on a private PostgreSQL server.
func openPG(t *testing.T) (*Store, string) {
	t.Helper()
	dsn := testenv.Postgres(t)
	s, err := Open(dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, dsn
}

// fill saves the same runs into s: two snapshots, three labels, ids that
// sort differently bytewise and in a natural-language collation.
func fill(t *testing.T, s *Store) {
	t.Helper()
	t0 := time.Date(2025, 5, 1, 12, 0, 0, 0, time.UTC)
	for i, id := range []string{"a1", "B2", "a3", "_4", "ab5"} {
		snap := fmt.Sprintf("snap%d", i%2)
		r := newRun(id, []string{"before", "after", ""}[i%3], "cpu", snap, t0.Add(time.Duration(i/2)*time.Minute))
		if err := s.SaveRun(ctx, r, newSnap(snap)); err != nil {
			t.Fatal(err)
		}
	}
}

func TestPostgresSameAsSQLite(t *testing.T) {
	pg, _ := openPG(t)
	lite, _ := openTemp(t)
	fill(t, pg)
	fill(t, lite)
	for _, f := range []Filter{{}, {Label: "before"}, {Limit: 2}, {Host: "nope"}} {
		a, err := pg.Runs(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		b, err := lite.Runs(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(a, b) {
			t.Errorf("Runs(%+v) differ:\npostgres %v\nsqlite   %v", f, ids(a), ids(b))
		}
	}
	la, _ := pg.Labels(ctx)
	lb, _ := lite.Labels(ctx)
	if !reflect.DeepEqual(la, lb) || len(la) != 2 {
		t.Errorf("labels: postgres %v sqlite %v", la, lb)
	}
	_, errA := pg.Run(ctx, "a")
	_, errB := lite.Run(ctx, "a")
	if !errors.Is(errA, ErrAmbiguous) || errA.Error() != errB.Error() {
		t.Errorf("ambiguous prefix: postgres %v, sqlite %v", errA, errB)
	}
	snap, err := pg.Snapshot(ctx, "snap1")
	if err != nil || snap.Sysctl["vm.swappiness"] != "10" {
		t.Errorf("snapshot: %v %+v", err, snap)
	}
	if err := pg.SaveRun(ctx, newRun("a1", "", "cpu", "", time.Now()), nil); !errors.Is(err, ErrExists) {
		t.Errorf("saving an id twice: %v", err)
	}
	if err := pg.Delete(ctx, "ab5"); err != nil {
		t.Fatal(err)
	}
	if _, err := pg.Run(ctx, "ab5"); !errors.Is(err, ErrNotFound) {
		t.Errorf("deleted run still found: %v", err)
	}
}

func ids(rs []*run.Run) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.ID)
	}
	return out
}

// TestPostgresConcurrentWriters is many perflab processes sharing one new
// database: 8 stores (each its own connection pool, as separate processes
// have) open it at the same moment, so they race to migrate it, then each
// saves 50 runs, half of them referring to a snapshot the others save too.
func TestPostgresConcurrentWriters(t *testing.T) {
	testenv.Short(t)
	dsn := testenv.Postgres(t)
	const writers, each = 8, 50
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	start := make(chan struct{})
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			<-start
			s, err := Open(dsn)
			if err != nil {
				errs <- err
				return
			}
			defer s.Close()
			for i := 0; i < each; i++ {
				snap := fmt.Sprintf("shared%d", i%5)
				if i%2 == 1 {
					snap = fmt.Sprintf("own-%d-%d", w, i)
				}
				r := newRun(fmt.Sprintf("w%d-r%02d", w, i), fmt.Sprintf("writer%d", w), "cpu", snap, time.Unix(int64(i), 0))
				if err := s.SaveRun(ctx, r, newSnap(snap)); err != nil {
					errs <- err
					return
				}
			}
		}(w)
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	s, err := OpenReadOnly(dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	runs, err := s.Runs(ctx, Filter{})
	if err != nil {
		t.Fatal(err)
	}
	samples := 0
	for _, r := range runs {
		samples += len(r.Samples)
	}
	if len(runs) != writers*each || samples != writers*each*4 {
		t.Errorf("stored %d runs with %d samples, want %d with %d", len(runs), samples, writers*each, writers*each*4)
	}
	var snaps int
	if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM snapshots`).Scan(&snaps); err != nil || snaps != 5+writers*each/2 {
		t.Errorf("snapshots: %d (%v), want %d", snaps, err, 5+writers*each/2)
	}
	var v int
	if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM schema_version`).Scan(&v); err != nil || v != 1 {
		t.Errorf("schema_version has %d rows (%v), want 1: migrated more than once", v, err)
	}
}

func TestPostgresReadOnly(t *testing.T) {
	dsn := testenv.Postgres(t)
	if _, err := OpenReadOnly(dsn); !errors.Is(err, ErrNoDatabase) {
		t.Fatalf("empty database read-only: %v", err)
	}
	w, err := Open(dsn)
	if err != nil {
		t.Fatal(err)
	}
	fill(t, w)
	w.Close()
	r, err := OpenReadOnly(dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if got, err := r.Runs(ctx, Filter{}); err != nil || len(got) != 5 {
		t.Errorf("read-only list: %d runs, %v", len(got), err)
	}
	if err := r.SaveRun(ctx, newRun("zz", "", "cpu", "", time.Now()), nil); !errors.Is(err, ErrReadOnly) {
		t.Errorf("write through a read-only store: %v", err)
	}
	// The server itself refuses: the session is read-only, not only the
	// Store value.
	if _, err := r.db.ExecContext(ctx, `DELETE FROM runs`); !errors.Is(r.writeErr(err), ErrReadOnly) {
		t.Errorf("server accepted a write on a read-only session: %v", err)
	}
}

func TestPostgresBadURL(t *testing.T) {
	_, err := Open("postgres://u:secret@[::1")
	if !errors.Is(err, ErrBadPath) || strings.Contains(err.Error(), "secret") {
		t.Errorf("bad URL: %v", err)
	}
	dsn := testenv.Postgres(t)
	bad := strings.Replace(dsn, "/t", "/nosuchdb", 1)
	if _, err := Open(bad); !errors.Is(err, ErrBadPath) || !strings.Contains(err.Error(), "nosuchdb") {
		t.Errorf("missing database: %v", err)
	}
	if got := redactDSN("postgres://u:secret@h/db?password=two"); strings.Contains(got, "secret") || strings.Contains(got, "two") {
		t.Errorf("password shown: %s", got)
	}
}

func TestPushIdempotent(t *testing.T) {
	lite, _ := openTemp(t)
	fill(t, lite)
	// A run whose snapshot was never stored (imported without it).
	if err := lite.SaveRun(ctx, newRun("nosnap", "", "cpu", "gone", time.Now()), nil); err != nil {
		t.Fatal(err)
	}
	pg, _ := openPG(t)
	if err := pg.SaveRun(ctx, newRun("a3", "", "cpu", "", time.Now()), nil); err != nil {
		t.Fatal(err)
	}
	res, err := Push(ctx, pg, lite, nil)
	if err != nil || res != (PushResult{Added: 5, Present: 1}) {
		t.Fatalf("first push: %+v %v", res, err)
	}
	res, err = Push(ctx, pg, lite, nil)
	if err != nil || res != (PushResult{Added: 0, Present: 6}) {
		t.Fatalf("second push: %+v %v", res, err)
	}
	want, _ := lite.Run(ctx, "ab5")
	got, err := pg.Run(ctx, "ab5")
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("pushed run differs:\n got %+v\nwant %+v", got, want)
	}
	if _, err := pg.Snapshot(ctx, "snap0"); err != nil {
		t.Errorf("snapshot not pushed: %v", err)
	}
	all, _ := pg.Runs(ctx, Filter{})
	if len(all) != 6 {
		t.Errorf("%d runs after two pushes, want 6", len(all))
	}
}

// TestManySamples crosses the sample batch boundary on both backends.
func TestManySamples(t *testing.T) {
	lite, _ := openTemp(t)
	pg, _ := openPG(t)
	r := newRun("big", "", "cpu", "", time.Unix(1, 0))
	r.Samples = nil
	for i := 0; i < 2*sampleBatch+7; i++ {
		r.Samples = append(r.Samples, run.Sample{Metric: "zeta", Iteration: i, Value: float64(i)}, run.Sample{Metric: "alpha", Iteration: i, Value: -float64(i)})
	}
	for _, s := range []*Store{lite, pg} {
		if err := s.SaveRun(ctx, r, nil); err != nil {
			t.Fatal(err)
		}
		got, err := s.Run(ctx, "big")
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got.Samples, r.Samples) {
			t.Errorf("%s: %d samples back, want %d in order", s.Path, len(got.Samples), len(r.Samples))
		}
	}
}
