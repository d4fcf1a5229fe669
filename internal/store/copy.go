package store

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/perflab/perflab/internal/run"
	"github.com/perflab/perflab/internal/snapshot"
)

// CopyRuns stores checked runs and snapshots in one transaction, for bulk
// loads into a store that does not hold them yet (bench/fleetstore.sh's
// generated fleet). On PostgreSQL every table is written with COPY, one
// round trip per table, so a million runs load in minutes; a run or
// snapshot id already stored fails the whole batch (nothing written). On
// SQLite it is SaveRun's write, once per run, in one transaction.
func (s *Store) CopyRuns(ctx context.Context, runs []*run.Run, snaps []*snapshot.Snapshot) error {
	if err := s.refuseWrite("loading runs"); err != nil {
		return err
	}
	for _, r := range runs {
		if err := checkRun(r, nil); err != nil {
			return err
		}
	}
	if _, ok := s.d.(pgDialect); !ok {
		return s.writeErr(s.copySQLite(ctx, runs, snaps))
	}
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return s.writeErr(err)
	}
	defer conn.Close()
	sets := summarize(snaps) // before the transaction: it is CPU, not I/O
	return s.writeErr(conn.Raw(func(dc any) error {
		return s.copyPG(ctx, dc.(*stdlib.Conn).Conn(), runs, snaps, sets)
	}))
}

func (s *Store) copySQLite(ctx context.Context, runs []*run.Run, snaps []*snapshot.Snapshot) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	for _, snap := range snaps {
		sj, err := json.Marshal(snap)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO snapshots (id, taken_at, host, doc) VALUES (?, ?, ?, ?)`,
			snap.ID, snap.TakenAt.UnixNano(), snap.Host.Hostname, string(sj)); err != nil {
			return fmt.Errorf("snapshot %s: %w", snap.ID, err)
		}
	}
	if err := s.SaveSummaries(ctx, tx, snaps); err != nil {
		return err
	}
	for _, r := range runs {
		stored, err := s.saveRunTx(ctx, tx, r, nil)
		if err != nil {
			return err
		}
		if !stored {
			return fmt.Errorf("run %s: %w", r.ID, ErrExists)
		}
	}
	return tx.Commit()
}

func (s *Store) copyPG(ctx context.Context, c *pgx.Conn, runs []*run.Run, snaps []*snapshot.Snapshot, sets []factSet) error {
	tx, err := c.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx)
	var rows [][]any
	for _, snap := range snaps {
		sj, err := json.Marshal(snap)
		if err != nil {
			return fmt.Errorf("snapshot %s: %w", snap.ID, err)
		}
		rows = append(rows, []any{snap.ID, snap.TakenAt.UnixNano(), snap.Host.Hostname, string(sj)})
	}
	if err := copyTable(ctx, tx, "snapshots", []string{"id", "taken_at", "host", "doc"}, rows); err != nil {
		return err
	}
	runRows, seriesRows, sampleRows, medianRows, err := copyRows(runs)
	if err != nil {
		return err
	}
	if err := copyTable(ctx, tx, "runs", runCols, runRows); err != nil {
		return err
	}
	if err := copyTable(ctx, tx, "run_series", seriesCols, seriesRows); err != nil {
		return err
	}
	if err := copyTable(ctx, tx, "samples", sampleCols, sampleRows); err != nil {
		return err
	}
	if err := copyTable(ctx, tx, "run_metrics", metricCols, medianRows); err != nil {
		return err
	}
	var ms []MetricRow
	for _, r := range runs {
		ms = append(ms, MetricRows(r)...)
	}
	if err := s.addHostLabels(ctx, pgxExec{tx}, runs); err != nil {
		return err
	}
	if err := s.appendHostMedians(ctx, pgxExec{tx}, ms); err != nil {
		return err
	}
	if err := copyFactSets(ctx, tx, sets); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

func copyTable(ctx context.Context, tx pgx.Tx, table string, cols []string, rows [][]any) error {
	if len(rows) == 0 {
		return nil
	}
	if _, err := tx.CopyFrom(ctx, pgx.Identifier{table}, cols, pgx.CopyFromRows(rows)); err != nil {
		return fmt.Errorf("copying %d rows into %s: %w", len(rows), table, err)
	}
	return nil
}

// The columns of runs and samples that COPY writes, in copyRows' order.
var (
	runCols    = []string{"id", "label", "suite", "probe", "host", "snapshot_id", "started", "complete", "doc"}
	sampleCols = []string{"run_id", "metric", "iteration", "value"}
	seriesCols = []string{"run_id", "doc"}
)

// copyRows are checked runs as rows of runs, run_series, samples and
// run_metrics (in runCols, seriesCols, sampleCols and metricCols order):
// what SaveRun would write.
func copyRows(runs []*run.Run) (runRows, seriesRows, sampleRows, medianRows [][]any, err error) {
	for _, r := range runs {
		if r.Schema == 0 {
			r.Schema = run.Schema
		}
		doc, series, err := encodeRunDoc(r, writesRunSeries())
		if err != nil {
			return nil, nil, nil, nil, err
		}
		runRows = append(runRows, []any{r.ID, r.Label, r.Suite, r.Probe, r.Host, r.SnapshotID, r.Started.UnixNano(), boolInt(r.Complete), doc})
		if series != "" {
			seriesRows = append(seriesRows, []any{r.ID, series})
		}
		for _, x := range r.Samples {
			sampleRows = append(sampleRows, []any{r.ID, x.Metric, x.Iteration, x.Value})
		}
		for _, m := range MetricRows(r) {
			medianRows = append(medianRows, m.values())
		}
	}
	return runRows, seriesRows, sampleRows, medianRows, nil
}

// copyFactSets writes the snapshots' fact sets: the sets with INSERT, as
// other batches may hold the same, the snapshots' rows with COPY.
func copyFactSets(ctx context.Context, tx pgx.Tx, sets []factSet) error {
	docs := map[string]string{}
	var rows [][]any
	for _, f := range sets {
		docs[f.id] = string(f.doc)
		rows = append(rows, []any{f.snapshot, summarizer.version, f.id})
	}
	ids := make([]string, 0, len(docs))
	for id := range docs {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		if _, err := tx.Exec(ctx, `INSERT INTO fact_sets (id, doc) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING`, id, docs[id]); err != nil {
			return fmt.Errorf("saving fact set %s: %w", id, err)
		}
	}
	return copyTable(ctx, tx, "snapshot_facts", []string{"snapshot_id", "version", "fact_set"}, rows)
}
