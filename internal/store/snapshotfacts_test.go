package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/run"
	"github.com/perflab/perflab/internal/snapshot"
)

// withSummarizer registers a summarizer (the fleet package's, in perflab)
// for the test: it keeps the hostname and kernel, so hosts alike share a
// set.
func withSummarizer(t *testing.T, fail string) {
	t.Helper()
	old := summarizer
	t.Cleanup(func() { summarizer = old })
	RegisterSummarizer(7, func(s *snapshot.Snapshot) ([]byte, error) {
		if s.ID == fail {
			return nil, errors.New("cannot")
		}
		return json.Marshal(s.Kernel.Release)
	})
}

// testRun is a run of host with its own snapshot "snap-HOST".
func testRun(t *testing.T, host string, i int) (*run.Run, *snapshot.Snapshot) {
	t.Helper()
	r := newRun(fmt.Sprintf("run-%d", i), "l", "cpu", "snap-"+host, time.Date(2025, 5, 1, 12, i, 0, 0, time.UTC))
	r.Host = host
	snap := newSnap("snap-" + host)
	snap.Host.Hostname = host
	return r, snap
}

func countRows(t *testing.T, s *Store, q string) int {
	t.Helper()
	var n int
	if err := s.db.QueryRow(q).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// Snapshots stored before schema 5 get their fact sets when the store
// migrates; snapshots stored after get them as they are stored, once per
// snapshot however many runs name it; a snapshot the summarizer cannot
// reduce is stored without one.
func TestSnapshotFactsMigrateAndSave(t *testing.T) {
	path := filepath.Join(t.TempDir(), "runs.db")
	old := SchemaVersion
	SchemaVersion = 4
	s, err := Open(path)
	if err != nil {
		SchemaVersion = old
		t.Fatal(err)
	}
	for i, host := range []string{"a", "b", "c"} {
		r, snap := testRun(t, host, i)
		if err := s.SaveRun(ctx, r, snap); err != nil {
			SchemaVersion = old
			t.Fatal(err)
		}
	}
	s.Close()
	SchemaVersion = old
	withSummarizer(t, "snap-d")
	s, err = Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if n := countRows(t, s, `SELECT count(*) FROM snapshot_facts WHERE version = 7`); n != 3 {
		t.Errorf("after the migration %d snapshots have facts, want 3", n)
	}
	if n := countRows(t, s, `SELECT count(*) FROM fact_sets`); n != 1 {
		t.Errorf("%d fact sets for three snapshots alike, want 1", n)
	}
	for i, host := range []string{"d", "e", "e"} {
		r, snap := testRun(t, host, 10+i)
		if err := s.SaveRun(ctx, r, snap); err != nil {
			t.Fatal(err)
		}
	}
	if n := countRows(t, s, `SELECT count(*) FROM snapshot_facts`); n != 4 {
		t.Errorf("%d snapshots with facts, want 4 (d's cannot be made)", n)
	}
	// A later migration that changes the sets re-summarizes every snapshot
	// with the new version, replacing the sets stored.
	RegisterSummarizer(8, func(s *snapshot.Snapshot) ([]byte, error) { return json.Marshal(s.Host.Hostname) })
	tx, err := s.db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	if err := backfillSnapshotFacts(ctx, s, tx); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if n := countRows(t, s, `SELECT count(*) FROM snapshot_facts WHERE version = 8`); n != 5 {
		t.Errorf("after re-summarizing %d snapshots have version 8, want all 5", n)
	}
}
