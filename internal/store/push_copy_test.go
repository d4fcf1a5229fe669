package store

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/run"
	"github.com/perflab/perflab/internal/snapshot"
)

// pushSource is a local store of more than two push batches: 7 hosts with
// a snapshot each, runs that are usable, incomplete or failed (no
// medians), or without a stored snapshot.
func pushSource(t *testing.T) *Store {
	t.Helper()
	src, _ := openTemp(t)
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	var runs []*run.Run
	var snaps []*snapshot.Snapshot
	for h := range 7 {
		sn := newSnap(fmt.Sprintf("snap-h%d", h))
		sn.Host.Hostname = fmt.Sprintf("h%d", h)
		snaps = append(snaps, sn)
	}
	n := 2*pushBatch + 37
	for i := range n {
		h := i % 7
		r := newRun(fmt.Sprintf("r%05d", i), []string{"", "before", "after"}[i%3], []string{"cpu", "memory.latency"}[i%2], fmt.Sprintf("snap-h%d", h), t0.Add(time.Duration(i)*time.Second))
		r.Host = fmt.Sprintf("h%d", h)
		switch {
		case i%11 == 0:
			r.Complete = false // no medians
		case i%13 == 0:
			r.SnapshotID = "never-stored"
		case i%17 == 0:
			r.Stop = run.StopFailed
		}
		r.Samples[0].Value += float64(i)
		runs = append(runs, r)
	}
	if err := src.CopyRuns(ctx, runs, snaps); err != nil {
		t.Fatal(err)
	}
	return src
}

// dumpTables is every row of the tables a push writes, as text, in key
// order: what two stores holding the same runs must agree on.
func dumpTables(t *testing.T, s *Store) string {
	t.Helper()
	var b strings.Builder
	for _, q := range []string{
		`SELECT id, taken_at, host, doc FROM snapshots ORDER BY id`,
		`SELECT id, label, suite, probe, host, snapshot_id, started, complete, doc FROM runs ORDER BY id`,
		`SELECT run_id, metric, iteration, value FROM samples ORDER BY run_id, metric, iteration`,
		`SELECT run_id, doc FROM run_series ORDER BY run_id`,
		`SELECT run_id, metric, host, probe, params, label, started, unit, better, median FROM run_metrics ORDER BY run_id, metric`,
	} {
		rows, err := s.db.Query(q) // the test servers sort bytewise (--locale=C)
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := rows.Columns()
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		for rows.Next() {
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			for _, v := range vals {
				if bs, ok := v.([]byte); ok {
					v = string(bs)
				}
				fmt.Fprintf(&b, "%v\t", v)
			}
			b.WriteByte('\n')
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		rows.Close()
	}
	return b.String()
}

// TestPushSameOnBothBackends: a push of more than two batches, into a
// destination that already holds some of the runs and snapshots, stores
// the same rows on PostgreSQL (COPY into staging tables) as on SQLite (row
// by row), and those are the source's rows; counts agree on both.
func TestPushSameOnBothBackends(t *testing.T) {
	src := pushSource(t)
	pg, _ := openPG(t)
	lite, _ := openTemp(t)
	pre, err := src.runsByID(ctx, []string{"r00003", "r00600", "r01000"})
	if err != nil || len(pre) != 3 {
		t.Fatal(len(pre), err)
	}
	want := dumpTables(t, src)
	for _, dst := range []*Store{pg, lite} {
		for _, r := range pre {
			if err := dst.SaveRun(ctx, r, newSnapNamed(r.SnapshotID, r.Host)); err != nil {
				t.Fatal(err)
			}
		}
		res, err := Push(ctx, dst, src, nil)
		if err != nil {
			t.Fatalf("%s: %v", dst.Path, err)
		}
		total := 2*pushBatch + 37
		if res != (PushResult{Added: total - 3, Present: 3}) {
			t.Errorf("%s: %+v, want %d added and 3 present", dst.Path, res, total-3)
		}
		if got := dumpTables(t, dst); got != want {
			t.Errorf("%s holds other rows than the source after the push:\n%s", dst.Path, firstDiff(got, want))
		}
		checkHostMedians(t, dst)
		checkHostLabels(t, dst)
		if got, want := medianLists(t, dst, true), medianLists(t, src, true); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: host medians differ from the source's after the push", dst.Path)
		}
		res, err = Push(ctx, dst, src, nil)
		if err != nil || res.Added != 0 {
			t.Errorf("%s: pushing again: %+v %v", dst.Path, res, err)
		}
	}
}

// newSnapNamed is the snapshot pushSource stores for host.
func newSnapNamed(id, host string) *snapshot.Snapshot {
	s := newSnap(id)
	s.Host.Hostname = host
	return s
}

func firstDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := range min(len(g), len(w)) {
		if g[i] != w[i] {
			return fmt.Sprintf("line %d:\n got %.300s\nwant %.300s", i+1, g[i], w[i])
		}
	}
	return fmt.Sprintf("%d lines, want %d", len(g), len(w))
}

// TestPushWithoutTemporaryPrivilege: a role that may write the tables (add
// rows, and update host_medians, whose lists a run's medians are appended
// to) but not create temporary ones (REVOKE TEMPORARY) still pushes, row
// by row, the same rows.
func TestPushWithoutTemporaryPrivilege(t *testing.T) {
	src := pushSource(t)
	pg, dsn := openPG(t)
	for _, q := range []string{
		`CREATE ROLE pusher LOGIN`,
		`DO $$ BEGIN EXECUTE format('REVOKE TEMPORARY ON DATABASE %I FROM PUBLIC', current_database()); END $$`,
		`GRANT SELECT, INSERT ON ALL TABLES IN SCHEMA public TO pusher`,
		`GRANT UPDATE ON host_medians TO pusher`, // appending to a host's list of medians
		`GRANT UPDATE ON host_labels TO pusher`,  // counting a run in its host's label
	} {
		if _, err := pg.db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if !strings.Contains(dsn, "user=perflab") {
		t.Fatalf("test DSN %s names no user to replace", dsn)
	}
	dst, err := Open(strings.Replace(dsn, "user=perflab", "user=pusher", 1))
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	if _, err := dst.db.Exec(`CREATE TEMPORARY TABLE probe_temp (x int)`); err == nil {
		t.Fatal("the role may create temporary tables; the test would not reach the fallback")
	}
	res, err := Push(ctx, dst, src, nil)
	if err != nil || res.Added != 2*pushBatch+37 {
		t.Fatalf("push without TEMPORARY: %+v %v", res, err)
	}
	if got, want := dumpTables(t, pg), dumpTables(t, src); got != want {
		t.Errorf("rows differ from the source's:\n%s", firstDiff(got, want))
	}
	checkHostMedians(t, pg)
	checkHostLabels(t, pg)
}
