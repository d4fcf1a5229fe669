package store

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/run"
	"github.com/perflab/perflab/internal/snapshot"
)

var ctx = context.Background()

func newRun(id, label, probe, snap string, started time.Time) *run.Run {
	return &run.Run{
		Schema: run.Schema, ID: id, Label: label, Suite: "quick", Probe: probe,
		ToolVersion: "dev", Params: map[string]string{"size": "64KiB"}, CPUs: "1",
		Host: "h1", SnapshotID: snap, Started: started.UTC(), Ended: started.Add(time.Second).UTC(),
		Complete: true, Stop: run.StopPrecision, Precision: 0.01,
		Metrics: []run.Metric{
			{Name: "zeta", Unit: "ns", Better: run.Lower},
			{Name: "alpha", Unit: "GB/s", Better: run.Higher},
		},
		Samples: []run.Sample{
			{Metric: "zeta", Value: 10, Iteration: 0}, {Metric: "alpha", Value: 2.5, Iteration: 0},
			{Metric: "zeta", Value: 11, Iteration: 1}, {Metric: "alpha", Value: 2.4, Iteration: 1},
		},
		Monitor: []run.MonitorPoint{{T: 1, UserPct: 48.5, CtxSwitches: 1234, RunQueue: 3, PSIIO: 0.25}},
	}
}

func newSnap(id string) *snapshot.Snapshot {
	return &snapshot.Snapshot{
		Schema: snapshot.Schema, ID: id, TakenAt: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC),
		Root: "/", Host: snapshot.Host{Hostname: "h1"}, Sysctl: map[string]string{"vm.swappiness": "10"},
		Unavailable: map[string]string{},
	}
}

func openTemp(t *testing.T) (*Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "perflab.db")
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, path
}

func TestRoundTrip(t *testing.T) {
	s, _ := openTemp(t)
	t0 := time.Date(2025, 5, 1, 12, 0, 0, 123, time.UTC)
	in := newRun("abc123", "before", "memory.latency", "snap1", t0)
	if err := s.SaveRun(ctx, in, newSnap("snap1")); err != nil {
		t.Fatal(err)
	}
	got, err := s.Run(ctx, "abc")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, in) {
		t.Errorf("run changed in the store:\n got %+v\nwant %+v", got, in)
	}
	snap, err := s.Snapshot(ctx, "snap1")
	if err != nil {
		t.Fatal(err)
	}
	if snap.Sysctl["vm.swappiness"] != "10" || !snap.TakenAt.Equal(newSnap("").TakenAt) {
		t.Errorf("snapshot changed in the store: %+v", snap)
	}
}

func TestSnapshotStoredOnce(t *testing.T) {
	s, _ := openTemp(t)
	t0 := time.Now()
	for i, id := range []string{"r1", "r2"} {
		if err := s.SaveRun(ctx, newRun(id, "", "cpu", "snapA", t0.Add(time.Duration(i)*time.Second)), newSnap("snapA")); err != nil {
			t.Fatal(err)
		}
	}
	var n int
	if err := s.db.QueryRow(`SELECT count(*) FROM snapshots`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("snapshots stored %d times (err %v), want once", n, err)
	}
	// Deleting one run keeps the snapshot the other still uses; deleting
	// the last removes it.
	if err := s.Delete(ctx, "r1"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Snapshot(ctx, "snapA"); err != nil {
		t.Fatalf("snapshot still in use was deleted: %v", err)
	}
	if err := s.Delete(ctx, "r2"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Snapshot(ctx, "snapA"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("orphaned snapshot kept: %v", err)
	}
	if err := s.db.QueryRow(`SELECT count(*) FROM samples`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("%d samples left after deleting every run", n)
	}
}

func TestSaveRunRefusesDuplicateAndInvalid(t *testing.T) {
	s, _ := openTemp(t)
	r := newRun("dup1", "", "cpu", "", time.Now())
	if err := s.SaveRun(ctx, r, nil); err != nil {
		t.Fatal(err)
	}
	r2 := newRun("dup1", "other", "cpu", "", time.Now())
	r2.Samples = r2.Samples[:1]
	if err := s.SaveRun(ctx, r2, nil); !errors.Is(err, ErrExists) {
		t.Fatalf("duplicate id: err %v, want ErrExists", err)
	}
	got, err := s.Run(ctx, "dup1")
	if err != nil || got.Label != "" || len(got.Samples) != 4 {
		t.Fatalf("duplicate save changed the stored run: %+v %v", got, err)
	}
	bad := newRun("bad1", "", "cpu", "", time.Now())
	bad.Samples = append(bad.Samples, run.Sample{Metric: "undeclared", Value: 1})
	if err := s.SaveRun(ctx, bad, nil); err == nil {
		t.Fatal("stored a run with a sample of an undeclared metric")
	}
	if _, err := s.Run(ctx, "bad1"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("invalid run was partly stored: %v", err)
	}
	mismatch := newRun("mm1", "", "cpu", "snapX", time.Now())
	if err := s.SaveRun(ctx, mismatch, newSnap("snapY")); err == nil {
		t.Fatal("stored a run with another run's snapshot")
	}
}

func TestPrefixLookup(t *testing.T) {
	s, _ := openTemp(t)
	t0 := time.Now()
	for i, id := range []string{"aa11", "aa22", "b%_1"} {
		if err := s.SaveRun(ctx, newRun(id, "", "cpu", "", t0.Add(time.Duration(i))), nil); err != nil {
			t.Fatal(err)
		}
	}
	if r, err := s.Run(ctx, "aa2"); err != nil || r.ID != "aa22" {
		t.Errorf("prefix aa2: %v %v", r, err)
	}
	if _, err := s.Run(ctx, "aa"); !errors.Is(err, ErrAmbiguous) || !strings.Contains(err.Error(), "aa11, aa22") || strings.Count(err.Error(), "ambiguous") > 0 {
		t.Errorf("prefix aa: err %v, want ambiguous naming both", err)
	}
	if _, err := s.Run(ctx, "zz"); !errors.Is(err, ErrNotFound) {
		t.Errorf("prefix zz: err %v, want not found", err)
	}
	// LIKE wildcards in user input are literal.
	if _, err := s.Run(ctx, "%"); !errors.Is(err, ErrNotFound) {
		t.Errorf("prefix %%: err %v, want not found", err)
	}
	if r, err := s.Run(ctx, "b%_"); err != nil || r.ID != "b%_1" {
		t.Errorf("prefix b%%_: %v %v", r, err)
	}
	if err := s.Delete(ctx, "aa"); !errors.Is(err, ErrAmbiguous) {
		t.Errorf("ambiguous delete: %v", err)
	}
	if _, err := s.Run(ctx, ""); err == nil {
		t.Error("empty id matched a run")
	}
}

func TestRunsFilterAndOrder(t *testing.T) {
	s, _ := openTemp(t)
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	save := func(id, label, probe string, h int) {
		t.Helper()
		r := newRun(id, label, probe, "", t0.Add(time.Duration(h)*time.Hour))
		if err := s.SaveRun(ctx, r, nil); err != nil {
			t.Fatal(err)
		}
	}
	save("r1", "before", "cpu", 1)
	save("r2", "after", "cpu", 3)
	save("r3", "before", "disk", 2)
	save("r4", "", "cpu", 4)
	ids := func(f Filter) string {
		rs, err := s.Runs(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, r := range rs {
			out = append(out, r.ID)
		}
		return strings.Join(out, ",")
	}
	for _, c := range []struct {
		f    Filter
		want string
	}{
		{Filter{}, "r4,r2,r3,r1"},
		{Filter{Label: "before"}, "r3,r1"},
		{Filter{Probe: "cpu"}, "r4,r2,r1"},
		{Filter{Probe: "cpu", Label: "before"}, "r1"},
		{Filter{Limit: 2}, "r4,r2"},
		{Filter{Host: "nope"}, ""},
		{Filter{Suite: "quick", Limit: 1}, "r4"},
	} {
		if got := ids(c.f); got != c.want {
			t.Errorf("Runs(%+v) = %s, want %s", c.f, got, c.want)
		}
	}
	labels, err := s.Labels(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(labels) != 2 || labels[0].Label != "after" || labels[1].Label != "before" || labels[1].Runs != 2 || !labels[1].Newest.Equal(t0.Add(2*time.Hour)) {
		t.Errorf("labels = %+v", labels)
	}
}

func TestPersistsAcrossOpen(t *testing.T) {
	s, path := openTemp(t)
	if err := s.SaveRun(ctx, newRun("keep1", "x", "cpu", "", time.Now()), nil); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s2, err := Open("sqlite:" + path)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if _, err := s2.Run(ctx, "keep1"); err != nil {
		t.Fatalf("run lost on reopen: %v", err)
	}
}

// newerSchemaDB is a database holding run id, as a newer perflab (one
// schema ahead) would have left it.
func newerSchemaDB(t *testing.T, id string) string {
	t.Helper()
	s, path := openTemp(t)
	if err := s.SaveRun(ctx, newRun(id, "", "cpu", "", time.Now()), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.db.Exec(`UPDATE schema_version SET version = ?`, SchemaVersion+1); err != nil {
		t.Fatal(err)
	}
	s.Close()
	return path
}

func TestNewerSchemaRefusedUntouched(t *testing.T) {
	path := newerSchemaDB(t, "old1")
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Open(path)
	if !errors.Is(err, ErrNewerSchema) {
		t.Fatalf("newer schema: err %v, want ErrNewerSchema", err)
	}
	if !strings.Contains(err.Error(), "upgrade perflab") {
		t.Errorf("error does not say how to fix it: %v", err)
	}
	after, _ := os.ReadFile(path)
	if string(before) != string(after) {
		t.Error("opening a newer database changed it")
	}
	// The data is still there for the newer perflab.
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM runs`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("runs after refusal: %d, %v", n, err)
	}
}

func TestMigratesFromEmptyAndIsIdempotent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.db")
	for i := 0; i < 2; i++ {
		s, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		var v, rows int
		if err := s.db.QueryRow(`SELECT version, (SELECT count(*) FROM schema_version) FROM schema_version`).Scan(&v, &rows); err != nil {
			t.Fatal(err)
		}
		if v != SchemaVersion || rows != 1 {
			t.Errorf("open #%d: version %d in %d rows, want %d in 1", i, v, rows, SchemaVersion)
		}
		s.Close()
	}
}

func TestOpenRefusesBadTargets(t *testing.T) {
	dir := t.TempDir()
	foreign := filepath.Join(dir, "foreign.db")
	db, err := sql.Open("sqlite", foreign)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE t (x INTEGER)`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	garbage := filepath.Join(dir, "garbage.db")
	if err := os.WriteFile(garbage, []byte(strings.Repeat("not sqlite ", 500)), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ dsn, want string }{
		{filepath.Join(dir, "missing", "x.db"), "does not exist"},
		{dir, "is a directory"},
		{foreign, "not a perflab database"},
		{garbage, "not a SQLite database"},
		{"postgres://u@127.0.0.1:1/perflab?connect_timeout=2", "cannot connect to PostgreSQL"},
	} {
		s, err := Open(c.dsn)
		if err == nil {
			s.Close()
			t.Errorf("Open(%s) succeeded", c.dsn)
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("Open(%s): %v, want it to say %q", c.dsn, err, c.want)
		}
	}
	// Not SQLite at all is the user's wrong path (exit 2), not a failure
	// of the database.
	if _, err := Open(garbage); !errors.Is(err, ErrNotPerflab) {
		t.Errorf("Open(garbage): %v, want ErrNotPerflab", err)
	}
	if b, _ := os.ReadFile(garbage); !strings.HasPrefix(string(b), "not sqlite") {
		t.Error("Open overwrote a file that is not a database")
	}
}

func TestDefaultPath(t *testing.T) {
	t.Setenv("XDG_DATA_HOME", "/xdg")
	if p, _ := DefaultPath(); p != "/xdg/perflab/perflab.db" {
		t.Errorf("with XDG_DATA_HOME: %s", p)
	}
	t.Setenv("XDG_DATA_HOME", "relative/ignored")
	t.Setenv("HOME", "/home/u")
	if p, _ := DefaultPath(); p != "/home/u/.local/share/perflab/perflab.db" {
		t.Errorf("without XDG_DATA_HOME: %s", p)
	}
	home := t.TempDir()
	t.Setenv("XDG_DATA_HOME", filepath.Join(home, "data"))
	s, err := Open("")
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, err := os.Stat(filepath.Join(home, "data", "perflab", "perflab.db")); err != nil {
		t.Errorf("default database not created: %v", err)
	}
}

func TestDollarRebind(t *testing.T) {
	if got := dollarRebind(`SELECT a FROM t WHERE x = ? AND y = ?`); got != `SELECT a FROM t WHERE x = $1 AND y = $2` {
		t.Errorf("dollarRebind: %s", got)
	}
}
