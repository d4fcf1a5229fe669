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

// pushBatch is how many runs Push reads and writes at a time: two queries
// to read them from the source, one for their snapshots, one transaction
// to write them.
const pushBatch = 500

// Push copies every run of src, with its snapshot, into dst (a local SQLite
// history into a shared PostgreSQL store, say). Runs are identified by id,
// so pushing again adds only what is new, and two machines pushing the
// same history add it once. Runs are written pushBatch at a time, each
// batch one transaction: an interrupted push leaves whole batches behind
// and the next push completes it. Which runs and snapshots dst lacks is
// asked once, at the start; then the next batch is read from src while
// the last one is written, and dst is used by one connection at a time (a
// fleet pushing at once must not hold two per writer). progress, when not
// nil, is called after each batch.
func Push(ctx context.Context, dst, src *Store, progress func(done, total int)) (PushResult, error) {
	var res PushResult
	if err := dst.refuseWrite("pushing runs"); err != nil {
		return res, err
	}
	ids, err := src.runIDs(ctx)
	if err != nil {
		return res, fmt.Errorf("reading %s: %w", src.Path, err)
	}
	plan, err := planPush(ctx, dst, src, ids)
	if err != nil {
		return res, err
	}
	ctx, cancel := context.WithCancel(ctx)
	loads := make(chan readLoad, 1)
	finished := make(chan struct{})
	go readPushBatches(ctx, src, ids, plan, loads, finished)
	defer func() {
		cancel()
		for range loads { // let the reader see the cancel and stop
		}
		<-finished
	}()
	done := 0
	for rd := range loads {
		if rd.err != nil {
			return res, rd.err
		}
		added := 0
		if len(rd.load.runs) > 0 {
			err := retry(ctx, func() error {
				var err error
				added, err = dst.writePushBatch(ctx, rd.load)
				return err
			})
			if err != nil {
				return res, dst.writeErr(fmt.Errorf("writing %d runs to %s: %w", len(rd.load.runs), dst.Path, err))
			}
		}
		// The runs of the batch not added were there before, or another
		// writer stored them meanwhile.
		res.Added += added
		res.Present += rd.ids - added
		done += rd.ids
		if progress != nil {
			progress(done, len(ids))
		}
	}
	if done < len(ids) {
		return res, ctx.Err()
	}
	return res, nil
}

// pushPlan is what dst held when the push began, and which snapshots the
// push has read for writing since (each is sent once). Another writer may
// store some of the rest meanwhile: the write skips those (ON CONFLICT DO
// NOTHING) and does not count them as added.
type pushPlan struct {
	haveRun, haveSnap, sentSnap map[string]bool
}

// planPush asks dst which of the runs ids and of src's snapshots it holds,
// pushBatch ids a query.
func planPush(ctx context.Context, dst, src *Store, ids []string) (*pushPlan, error) {
	p := &pushPlan{haveRun: map[string]bool{}, haveSnap: map[string]bool{}, sentSnap: map[string]bool{}}
	snapIDs, err := src.snapshotIDs(ctx)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", src.Path, err)
	}
	for _, q := range []struct {
		table string
		ids   []string
		have  map[string]bool
	}{{"runs", ids, p.haveRun}, {"snapshots", snapIDs, p.haveSnap}} {
		for start := 0; start < len(q.ids); start += pushBatch {
			part := q.ids[start:min(start+pushBatch, len(q.ids))]
			var have map[string]bool
			err := retry(ctx, func() error {
				var err error
				have, err = dst.existing(ctx, q.table, part)
				return err
			})
			if err != nil {
				return nil, fmt.Errorf("reading %s: %w", dst.Path, err)
			}
			for id := range have {
				q.have[id] = true
			}
		}
	}
	return p, nil
}

// snapshotIDs lists every snapshot id.
func (s *Store) snapshotIDs(ctx context.Context) ([]string, error) {
	return s.strings(ctx, `SELECT id FROM snapshots`)
}

// strings runs a query of one text column and returns its values.
func (s *Store) strings(ctx context.Context, q string, args ...any) ([]string, error) {
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var v string
		if err := rows.Scan(&v); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// readLoad is one batch as the reader hands it over: how many ids it
// covers, what of them to write, or why it could not be read.
type readLoad struct {
	ids  int
	load pushLoad
	err  error
}

// readPushBatches reads ids a batch at a time into loads, stopping at the
// first error or when ctx is done, and closes loads, then finished. It
// reads only src; plan is its own until it finishes.
func readPushBatches(ctx context.Context, src *Store, ids []string, plan *pushPlan, loads chan<- readLoad, finished chan<- struct{}) {
	defer close(finished)
	defer close(loads)
	for start := 0; start < len(ids); start += pushBatch {
		part := ids[start:min(start+pushBatch, len(ids))]
		var b pushLoad
		err := retry(ctx, func() error {
			var err error
			b, err = readPushBatch(ctx, src, part, plan)
			return err
		})
		select {
		case loads <- readLoad{ids: len(part), load: b, err: err}:
		case <-ctx.Done():
			return
		}
		if err != nil {
			return
		}
	}
}

// pushLoad is what one batch of a push writes: the runs the destination
// did not have, checked, and the snapshots they refer to that it did not
// have either, as the source stored them.
type pushLoad struct {
	runs  []*run.Run
	snaps []rawSnapshot
}

// rawSnapshot is a stored snapshot row. doc is the source's document,
// written as it is (not decoded and encoded again); snap is it decoded,
// which checks its schema and id before anything is written.
// decoded are the batch's snapshots as values (those that decoded).
func (b pushLoad) decoded() []*snapshot.Snapshot {
	var out []*snapshot.Snapshot
	for _, x := range b.snaps {
		if x.snap != nil {
			out = append(out, x.snap)
		}
	}
	return out
}

type rawSnapshot struct {
	id, host string
	takenAt  int64
	doc      string
	snap     *snapshot.Snapshot
}

// readPushBatch reads from src what the plan says dst lacks of the runs
// ids: two queries for the runs and samples, one for the snapshots they
// refer to that dst lacks and no earlier batch sent.
func readPushBatch(ctx context.Context, src *Store, ids []string, plan *pushPlan) (pushLoad, error) {
	var b pushLoad
	var want []string
	for _, id := range ids {
		if !plan.haveRun[id] {
			want = append(want, id)
		}
	}
	if len(want) == 0 {
		return b, nil
	}
	var err error
	if b.runs, err = src.runsByID(ctx, want); err != nil {
		return b, fmt.Errorf("reading %s: %w", src.Path, err)
	}
	for _, r := range b.runs {
		if err := checkRun(r, nil); err != nil {
			return b, fmt.Errorf("run %s in %s: %w", r.ID, src.Path, err)
		}
	}
	var wantSnap []string
	seen := map[string]bool{}
	for _, r := range b.runs {
		id := r.SnapshotID
		if id != "" && !seen[id] && !plan.haveSnap[id] && !plan.sentSnap[id] {
			seen[id] = true
			wantSnap = append(wantSnap, id)
		}
	}
	// A run imported without its snapshot stays without: ids the source
	// lacks are not read.
	if b.snaps, err = src.rawSnapshots(ctx, wantSnap); err != nil {
		return b, fmt.Errorf("reading %s: %w", src.Path, err)
	}
	for _, x := range b.snaps {
		plan.sentSnap[x.id] = true
	}
	return b, nil
}

// rawSnapshots reads the snapshots with exactly these ids (those stored),
// each decoded once to check it.
func (s *Store) rawSnapshots(ctx context.Context, ids []string) ([]rawSnapshot, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	ph, args := inList(ids)
	rows, err := s.db.QueryContext(ctx, s.q(`SELECT id, taken_at, host, doc FROM snapshots WHERE id IN (`+ph+`) ORDER BY `+s.d.byteOrder("id")), args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []rawSnapshot
	for rows.Next() {
		var x rawSnapshot
		if err := rows.Scan(&x.id, &x.takenAt, &x.host, &x.doc); err != nil {
			return nil, err
		}
		snap, err := snapshot.Unmarshal([]byte(x.doc))
		if err != nil {
			return nil, fmt.Errorf("snapshot %s: %w", x.id, err)
		}
		if snap.ID != x.id {
			return nil, fmt.Errorf("snapshot %s: its document has id %q", x.id, snap.ID)
		}
		x.snap = snap
		out = append(out, x)
	}
	return out, rows.Err()
}

// writePushBatch writes b in one transaction and returns how many of its
// runs it stored (the others another writer stored meanwhile). PostgreSQL
// takes the batch with COPY into staging tables (push_copy.go); SQLite,
// one local writer at a time, row by row as SaveRun does.
func (s *Store) writePushBatch(ctx context.Context, b pushLoad) (int, error) {
	if _, ok := s.d.(pgDialect); ok {
		n, err := s.pushCopy(ctx, b)
		if !errors.Is(err, errNoTemp) {
			return n, err
		}
		// A role without TEMPORARY on the database: the same rows,
		// statement by statement.
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	for _, x := range b.snaps {
		if err := insertRawSnapshot(ctx, s, tx, x); err != nil {
			return 0, err
		}
	}
	if err := s.SaveSummaries(ctx, tx, b.decoded()); err != nil {
		return 0, err
	}
	added := 0
	for _, r := range b.runs {
		stored, err := s.saveRunTx(ctx, tx, r, nil)
		if err != nil {
			return 0, err
		}
		if stored {
			added++
		}
	}
	return added, tx.Commit()
}

func insertRawSnapshot(ctx context.Context, s *Store, tx execer, x rawSnapshot) error {
	_, err := tx.ExecContext(ctx, s.q(`INSERT INTO snapshots (id, taken_at, host, doc) VALUES (?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`),
		x.id, x.takenAt, x.host, x.doc)
	if err != nil {
		return fmt.Errorf("saving snapshot %s: %w", x.id, err)
	}
	return nil
}

// inList is "?, ?, …" for n values and the values as arguments.
func inList(ids []string) (string, []any) {
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	return strings.TrimSuffix(strings.Repeat("?, ", len(ids)), ", "), args
}

// existing reports which of ids are stored in table (runs or snapshots).
func (s *Store) existing(ctx context.Context, table string, ids []string) (map[string]bool, error) {
	ph, args := inList(ids)
	rows, err := s.db.QueryContext(ctx, s.q(`SELECT id FROM `+table+` WHERE id IN (`+ph+`)`), args...)
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
	if err := s.attachAllSeries(ctx, out); err != nil {
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
	return s.strings(ctx, `SELECT id FROM runs ORDER BY started, `+s.d.byteOrder("id"))
}
