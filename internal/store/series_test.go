package store

import (
	"bytes"
	"database/sql"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/run"
	"github.com/perflab/perflab/internal/snapshot"
	"github.com/perflab/perflab/internal/testenv"
)

// seriesRuns are runs whose monitor series differ run to run: every
// optional field set in some points and not others, values a text round
// trip could mangle, one run without a series.
func seriesRuns(n int) []*run.Run {
	t0 := time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC)
	var runs []*run.Run
	for i := range n {
		r := newRun(fmt.Sprintf("s%03d", i), []string{"", "a"}[i%2], []string{"cpu", "memory.latency"}[i%2], "", t0.Add(time.Duration(i)*time.Second))
		r.Host = fmt.Sprintf("h%d", i%3)
		r.Notes = []string{`a note that reads ,"monitor":[1] and ]`} // the migration's marker, inside a string
		r.Monitor = nil
		for k := range i % 5 {
			pct, kib := awkward[(i+k)%len(awkward)], int64(i*1000+k)
			p := run.MonitorPoint{T: float64(k + 1), UserPct: 100 * math.Abs(math.Sin(float64(i+k))), StealPct: 1e-9 * float64(k), RunQueue: int64(k), MemAvailKiB: 1 << 40}
			if k%2 == 1 {
				p.PSICPUPct, p.DirtyKiB = &pct, &kib
			}
			r.Monitor = append(r.Monitor, p)
		}
		runs = append(runs, r)
	}
	return runs
}

// TestRunSeriesFollowEveryWriter: a run written by any writer (SaveRun,
// Import, CopyRuns, Push into either backend) and read back by any reader
// of whole runs is the run written, monitor series included; no stored
// document holds a series; a run's series row goes with it.
func TestRunSeriesFollowEveryWriter(t *testing.T) {
	runs := seriesRuns(40)
	want := runsJSON(t, runs)
	src, _ := openTemp(t) // the source of the pushes
	if err := src.CopyRuns(ctx, runs, nil); err != nil {
		t.Fatal(err)
	}
	check := func(t *testing.T, s *Store, how string) {
		t.Helper()
		got, err := s.Runs(ctx, Filter{})
		if err != nil {
			t.Fatal(err)
		}
		reverse(got) // newest first
		if runsJSON(t, got) != want {
			t.Errorf("%s, %s: Runs reads back other runs than were written", s.Path, how)
		}
		batch, err := s.RunsBatch(ctx, Filter{})
		if err != nil {
			t.Fatal(err)
		}
		reverse(batch)
		ids := make([]string, len(runs))
		for i, r := range runs {
			ids[i] = r.ID
		}
		byID, err := s.RunsByIDs(ctx, ids)
		if err != nil {
			t.Fatal(err)
		}
		one, err := s.Run(ctx, "s003")
		if err != nil {
			t.Fatal(err)
		}
		if runsJSON(t, batch) != want || runsJSON(t, byID) != want || runsJSON(t, []*run.Run{one}) != runsJSON(t, runs[3:4]) {
			t.Errorf("%s, %s: RunsBatch, RunsByIDs or Run read back other runs than were written", s.Path, how)
		}
		var inline, rows, withSeries int
		if err := s.db.QueryRow(s.q(`SELECT count(*) FROM runs WHERE doc LIKE '%"monitor"%'`)).Scan(&inline); err != nil {
			t.Fatal(err)
		}
		if err := s.db.QueryRow(`SELECT count(*) FROM run_series`).Scan(&rows); err != nil {
			t.Fatal(err)
		}
		for _, r := range runs {
			if len(r.Monitor) > 0 {
				withSeries++
			}
		}
		if inline != 0 || rows != withSeries {
			t.Errorf("%s, %s: %d documents hold a series, %d series rows; want 0 and %d", s.Path, how, inline, rows, withSeries)
		}
	}
	write := map[string]func(s *Store) error{
		"SaveRun": func(s *Store) error {
			for _, r := range runs {
				if err := s.SaveRun(ctx, r, nil); err != nil {
					return err
				}
			}
			return nil
		},
		"Import": func(s *Store) error {
			_, err := s.Import(ctx, &run.Export{Runs: runs, Snapshots: map[string]*snapshot.Snapshot{}})
			return err
		},
		"CopyRuns": func(s *Store) error { return s.CopyRuns(ctx, runs, nil) },
		"Push": func(s *Store) error {
			_, err := Push(ctx, s, src, nil)
			return err
		},
	}
	for _, how := range []string{"SaveRun", "Import", "CopyRuns", "Push"} {
		lite, _ := openTemp(t)
		if err := write[how](lite); err != nil {
			t.Fatalf("%s: %v", how, err)
		}
		check(t, lite, how)
		checkDeleteSeries(t, lite)
	}
	testenv.Short(t)
	dsn := testenv.Postgres(t)
	for _, how := range []string{"SaveRun", "Import", "CopyRuns", "Push"} {
		pg, err := Open(dsn)
		if err != nil {
			t.Fatal(err)
		}
		if err := write[how](pg); err != nil {
			t.Fatalf("postgres %s: %v", how, err)
		}
		check(t, pg, how)
		checkDeleteSeries(t, pg)
		if _, err := pg.db.Exec(`TRUNCATE runs, run_series, samples, run_metrics, host_medians, host_labels`); err != nil {
			t.Fatal(err)
		}
		pg.Close()
	}
}

// checkDeleteSeries: Delete takes a run's series row with the run.
func checkDeleteSeries(t *testing.T, s *Store) {
	t.Helper()
	if err := s.Delete(ctx, "s004"); err != nil {
		t.Fatal(err)
	}
	var left int
	if err := s.db.QueryRow(`SELECT count(*) FROM run_series WHERE run_id = 's004'`).Scan(&left); err != nil || left != 0 {
		t.Errorf("%s: the deleted run's series row is still stored (%d, %v)", s.Path, left, err)
	}
}

func reverse(runs []*run.Run) {
	for i, j := 0, len(runs)-1; i < j; i, j = i+1, j-1 {
		runs[i], runs[j] = runs[j], runs[i]
	}
}

// TestRunSeriesMigrate: a store written at schema 7 (series inline) opened
// for writing moves every series out: each document becomes byte for byte
// what schema 8 writes, each series row is the series as schema 8 writes
// it, and every run reads back as written; real runs (the console's
// testdata) included. Opened read-only at schema 7, whole runs still carry
// their series and PairRuns none.
func TestRunSeriesMigrate(t *testing.T) {
	whole, lean, series := realDocs(t)
	runs := seriesRuns(30)
	check := func(t *testing.T, path string) {
		old := SchemaVersion
		SchemaVersion = 7
		s, err := Open(path)
		if err != nil {
			SchemaVersion = old
			t.Fatal(err)
		}
		for _, r := range runs {
			if err := s.SaveRun(ctx, r, nil); err != nil {
				SchemaVersion = old
				t.Fatal(err)
			}
		}
		for i, doc := range whole { // as schema 7 stored them
			if _, err := s.db.Exec(s.q(`INSERT INTO runs (id, label, suite, probe, host, snapshot_id, started, complete, doc) VALUES (?, '', '', 'p', 'real', '', ?, 1, ?)`), fmt.Sprintf("real%d", i), i, doc); err != nil {
				SchemaVersion = old
				t.Fatal(err)
			}
		}
		s.Close()
		SchemaVersion = old
		ro, err := OpenReadOnly(path)
		if err != nil {
			t.Fatal(err)
		}
		got, err := ro.Runs(ctx, Filter{Label: "a"})
		if err != nil || len(got) == 0 || len(got[0].Monitor) == 0 {
			t.Errorf("schema 7 read-only: runs read without their series (%v)", err)
		}
		pr, err := ro.PairRuns(ctx, []ProbeHost{{Probe: "memory.latency", Host: "h1"}}, 5)
		if err != nil || len(pr[0]) == 0 || pr[0][0].Monitor != nil {
			t.Errorf("schema 7 read-only: PairRuns %v, %v: want runs without series", pr, err)
		}
		ro.Close()

		s, err = Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		all, err := s.Runs(ctx, Filter{Host: "h0"})
		if err != nil {
			t.Fatal(err)
		}
		all2, err := s.Runs(ctx, Filter{Host: "h1"})
		if err != nil {
			t.Fatal(err)
		}
		all3, err := s.Runs(ctx, Filter{Host: "h2"})
		if err != nil {
			t.Fatal(err)
		}
		n := len(all) + len(all2) + len(all3)
		for _, r := range append(append(all, all2...), all3...) {
			var w *run.Run
			for _, x := range runs {
				if x.ID == r.ID {
					w = x
				}
			}
			if runsJSON(t, []*run.Run{r}) != runsJSON(t, []*run.Run{w}) {
				t.Errorf("%s: run %s reads back otherwise after the migration", s.Path, r.ID)
			}
		}
		if n != len(runs) {
			t.Errorf("%s: %d runs after the migration, want %d", s.Path, n, len(runs))
		}
		for i := range whole {
			id := fmt.Sprintf("real%d", i)
			var doc string
			var ser sql.NullString
			if err := s.db.QueryRow(s.q(`SELECT r.doc, x.doc FROM runs r LEFT JOIN run_series x ON x.run_id = r.id WHERE r.id = ?`), id).Scan(&doc, &ser); err != nil {
				t.Fatal(err)
			}
			if doc != lean[i] || ser.String != series[i] {
				t.Errorf("%s: real run %d after the migration:\n doc %.200s\nwant %.200s\n series %.100s\n  want %.100s", s.Path, i, doc, lean[i], ser.String, series[i])
			}
		}
		var inline int
		if err := s.db.QueryRow(`SELECT count(*) FROM runs WHERE doc LIKE '%"monitor":[%'`).Scan(&inline); err != nil || inline != 0 {
			t.Errorf("%s: %d documents still hold a series (%v)", s.Path, inline, err)
		}
	}
	check(t, filepath.Join(t.TempDir(), "old.db"))
	testenv.Short(t)
	check(t, testenv.Postgres(t))
}

// FuzzSplitSeries: the migration's text split (splitSeriesSQL, on SQLite)
// turns any document schema 7 wrote into exactly what schema 8 writes —
// whatever the strings of the run hold (the marker, brackets, quotes) and
// whatever numbers its series holds.
func FuzzSplitSeries(f *testing.F) {
	f.Add(`,"monitor":[`, "]", 1.5, int64(3), uint8(2))
	f.Add(`"]`, `\"monitor\":[`, math.Copysign(0, -1), int64(-1), uint8(0))
	f.Add("ü€", "", 1e300, int64(math.MaxInt64), uint8(9))
	db, err := sql.Open("sqlite", filepath.Join(f.TempDir(), "split.db"))
	if err != nil {
		f.Fatal(err)
	}
	defer db.Close()
	for _, q := range []string{`CREATE TABLE runs (id TEXT PRIMARY KEY, doc TEXT NOT NULL)`, `CREATE TABLE run_series (run_id TEXT PRIMARY KEY, doc TEXT NOT NULL)`} {
		if _, err := db.Exec(q); err != nil {
			f.Fatal(err)
		}
	}
	f.Fuzz(func(t *testing.T, label, note string, v float64, k int64, points uint8) {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return // json.Marshal refuses them: no run holds one
		}
		r := newRun("x", label, "cpu", "", time.Unix(1e9, 0))
		r.Notes, r.Error = []string{note}, note
		r.Params["k"] = note
		r.Monitor = nil
		for i := range int(points % 8) {
			p := run.MonitorPoint{T: float64(i), UserPct: v, RunQueue: k}
			if i%2 == 0 {
				p.PSIIOPct, p.DirtyKiB = &v, &k
			}
			r.Monitor = append(r.Monitor, p)
		}
		whole, _, err := encodeRunDoc(r, false)
		if err != nil {
			return // invalid UTF-8 is replaced, not refused; nothing else fails
		}
		doc, series, err := encodeRunDoc(r, true)
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range []string{`DELETE FROM runs`, `DELETE FROM run_series`} {
			if _, err := db.Exec(q); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := db.Exec(`INSERT INTO runs (id, doc) VALUES ('x', ?)`, whole); err != nil {
			t.Fatal(err)
		}
		for _, q := range splitSeriesSQL("instr") {
			if _, err := db.Exec(q); err != nil {
				t.Fatal(err)
			}
		}
		var gotDoc string
		var gotSeries sql.NullString
		if err := db.QueryRow(`SELECT r.doc, x.doc FROM runs r LEFT JOIN run_series x ON x.run_id = r.id`).Scan(&gotDoc, &gotSeries); err != nil {
			t.Fatal(err)
		}
		if gotDoc != doc || gotSeries.String != series {
			t.Fatalf("split of %s\n doc %s\nwant %s\n series %q, want %q", whole, gotDoc, doc, gotSeries.String, series)
		}
		if strings.Contains(gotDoc, seriesKey) {
			t.Fatalf("the document keeps its series: %s", gotDoc)
		}
	})
}

// TestExportImportByteIdentical: runs exported from a store, imported into
// another (of either backend) and exported again are the same bytes, the
// console's real runs (monitor series of every field) included: the
// series stored apart come back whole.
func TestExportImportByteIdentical(t *testing.T) {
	body, err := os.ReadFile(filepath.Join("..", "serve", "testdata", "real-runs.json"))
	if err != nil {
		t.Fatal(err)
	}
	first, err := run.ReadExport(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	first.Runs = append(first.Runs, seriesRuns(12)...)
	export := func(t *testing.T, s *Store) []byte {
		t.Helper()
		runs, err := s.Runs(ctx, Filter{})
		if err != nil {
			t.Fatal(err)
		}
		ex, err := s.Export(ctx, runs)
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := run.WriteExport(&b, ex); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	a, _ := openTemp(t)
	if _, err := a.Import(ctx, first); err != nil {
		t.Fatal(err)
	}
	want := export(t, a)
	if !bytes.Contains(want, []byte(`"user_pct"`)) {
		t.Fatal("the export holds no monitor series: the check proves nothing")
	}
	again := func(t *testing.T, s *Store) {
		ex, err := run.ReadExport(bytes.NewReader(want))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Import(ctx, ex); err != nil {
			t.Fatal(err)
		}
		if got := export(t, s); !bytes.Equal(got, want) {
			t.Errorf("%s: export → import → export differs:\n%s", s.Path, firstDiff(string(got), string(want)))
		}
	}
	b, _ := openTemp(t)
	again(t, b)
	testenv.Short(t)
	pg, _ := openPG(t)
	again(t, pg)
}

// A series row that does not decode fails every reader of whole runs with
// the run named, on both backends: RunsByIDs reads the series on a
// goroutine of their own, and its error must not be lost, nor a run
// returned without the series it has.
func TestCorruptSeriesIsAnError(t *testing.T) {
	runs := seriesRuns(12)
	ids := make([]string, len(runs))
	for i, r := range runs {
		ids[i] = r.ID
	}
	pg, _ := openPG(t)
	sq, _ := openTemp(t)
	for _, s := range []*Store{sq, pg} {
		if err := s.CopyRuns(ctx, runs, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := s.db.Exec(s.q(`UPDATE run_series SET doc = ? WHERE run_id = ?`), `[{"t":1},{"user_pct":"x"}]`, "s003"); err != nil {
			t.Fatal(err)
		}
		if got, err := s.RunsByIDs(ctx, ids); err == nil || !strings.Contains(err.Error(), "run s003: stored monitor series is corrupt") {
			t.Errorf("%s: RunsByIDs: %d runs, error %v; want the corrupt series of s003", s.Path, len(got), err)
		}
		if _, err := s.Run(ctx, "s003"); err == nil || !strings.Contains(err.Error(), "s003") {
			t.Errorf("%s: Run: error %v; want the corrupt series of s003", s.Path, err)
		}
		if hist, err := s.HistoryRunsByIDs(ctx, ids); err != nil || len(hist) != len(ids) {
			t.Errorf("%s: HistoryRunsByIDs, which reads no series: %d runs, %v", s.Path, len(hist), err)
		}
	}
}
