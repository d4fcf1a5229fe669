package store

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/perflab/perflab/internal/run"
)

// run_series (schema 8) holds each run's monitor series (run.Run.Monitor:
// a point a second of host activity) apart from its run document, which
// since schema 8 is stored without them. The series were ~70% of a
// document's bytes, and the readers that decode the most documents — the
// console's index build (PairRuns) and a comparison's noise history
// (HistoryRunsByIDs) — never read them: they now read and decode only the
// document. Every reader of whole runs (Run, Runs, RunsBatch, RunsPage,
// RunsByIDs, a push's source) attaches the series, so a run read back is
// the run written. Every writer (SaveRun, Import, both Push paths,
// CopyRuns) writes a run's series row in the run's own transaction,
// right after its runs row (the row the series row's key refers to; no
// other writer can hold it: a run id is stored once), and Delete removes
// it with the run. A run without series has no row.
// docs/fleet-scale.md, "Monitor series apart (schema 8)".

// writesRunSeries is false only in tests that make a store of an older
// schema (SchemaVersion lowered) to migrate: such a store keeps the
// series in the document, as that schema did.
func writesRunSeries() bool { return SchemaVersion >= 8 }

// seriesKey is how a stored document's monitor series begins: json.Marshal
// of run.Run writes the field after samples (so never first) as an array
// of objects without arrays or strings inside, so it ends at the first
// ']' after it. The migration cuts the series out of documents with it
// (splitSeriesSQL); a key inside a string value would have its quotes
// escaped, so the text occurs only as the field.
const seriesKey = `,"monitor":[`

// encodeRunDoc is the stored form of a run: its document (without samples,
// stored as rows, and, when apart, without its monitor series) and its
// series as a JSON array ("" when it has none or they stay in the
// document).
func encodeRunDoc(r *run.Run, apart bool) (doc, series string, err error) {
	d := *r
	d.Samples = nil
	if apart && len(r.Monitor) > 0 {
		d.Monitor = nil
		sj, err := json.Marshal(r.Monitor)
		if err != nil {
			return "", "", fmt.Errorf("run %s: %w", r.ID, err)
		}
		series = string(sj)
	}
	dj, err := json.Marshal(&d)
	if err != nil {
		return "", "", fmt.Errorf("run %s: %w", r.ID, err)
	}
	return string(dj), series, nil
}

// insertSeries writes a run's series row (nothing when it has none).
func (s *Store) insertSeries(ctx context.Context, tx execer, id, series string) error {
	if series == "" {
		return nil
	}
	if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO run_series (run_id, doc) VALUES (?, ?)`), id, series); err != nil {
		return fmt.Errorf("saving run %s monitor series: %w", id, err)
	}
	return nil
}

// decodeSeries decodes a stored series row.
func decodeSeries(id, doc string) ([]run.MonitorPoint, error) {
	pts, err := run.DecodeSeries([]byte(doc))
	if err != nil {
		return nil, fmt.Errorf("run %s: stored monitor series is corrupt: %w", id, err)
	}
	return pts, nil
}

// attachSeries reads the series of the runs ids (at most sampleIDs, all in
// idx) in one query and sets their Monitor. A store older than schema 8
// (opened read-only) keeps them in the documents: nothing to read.
func (s *Store) attachSeries(ctx context.Context, ids []any, idx map[string]*run.Run) error {
	return s.scanSeries(ctx, ids, func(id string) bool { return idx[id] != nil },
		func(id string, pts []run.MonitorPoint) { idx[id].Monitor = pts })
}

// scanSeries reads the series of the runs ids (at most sampleIDs) in one
// query and hands each that want reports true, decoded, to set.
func (s *Store) scanSeries(ctx context.Context, ids []any, want func(id string) bool, set func(id string, pts []run.MonitorPoint)) error {
	if len(ids) == 0 {
		return nil
	}
	if ok, err := s.keepsRunSeries(ctx); err != nil || !ok {
		return err
	}
	rows, err := s.db.QueryContext(ctx, s.q(`SELECT run_id, doc FROM run_series WHERE run_id IN (`+strings.TrimSuffix(strings.Repeat("?, ", len(ids)), ", ")+`)`), ids...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var id, doc string
		if err := rows.Scan(&id, &doc); err != nil {
			return err
		}
		if !want(id) {
			continue
		}
		pts, err := decodeSeries(id, doc)
		if err != nil {
			return err
		}
		set(id, pts)
	}
	return rows.Err()
}

// seriesOf starts reading the series of the runs ids on a goroutine (on a
// connection of its own, where the store has more than one) and returns
// the wait for them, by run id. The wait must be called.
func (s *Store) seriesOf(ctx context.Context, ids []string) func() (map[string][]run.MonitorPoint, error) {
	type result struct {
		m   map[string][]run.MonitorPoint
		err error
	}
	done := make(chan result, 1)
	go func() {
		m := make(map[string][]run.MonitorPoint, len(ids))
		var err error
		for start := 0; start < len(ids) && err == nil; start += sampleIDs {
			chunk := make([]any, 0, sampleIDs)
			for _, id := range ids[start:min(start+sampleIDs, len(ids))] {
				chunk = append(chunk, id)
			}
			err = s.scanSeries(ctx, chunk, func(string) bool { return true },
				func(id string, pts []run.MonitorPoint) { m[id] = pts })
		}
		done <- result{m, err}
	}()
	return func() (map[string][]run.MonitorPoint, error) {
		r := <-done
		return r.m, r.err
	}
}

// attachAllSeries is attachSeries for any number of runs.
func (s *Store) attachAllSeries(ctx context.Context, runs []*run.Run) error {
	idx := make(map[string]*run.Run, len(runs))
	ids := make([]any, 0, len(runs))
	for _, r := range runs {
		if _, dup := idx[r.ID]; !dup {
			idx[r.ID] = r
			ids = append(ids, r.ID)
		}
	}
	for start := 0; start < len(ids); start += sampleIDs {
		if err := s.attachSeries(ctx, ids[start:min(start+sampleIDs, len(ids))], idx); err != nil {
			return err
		}
	}
	return nil
}

// keepsRunSeries reports whether the store has run_series (schema 8 or
// later; a store opened read-only may be older). Once true it is not asked
// again: a schema never goes back.
func (s *Store) keepsRunSeries(ctx context.Context) (bool, error) {
	if s.hasRunSeries.Load() {
		return true, nil
	}
	v, err := s.quickVersion(ctx)
	if err != nil {
		return false, err
	}
	ok := v >= 8
	if ok {
		s.hasRunSeries.Store(true)
	}
	return ok, nil
}

// runSeriesFlag is the Store's memo of keepsRunSeries.
type runSeriesFlag = atomic.Bool

// splitSeries is schema 8's move of the stored series out of the run
// documents: two set-based statements, the series into run_series, then
// the documents without them. Both find the series as text (seriesKey to
// the first ']' after it), so a document is never parsed and the rest of
// it stays byte for byte as written. pos is the dialect's
// position-of-substring function (strpos, instr).
func splitSeries(ctx context.Context, s *Store, tx execer) error {
	pos := "instr"
	if _, ok := s.d.(pgDialect); ok {
		pos = "strpos"
	}
	for _, q := range splitSeriesSQL(pos) {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return err
		}
	}
	return nil
}

// splitSeriesSQL is splitSeries' two statements. With p the position of
// seriesKey (1-based) and e that of the first ']' after it, the series is
// the text from p+11 (its '[') to e, and the document keeps what is
// before p and after e.
func splitSeriesSQL(pos string) []string {
	key := "'" + seriesKey + "'"
	p := pos + `(doc, ` + key + `)`
	e := p + ` + ` + pos + `(substr(doc, ` + p + `), ']') - 1`
	return []string{
		`INSERT INTO run_series (run_id, doc)
		SELECT id, substr(doc, p + 11, e - p - 10) FROM (
			SELECT id, doc, p, p + ` + pos + `(substr(doc, p), ']') - 1 AS e
			FROM (SELECT id, doc, ` + p + ` AS p FROM runs) k WHERE p > 0) s`,
		`UPDATE runs SET doc = substr(doc, 1, ` + p + ` - 1) || substr(doc, ` + e + ` + 1) WHERE ` + p + ` > 0`,
	}
}
