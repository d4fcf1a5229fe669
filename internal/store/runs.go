package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/perflab/perflab/internal/run"
	"github.com/perflab/perflab/internal/snapshot"
)

// Filter selects runs; empty fields match everything.
type Filter struct {
	Label, Probe, Host, Suite string
	Limit                     int // 0 means no limit
}

// LabelCount is one label and how many runs carry it.
type LabelCount struct {
	Label  string    `json:"label"`
	Runs   int       `json:"runs"`
	Newest time.Time `json:"newest"` // start of the newest run with the label
}

// SaveRun stores a run and, when given, its snapshot (stored once per
// snapshot id however many runs refer to it). A run id already stored is
// refused with ErrExists and nothing is written.
func (s *Store) SaveRun(ctx context.Context, r *run.Run, snap *snapshot.Snapshot) error {
	if err := s.refuseWrite("saving run " + r.ID); err != nil {
		return err
	}
	return s.writeErr(s.saveRun(ctx, r, snap))
}

func (s *Store) saveRun(ctx context.Context, r *run.Run, snap *snapshot.Snapshot) error {
	if err := checkRun(r, snap); err != nil {
		return err
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	stored, err := s.saveRunTx(ctx, tx, r, snap)
	if err != nil {
		return err
	}
	if !stored {
		return fmt.Errorf("run %s: %w", r.ID, ErrExists)
	}
	return tx.Commit()
}

// checkRun is everything about a run and its snapshot the store checks
// before writing: run.Validate and the snapshot it names.
func checkRun(r *run.Run, snap *snapshot.Snapshot) error {
	if err := r.Validate(); err != nil {
		return &ImportError{Run: r.ID, Problem: err.Error()}
	}
	if snap != nil && r.SnapshotID != "" && snap.ID != r.SnapshotID {
		return &ImportError{Run: r.ID, Problem: fmt.Sprintf("snapshot_id: refers to snapshot %s but snapshot %s was given", r.SnapshotID, snap.ID)}
	}
	return nil
}

// saveRunTx writes a checked run inside tx; stored is false when its id is
// already in the store (nothing written for it).
func (s *Store) saveRunTx(ctx context.Context, tx *sql.Tx, r *run.Run, snap *snapshot.Snapshot) (stored bool, err error) {
	if r.Schema == 0 {
		r.Schema = run.Schema
	}
	docJSON, series, err := encodeRunDoc(r, writesRunSeries()) // samples as rows, series apart
	if err != nil {
		return false, err
	}
	if snap != nil {
		sj, err := json.Marshal(snap)
		if err != nil {
			return false, fmt.Errorf("snapshot %s: %w", snap.ID, err)
		}
		res, err := tx.ExecContext(ctx, s.q(`INSERT INTO snapshots (id, taken_at, host, doc) VALUES (?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`),
			snap.ID, snap.TakenAt.UnixNano(), snap.Host.Hostname, string(sj))
		if err != nil {
			return false, fmt.Errorf("saving snapshot %s: %w", snap.ID, err)
		}
		if n, err := res.RowsAffected(); err == nil && n == 1 { // summarized once, not per run naming it
			if err := s.SaveSummaries(ctx, tx, []*snapshot.Snapshot{snap}); err != nil {
				return false, err
			}
		}
	}
	res, err := tx.ExecContext(ctx, s.q(`INSERT INTO runs (id, label, suite, probe, host, snapshot_id, started, complete, doc) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`),
		r.ID, r.Label, r.Suite, r.Probe, r.Host, r.SnapshotID, r.Started.UnixNano(), boolInt(r.Complete), docJSON)
	if err != nil {
		return false, fmt.Errorf("saving run %s: %w", r.ID, err)
	}
	if n, err := res.RowsAffected(); err == nil && n == 0 {
		return false, nil
	}
	if err := s.insertSeries(ctx, tx, r.ID, series); err != nil {
		return false, err
	}
	if err := s.insertSamples(ctx, tx, r); err != nil {
		return false, err
	}
	ms := MetricRows(r)
	if err := s.insertMetricRows(ctx, tx, ms); err != nil {
		return false, err
	}
	if err := s.addHostLabels(ctx, tx, []*run.Run{r}); err != nil {
		return false, err
	}
	if err := s.appendHostMedians(ctx, tx, ms); err != nil {
		return false, err
	}
	return true, nil
}

// ImportError is a run an import refuses: which run, and the field and
// problem in words (never the database's text).
type ImportError struct {
	Run     string
	Problem string
	cause   error // the database's error, for a log; never shown
}

// Unwrap returns the database error behind a failed write, if any.
func (e *ImportError) Unwrap() error { return e.cause }

func (e *ImportError) Error() string {
	id := e.Run
	if id == "" {
		id = "(no id)"
	}
	return "run " + id + ": " + e.Problem
}

// ImportResult counts what Import did.
type ImportResult struct {
	Stored  int `json:"stored"`
	Skipped int `json:"already_stored"` // ids already in the store
}

// errImportFailed stands for a database failure during an import, whose
// text (SQL, constraint names) is not the user's business.
var errImportFailed = errors.New("the database refused the write; nothing was imported")

// Import stores the runs of exports atomically: every run is checked first
// (run.Validate: ids, fields, duplicate samples, lengths), then all are
// written in one transaction, so a bad run anywhere imports nothing. Runs
// whose id is already stored are skipped and counted. It is the one import
// of 'perflab runs import' and the console's POST /import.
func (s *Store) Import(ctx context.Context, exports ...*run.Export) (ImportResult, error) {
	var res ImportResult
	if err := s.refuseWrite("importing runs"); err != nil {
		return res, err
	}
	seen := map[string]bool{}
	for _, ex := range exports {
		for _, r := range ex.Runs {
			if r == nil {
				return res, &ImportError{Problem: "a run is null"}
			}
			if err := checkRun(r, ex.Snapshots[r.SnapshotID]); err != nil {
				return res, err
			}
			if seen[r.ID] {
				return res, &ImportError{Run: r.ID, Problem: "id: the run appears twice in the import"}
			}
			seen[r.ID] = true
		}
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return res, s.writeErr(err)
	}
	defer tx.Rollback()
	written := map[string]bool{} // snapshots written in this transaction: each once
	for _, ex := range exports {
		for _, r := range ex.Runs {
			snap := ex.Snapshots[r.SnapshotID]
			if snap != nil && written[snap.ID] {
				snap = nil
			} else if snap != nil {
				written[snap.ID] = true
			}
			stored, err := s.saveRunTx(ctx, tx, r, snap)
			if err != nil {
				if ctx.Err() != nil {
					return ImportResult{}, ctx.Err()
				}
				return ImportResult{}, &ImportError{Run: r.ID, Problem: errImportFailed.Error(), cause: err}
			}
			if stored {
				res.Stored++
			} else {
				res.Skipped++
			}
		}
	}
	if err := tx.Commit(); err != nil {
		return ImportResult{}, s.writeErr(err)
	}
	return res, nil
}

// sampleBatch is how many samples one INSERT carries: one round trip per
// batch instead of per sample matters on a PostgreSQL server across a
// network, and 4 parameters × 100 rows stays far below both backends'
// parameter limits.
const sampleBatch = 100

func (s *Store) insertSamples(ctx context.Context, tx *sql.Tx, r *run.Run) error {
	for start := 0; start < len(r.Samples); start += sampleBatch {
		batch := r.Samples[start:min(start+sampleBatch, len(r.Samples))]
		q := `INSERT INTO samples (run_id, metric, iteration, value) VALUES ` +
			strings.TrimSuffix(strings.Repeat(`(?, ?, ?, ?), `, len(batch)), ", ")
		args := make([]any, 0, 4*len(batch))
		for _, x := range batch {
			args = append(args, r.ID, x.Metric, x.Iteration, x.Value)
		}
		if _, err := tx.ExecContext(ctx, s.q(q), args...); err != nil {
			return fmt.Errorf("saving run %s samples %d–%d: %w", r.ID, start, start+len(batch)-1, err)
		}
	}
	return nil
}

// Run returns the run whose id starts with id (like git: any unique prefix).
func (s *Store) Run(ctx context.Context, id string) (*run.Run, error) {
	full, err := s.resolve(ctx, "runs", "run", id)
	if err != nil {
		return nil, err
	}
	var doc string
	err = s.db.QueryRowContext(ctx, s.q(`SELECT doc FROM runs WHERE id = ?`), full).Scan(&doc)
	if errors.Is(err, sql.ErrNoRows) { // deleted by another process meanwhile
		return nil, fmt.Errorf("no run %q: %w", id, ErrNotFound)
	}
	if err != nil {
		return nil, err
	}
	return s.load(ctx, full, doc)
}

// Runs returns the runs matching f, newest first.
func (s *Store) Runs(ctx context.Context, f Filter) ([]*run.Run, error) {
	var where []string
	var args []any
	for _, c := range []struct{ col, val string }{{"label", f.Label}, {"probe", f.Probe}, {"host", f.Host}, {"suite", f.Suite}} {
		if c.val != "" {
			where = append(where, c.col+" = ?")
			args = append(args, c.val)
		}
	}
	q := `SELECT id, doc FROM runs`
	if len(where) > 0 {
		q += ` WHERE ` + strings.Join(where, " AND ")
	}
	q += ` ORDER BY started DESC, ` + s.d.byteOrder("id")
	if f.Limit > 0 {
		q += fmt.Sprintf(` LIMIT %d`, f.Limit)
	}
	return s.loadRuns(ctx, q, args)
}

// Delete removes the run whose id starts with id, and its snapshot when no
// other run refers to it.
func (s *Store) Delete(ctx context.Context, id string) error {
	if err := s.refuseWrite("deleting run " + id); err != nil {
		return err
	}
	return s.writeErr(s.delete(ctx, id))
}

func (s *Store) delete(ctx context.Context, id string) error {
	full, err := s.resolve(ctx, "runs", "run", id)
	if err != nil {
		return err
	}
	// Asked before the transaction: SQLite's one connection is its.
	tables := []string{"samples", "run_metrics"}
	if ok, err := s.keepsRunSeries(ctx); err != nil {
		return err
	} else if ok {
		tables = append(tables, "run_series")
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var snap string
	if err := tx.QueryRowContext(ctx, s.q(`SELECT snapshot_id FROM runs WHERE id = ?`), full).Scan(&snap); err != nil {
		return err
	}
	if err := s.removeHostLabel(ctx, tx, full); err != nil {
		return err
	}
	if err := s.removeHostMedians(ctx, tx, full); err != nil {
		return err
	}
	for _, table := range tables {
		if _, err := tx.ExecContext(ctx, s.q(`DELETE FROM `+table+` WHERE run_id = ?`), full); err != nil {
			return err
		}
	}
	if _, err := tx.ExecContext(ctx, s.q(`DELETE FROM runs WHERE id = ?`), full); err != nil {
		return err
	}
	if snap != "" {
		if _, err := tx.ExecContext(ctx, s.q(`DELETE FROM snapshots WHERE id = ? AND NOT EXISTS (SELECT 1 FROM runs WHERE snapshot_id = ?)`), snap, snap); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// Labels lists the labels in use, most recently used first.
func (s *Store) Labels(ctx context.Context) ([]LabelCount, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT label, count(*), max(started) FROM runs WHERE label <> '' GROUP BY label`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []LabelCount
	for rows.Next() {
		var l LabelCount
		var newest int64
		if err := rows.Scan(&l.Label, &l.Runs, &newest); err != nil {
			return nil, err
		}
		l.Newest = time.Unix(0, newest).UTC()
		out = append(out, l)
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].Newest.Equal(out[j].Newest) {
			return out[i].Newest.After(out[j].Newest)
		}
		return out[i].Label < out[j].Label
	})
	return out, rows.Err()
}

// decodeRun decodes a stored run document.
func decodeRun(id, doc string) (*run.Run, error) {
	var r run.Run
	if err := json.Unmarshal([]byte(doc), &r); err != nil {
		return nil, fmt.Errorf("run %s: stored document is corrupt: %w", id, err)
	}
	if r.Schema > run.Schema {
		return nil, fmt.Errorf("run %s: %w: run schema %d", id, run.ErrNewerSchema, r.Schema)
	}
	return &r, nil
}

// load decodes a run document and attaches its samples in iteration order.
func (s *Store) load(ctx context.Context, id, doc string) (*run.Run, error) {
	r, err := decodeRun(id, doc)
	if err != nil {
		return nil, err
	}
	rows, err := s.db.QueryContext(ctx, s.q(`SELECT metric, iteration, value FROM samples WHERE run_id = ? ORDER BY iteration, metric`), id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var x run.Sample
		if err := rows.Scan(&x.Metric, &x.Iteration, &x.Value); err != nil {
			return nil, err
		}
		r.Samples = append(r.Samples, x)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	sortSamples(r)
	return r, s.attachSeries(ctx, []any{id}, map[string]*run.Run{id: r})
}

// sortSamples orders samples by iteration and, within one, in the order
// the probe declared its metrics (the query's order is alphabetical).
func sortSamples(r *run.Run) {
	order := make(map[string]int, len(r.Metrics))
	for i, m := range r.Metrics {
		order[m.Name] = i
	}
	sort.SliceStable(r.Samples, func(i, j int) bool {
		a, b := r.Samples[i], r.Samples[j]
		if a.Iteration != b.Iteration {
			return a.Iteration < b.Iteration
		}
		if order[a.Metric] != order[b.Metric] {
			return order[a.Metric] < order[b.Metric]
		}
		return a.Metric < b.Metric
	})
}

// resolve expands an id prefix to the one full id in table that starts
// with it.
func (s *Store) resolve(ctx context.Context, table, what, prefix string) (string, error) {
	prefix = strings.TrimSpace(prefix)
	if prefix == "" {
		return "", fmt.Errorf("empty %s id", what)
	}
	// A full id is found through the primary key; the prefix scan below
	// reads every id, which a console resolving many ids on a large store
	// cannot afford.
	var exact string
	err := s.db.QueryRowContext(ctx, s.q(`SELECT id FROM `+table+` WHERE id = ?`), prefix).Scan(&exact)
	if err == nil {
		return exact, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return "", err
	}
	// substr rather than LIKE: an id is user input, and LIKE would treat
	// its % and _ as wildcards.
	rows, err := s.db.QueryContext(ctx, s.q(`SELECT id FROM `+table+` WHERE substr(id, 1, ?) = ? ORDER BY `+s.d.byteOrder("id")+` LIMIT 6`), len(prefix), prefix)
	if err != nil {
		return "", err
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return "", err
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		return "", err
	}
	switch len(ids) {
	case 0:
		return "", fmt.Errorf("no %s %q: %w (see 'perflab runs list')", what, prefix, ErrNotFound)
	case 1:
		return ids[0], nil
	}
	more := ""
	if len(ids) > 5 {
		ids, more = ids[:5], ", …"
	}
	return "", &ambiguousError{fmt.Sprintf("%s id %q matches %s%s (give more characters)", what, prefix, strings.Join(ids, ", "), more)}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// ambiguousError is ErrAmbiguous with the candidates, worded once.
type ambiguousError struct{ msg string }

func (e *ambiguousError) Error() string        { return e.msg }
func (e *ambiguousError) Is(target error) bool { return target == ErrAmbiguous }

// loadRuns runs a query selecting (id, doc) and loads those runs with
// their samples, in the query's order. The ids are read to the end before
// the samples are queried: one connection (SQLite) serves one query at a
// time.
func (s *Store) loadRuns(ctx context.Context, q string, args []any) ([]*run.Run, error) {
	rows, err := s.db.QueryContext(ctx, s.q(q), args...)
	if err != nil {
		return nil, err
	}
	type idDoc struct{ id, doc string }
	var found []idDoc
	for rows.Next() {
		var x idDoc
		if err := rows.Scan(&x.id, &x.doc); err != nil {
			rows.Close()
			return nil, err
		}
		found = append(found, x)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	out := make([]*run.Run, 0, len(found))
	byID := make(map[string]*run.Run, len(found))
	for _, x := range found {
		r, err := decodeRun(x.id, x.doc)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
		byID[x.id] = r
	}
	// The samples of sampleIDs runs per query (console.go), not one query
	// per run: a one-host history is then two round trips.
	for start := 0; start < len(found); start += sampleIDs {
		part := found[start:min(start+sampleIDs, len(found))]
		ids := make([]any, len(part))
		for i, x := range part {
			ids[i] = x.id
		}
		if err := s.attachSamples(ctx, ids, byID); err != nil {
			return nil, err
		}
		if err := s.attachSeries(ctx, ids, byID); err != nil {
			return nil, err
		}
	}
	for _, r := range out {
		sortSamples(r)
	}
	return out, nil
}
