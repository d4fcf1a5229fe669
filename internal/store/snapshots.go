package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/perflab/perflab/internal/run"
	"github.com/perflab/perflab/internal/snapshot"
)

// Snapshot returns the snapshot whose id starts with id.
func (s *Store) Snapshot(ctx context.Context, id string) (*snapshot.Snapshot, error) {
	full, err := s.resolve(ctx, "snapshots", "snapshot", id)
	if err != nil {
		return nil, err
	}
	var doc string
	err = s.db.QueryRowContext(ctx, s.q(`SELECT doc FROM snapshots WHERE id = ?`), full).Scan(&doc)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("no snapshot %q: %w", id, ErrNotFound)
	}
	if err != nil {
		return nil, err
	}
	// Through snapshot.Unmarshal, so a stored snapshot gets the same schema
	// check as a file.
	snap, err := snapshot.Unmarshal([]byte(doc))
	if err != nil {
		return nil, fmt.Errorf("snapshot %s: %w", full, err)
	}
	return snap, nil
}

// Export is runs with the snapshots they refer to (those still stored),
// ready for run.WriteExport.
func (s *Store) Export(ctx context.Context, runs []*run.Run) (run.Export, error) {
	ex := run.Export{Schema: run.Schema, Runs: runs, Snapshots: map[string]*snapshot.Snapshot{}}
	for _, r := range runs {
		if r.SnapshotID == "" || ex.Snapshots[r.SnapshotID] != nil {
			continue
		}
		snap, err := s.Snapshot(ctx, r.SnapshotID)
		if errors.Is(err, ErrNotFound) {
			continue
		}
		if err != nil {
			return ex, err
		}
		ex.Snapshots[r.SnapshotID] = snap
	}
	return ex, nil
}

// SaveSnapshot stores a snapshot no run refers to directly (the peer host
// of a two-host network run; its runs name it in their notes). A snapshot
// id already stored is left as it is.
func (s *Store) SaveSnapshot(ctx context.Context, snap *snapshot.Snapshot) error {
	if err := s.refuseWrite("saving snapshot " + snap.ID); err != nil {
		return err
	}
	sj, err := json.Marshal(snap)
	if err != nil {
		return fmt.Errorf("snapshot %s: %w", snap.ID, err)
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return s.writeErr(err)
	}
	defer tx.Rollback()
	res, err := tx.ExecContext(ctx, s.q(`INSERT INTO snapshots (id, taken_at, host, doc) VALUES (?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`),
		snap.ID, snap.TakenAt.UnixNano(), snap.Host.Hostname, string(sj))
	if err != nil {
		return s.writeErr(err)
	}
	if n, err := res.RowsAffected(); err == nil && n == 1 {
		if err := s.SaveSummaries(ctx, tx, []*snapshot.Snapshot{snap}); err != nil {
			return s.writeErr(err)
		}
	}
	return s.writeErr(tx.Commit())
}
