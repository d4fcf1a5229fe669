package fleet

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/audit"
	"github.com/perflab/perflab/internal/compare"
	"github.com/perflab/perflab/internal/store"
	"github.com/perflab/perflab/internal/store/fleetgen"
	"github.com/perflab/perflab/internal/testenv"
)

// generatedStore is a generated fleet of hosts × runs in a new SQLite
// store, loaded as bench/fleetgen loads one, and the same fleet in memory.
func generatedStore(t *testing.T, hosts, runs int) (string, Input) {
	t.Helper()
	_, in, all := generated(t, hosts, runs)
	dsn := filepath.Join(t.TempDir(), "gen.db")
	s, err := store.Open(dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, h := range all {
		if err := s.CopyRuns(context.Background(), h.Runs, h.Snapshots); err != nil {
			t.Fatal(err)
		}
	}
	return dsn, in
}

// execSQL runs q on the store at dsn (SQLite or PostgreSQL) behind the
// store's back.
func execSQL(t *testing.T, dsn, q string) int64 {
	t.Helper()
	driver := "sqlite"
	if strings.HasPrefix(dsn, "postgres") {
		driver = "pgx"
	}
	db, err := sql.Open(driver, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	res, err := db.Exec(q)
	if err != nil {
		t.Fatal(err)
	}
	n, _ := res.RowsAffected()
	return n
}

func countSQL(t *testing.T, dsn, q string) int {
	t.Helper()
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRow(q).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// A store keeps each snapshot's facts when the snapshot is stored, hosts
// built alike share one fact set, and the report reads those instead of
// the snapshots: with every snapshot document destroyed it is still the
// in-memory report. Without the stored facts it reads the snapshots.
func TestFromStoreReadsStoredFacts(t *testing.T) {
	dsn, in := generatedStore(t, 30, 4)
	snaps := countSQL(t, dsn, `SELECT count(*) FROM snapshots`)
	if n := countSQL(t, dsn, `SELECT count(*) FROM snapshot_facts`); n != snaps {
		t.Fatalf("%d snapshots, %d with stored facts", snaps, n)
	}
	if sets := countSQL(t, dsn, `SELECT count(*) FROM fact_sets`); sets >= snaps || sets < 2 {
		t.Errorf("%d fact sets for %d snapshots of hosts built alike (want shared, and more than one)", sets, snaps)
	}
	want := reportJSON(t, Build(in))
	execSQL(t, dsn, `UPDATE snapshots SET doc = '{"schema": "destroyed"'`)
	if got := reportJSON(t, fromStore(t, dsn, store.FleetFilter{})); got != want {
		t.Errorf("from stored facts: the report differs from the in-memory one")
	}
	// A stored set of another version is not used: the snapshot is read.
	execSQL(t, dsn, `UPDATE snapshot_facts SET version = version + 1`)
	s, err := store.OpenReadOnly(dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	w, _ := audit.LookupWorkload("general")
	if _, err := FromStore(context.Background(), s, store.FleetFilter{}, w); err == nil || !strings.Contains(err.Error(), "snapshot") {
		t.Errorf("with the stored facts of another version the report read no snapshot (err %v)", err)
	}
}

// Under a user profile's workload the stored audit outcomes do not apply:
// the report audits the snapshots themselves, and is Build's.
func TestFromStoreUserProfile(t *testing.T) {
	dsn, in := generatedStore(t, 20, 4)
	w, err := audit.ParseProfile("p.yaml", []byte("name: mine\nextends: latency\nset:\n  thp.enabled: always\n"))
	if err != nil {
		t.Fatal(err)
	}
	in.Workload = w
	s, err := store.OpenReadOnly(dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rep, err := FromStore(context.Background(), s, store.FleetFilter{}, w)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := reportJSON(t, rep), reportJSON(t, Build(in)); got != want {
		t.Errorf("user profile: the streamed report differs from the in-memory one")
	}
	if rep.Audit == nil || rep.Audit.Workload != "mine" || rep.Audit.Hosts != 20 {
		t.Errorf("audit %+v, want workload mine over 20 hosts", rep.Audit)
	}
}

// BenchmarkSummarize is the cost storing a snapshot adds (its fact set:
// flattening and the audit under every built-in workload).
func BenchmarkSummarize(b *testing.B) {
	g, err := fleetgen.New(fleetgen.Options{Hosts: 20, RunsPerHost: 4, Samples: 3, Seed: 7, Repo: filepath.Join("..", "..")})
	if err != nil {
		b.Fatal(err)
	}
	s := g.Host(0).Snapshots[0]
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Summarize(s); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFactsOf is the report's cost per distinct fact set: parsing
// it and diffing it against the reference's.
func BenchmarkFactsOf(b *testing.B) {
	g, err := fleetgen.New(fleetgen.Options{Hosts: 20, RunsPerHost: 4, Samples: 3, Seed: 7, Repo: filepath.Join("..", "..")})
	if err != nil {
		b.Fatal(err)
	}
	w, _ := audit.LookupWorkload("general")
	bl := NewBuilder(w)
	bl.Reference(g.Host(0).Snapshots[0])
	doc, err := Summarize(g.Host(1).Snapshots[0])
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		fs, err := parseFactSet(doc)
		if err != nil {
			b.Fatal(err)
		}
		bl.FactsOf(fs)
	}
}

// A stored fact set is read back from a shared database anyone may have
// written: whatever it holds, parsing it returns a set or an error, and a
// set read is diffed without panicking.
func FuzzParseFactSet(f *testing.F) {
	f.Add([]byte(`{"cpu_model":"x","paths":["a","b"],"values":["1","2"],"audit":{}}`))
	f.Add([]byte(`{"paths":["b","a","b"],"values":["1","2","3"]}`))
	f.Add([]byte(`{"paths":["a"],"values":[]}`))
	f.Add([]byte(`{"audit":{"k":[{"r":"x","s":9,"x":"fail"}]}}`))
	f.Add([]byte(`[]`))
	w, _ := audit.LookupWorkload("general")
	f.Fuzz(func(t *testing.T, doc []byte) {
		fs, err := parseFactSet(doc)
		if err != nil {
			return
		}
		b := NewBuilder(w)
		b.ReferenceSet(&FactSet{Facts: []compare.Leaf{{Path: "a", Value: "0"}}})
		hf, _ := b.FactsOf(fs)
		for i := 1; i < len(hf.diffs); i++ {
			if hf.diffs[i-1].Path >= hf.diffs[i].Path {
				t.Fatalf("diffs not sorted by path: %v", hf.diffs)
			}
		}
	})
}

// A push stores the pushed snapshots' fact sets, on both of its write
// paths (PostgreSQL: COPY into staging tables; SQLite: row by row), so a
// fleet report over the pushed store reads no snapshot document.
func TestPushStoresFacts(t *testing.T) {
	src, in := generatedStore(t, 20, 4)
	want := reportJSON(t, Build(in))
	for _, tc := range []struct {
		name string
		dsn  func() string
	}{
		{"sqlite", func() string { return filepath.Join(t.TempDir(), "dst.db") }},
		{"postgres", func() string { return testenv.Postgres(t) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dsn := tc.dsn()
			s, err := store.Open(src)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			d, err := store.Open(dsn)
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			if _, err := store.Push(context.Background(), d, s, nil); err != nil {
				t.Fatal(err)
			}
			var snaps, facts int
			driver := "sqlite"
			if strings.HasPrefix(dsn, "postgres") {
				driver = "pgx"
			}
			db, err := sql.Open(driver, dsn)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if err := db.QueryRow(`SELECT count(*) FROM snapshots`).Scan(&snaps); err != nil {
				t.Fatal(err)
			}
			if err := db.QueryRow(`SELECT count(*) FROM snapshot_facts`).Scan(&facts); err != nil {
				t.Fatal(err)
			}
			if snaps == 0 || facts != snaps {
				t.Fatalf("%d snapshots pushed, %d with stored facts", snaps, facts)
			}
			if _, err := db.Exec(`UPDATE snapshots SET doc = '{"schema": "destroyed"'`); err != nil {
				t.Fatal(err)
			}
			w, _ := audit.LookupWorkload("general")
			rep, err := FromStore(context.Background(), d, store.FleetFilter{}, w)
			if err != nil {
				t.Fatal(err)
			}
			if got := reportJSON(t, rep); got != want {
				t.Errorf("the report over the pushed store differs from the in-memory one")
			}
		})
	}
}
