package store

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/perflab/perflab/internal/run"
	"github.com/perflab/perflab/internal/snapshot"
)

// PushResult counts what Push did.
type PushResult struct {
	Added   int `json:"added"`   // runs copied
	Present int `json:"present"` // runs the destination already had (same id)
}

// pushBatch is how many runs Push reads and writes at a time: one query
// for which the destination has, two to read them from the source, one
// transaction to write them.
const pushBatch = 500

// Push copies every run of src, with its snapshot, into dst (a local SQLite
// history into a shared PostgreSQL store, say). Runs are identified by id,
// so pushing again adds only what is new, and two machines pushing the
// same history add it once. Runs are written pushBatch at a time, each
// batch one transaction: an interrupted push leaves whole batches behind
// and the next push completes it. progress, when not nil, is called after
// each batch.
func Push(ctx context.Context, dst, src *Store, progress func(done, total int)) (PushResult, error) {
	var res PushResult
	if err := dst.refuseWrite("pushing runs"); err != nil {
		return res, err
	}
	ids, err := src.runIDs(ctx)
	if err != nil {
		return res, fmt.Errorf("reading %s: %w", src.Path, err)
	}
	for start := 0; start < len(ids); start += pushBatch {
		part := ids[start:min(start+pushBatch, len(ids))]
		var added, present int
		err := retry(ctx, func() error {
			var err error
			added, present, err = pushPart(ctx, dst, src, part)
			return err
		})
		res.Added += added
		res.Present += present
		if err != nil {
			return res, err
		}
		if progress != nil {
			progress(start+len(part), len(ids))
		}
	}
	return res, nil
}

func pushPart(ctx context.Context, dst, src *Store, ids []string) (added, present int, err error) {
	have, err := dst.existing(ctx, ids)
	if err != nil {
		return 0, 0, fmt.Errorf("reading %s: %w", dst.Path, err)
	}
	var want []string
	for _, id := range ids {
		if !have[id] {
			want = append(want, id)
		}
	}
	present = len(ids) - len(want)
	if len(want) == 0 {
		return 0, present, nil
	}
	runs, err := src.runsByID(ctx, want)
	if err != nil {
		return 0, present, fmt.Errorf("reading %s: %w", src.Path, err)
	}
	snaps := map[string]*snapshot.Snapshot{}
	for _, r := range runs {
		if r.SnapshotID == "" || snaps[r.SnapshotID] != nil {
			continue
		}
		snap, err := src.Snapshot(ctx, r.SnapshotID)
		switch {
		case errors.Is(err, ErrNotFound):
			continue // a run imported without its snapshot stays without
		case err != nil:
			return 0, present, fmt.Errorf("reading snapshot %s from %s: %w", r.SnapshotID, src.Path, err)
		}
		if snap.ID == r.SnapshotID { // not another snapshot a prefix matched
			snaps[r.SnapshotID] = snap
		}
	}
	for _, r := range runs {
		if err := checkRun(r, snaps[r.SnapshotID]); err != nil {
			return 0, present, fmt.Errorf("run %s in %s: %w", r.ID, src.Path, err)
		}
	}
	tx, err := dst.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, present, dst.writeErr(err)
	}
	defer tx.Rollback()
	for _, r := range runs {
		stored, err := dst.saveRunTx(ctx, tx, r, snaps[r.SnapshotID])
		if err != nil {
			return 0, present, dst.writeErr(fmt.Errorf("writing run %s to %s: %w", r.ID, dst.Path, err))
		}
		if stored {
			added++
		} else {
			present++ // another writer stored it meanwhile
		}
	}
	if err := tx.Commit(); err != nil {
		return 0, present, dst.writeErr(err)
	}
	return added, present, nil
}

// inList is "?, ?, …" for n values and the values as arguments.
func inList(ids []string) (string, []any) {
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	return strings.TrimSuffix(strings.Repeat("?, ", len(ids)), ", "), args
}

// existing reports which of ids are stored.
func (s *Store) existing(ctx context.Context, ids []string) (map[string]bool, error) {
	ph, args := inList(ids)
	rows, err := s.db.QueryContext(ctx, s.q(`SELECT id FROM runs WHERE id IN (`+ph+`)`), args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	have := map[string]bool{}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		have[id] = true
	}
	return have, rows.Err()
}

// runsByID loads the runs with exactly these ids (those stored) with their
// samples, in two queries.
func (s *Store) runsByID(ctx context.Context, ids []string) ([]*run.Run, error) {
	ph, args := inList(ids)
	rows, err := s.db.QueryContext(ctx, s.q(`SELECT id, doc FROM runs WHERE id IN (`+ph+`)`), args...)
	if err != nil {
		return nil, err
	}
	by := map[string]*run.Run{}
	var out []*run.Run
	for rows.Next() {
		var id, doc string
		if err := rows.Scan(&id, &doc); err != nil {
			rows.Close()
			return nil, err
		}
		r, err := decodeRun(id, doc)
		if err != nil {
			rows.Close()
			return nil, err
		}
		by[id] = r
		out = append(out, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	srows, err := s.db.QueryContext(ctx, s.q(`SELECT run_id, metric, iteration, value FROM samples WHERE run_id IN (`+ph+`)`), args...)
	if err != nil {
		return nil, err
	}
	defer srows.Close()
	for srows.Next() {
		var id string
		var x run.Sample
		if err := srows.Scan(&id, &x.Metric, &x.Iteration, &x.Value); err != nil {
			return nil, err
		}
		if r := by[id]; r != nil {
			r.Samples = append(r.Samples, x)
		}
	}
	if err := srows.Err(); err != nil {
		return nil, err
	}
	for _, r := range out {
		sortSamples(r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Started.Before(out[j].Started) })
	return out, nil
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
