package store

import (
	"context"
	"errors"
	"fmt"
)

// PushResult counts what Push did.
type PushResult struct {
	Added   int `json:"added"`   // runs copied
	Present int `json:"present"` // runs the destination already had (same id)
}

// Push copies every run of src, with its snapshot, into dst (a local SQLite
// history into a shared PostgreSQL store, say). Runs are identified by id,
// so pushing again adds only what is new, and two machines pushing the
// same history add it once. Each run is its own transaction: an
// interrupted push leaves whole runs behind and the next push completes
// it. progress, when not nil, is called after each run.
func Push(ctx context.Context, dst, src *Store, progress func(done, total int)) (PushResult, error) {
	var res PushResult
	if err := dst.refuseWrite("pushing runs"); err != nil {
		return res, err
	}
	ids, err := src.runIDs(ctx)
	if err != nil {
		return res, fmt.Errorf("reading %s: %w", src.Path, err)
	}
	for i, id := range ids {
		if err := pushRun(ctx, dst, src, id); errors.Is(err, ErrExists) {
			res.Present++
		} else if err != nil {
			return res, err
		} else {
			res.Added++
		}
		if progress != nil {
			progress(i+1, len(ids))
		}
	}
	return res, nil
}

func pushRun(ctx context.Context, dst, src *Store, id string) error {
	if ok, err := dst.hasRun(ctx, id); err != nil || ok {
		if ok {
			return ErrExists
		}
		return fmt.Errorf("reading %s: %w", dst.Path, err)
	}
	r, err := src.Run(ctx, id)
	if err != nil {
		return fmt.Errorf("reading run %s from %s: %w", id, src.Path, err)
	}
	snap, err := src.Snapshot(ctx, r.SnapshotID)
	switch {
	case r.SnapshotID == "", errors.Is(err, ErrNotFound):
		snap = nil // a run imported without its snapshot stays without
	case err != nil:
		return fmt.Errorf("reading snapshot %s from %s: %w", r.SnapshotID, src.Path, err)
	}
	if snap != nil && snap.ID != r.SnapshotID {
		snap = nil // a prefix matched another snapshot
	}
	if err := dst.SaveRun(ctx, r, snap); err != nil && !errors.Is(err, ErrExists) {
		return fmt.Errorf("writing run %s to %s: %w", id, dst.Path, err)
	} else if err != nil {
		return err
	}
	return nil
}

// runIDs lists every run id, oldest first.
func (s *Store) runIDs(ctx context.Context) ([]string, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id FROM runs ORDER BY started, `+s.d.byteOrder("id"))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

// hasRun reports whether a run with exactly this id is stored.
func (s *Store) hasRun(ctx context.Context, id string) (bool, error) {
	var n int
	err := s.db.QueryRowContext(ctx, s.q(`SELECT count(*) FROM runs WHERE id = ?`), id).Scan(&n)
	return n > 0, err
}
