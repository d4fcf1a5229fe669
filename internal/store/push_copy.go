package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
)

// pushCopy writes one batch of a push into PostgreSQL in one transaction
// and a handful of round trips, whatever its size: COPY into temporary
// staging tables (dropped at commit), then one INSERT … SELECT … ON
// CONFLICT DO NOTHING per table. It returns how many runs it stored.
//
// Exactly once under concurrent writers: a run id another transaction is
// inserting blocks this one's insert of it until that one ends; if it
// committed, the row is skipped here (and not among the ids RETURNING
// gives), if it rolled back, this one stores it. The run's samples and
// medians are inserted only for the ids this statement stored, in the same
// statement, so a run is stored whole by exactly one writer, and the
// writers' counts of runs added sum to the runs stored. Rows go in in key
// order, so two writers holding overlapping batches wait for each other
// instead of deadlocking (a deadlock would still be retried whole).
func (s *Store) pushCopy(ctx context.Context, b pushLoad) (int, error) {
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	var added int
	err = conn.Raw(func(dc any) error {
		var err error
		added, err = s.pushCopyPG(ctx, dc.(*stdlib.Conn).Conn(), b)
		return err
	})
	return added, err
}

// errNoTemp is a role that may not create temporary tables in the
// database (REVOKE TEMPORARY): the push then writes row by row.
var errNoTemp = errors.New("no TEMPORARY privilege on the database")

// pushStaging creates the staging tables once per connection, shaped like
// the tables they feed (LIKE copies the columns and NOT NULL, not keys or
// indexes: COPY into them only appends). Their rows go at the end of each
// transaction, committed or not; the tables themselves go with the
// session, so a batch does not churn the catalog (a fleet pushing at once
// would otherwise create and drop four tables per batch and writer).
const pushStaging = `CREATE TEMPORARY TABLE IF NOT EXISTS push_snapshots (LIKE snapshots) ON COMMIT DELETE ROWS;
CREATE TEMPORARY TABLE IF NOT EXISTS push_runs (LIKE runs) ON COMMIT DELETE ROWS;
CREATE TEMPORARY TABLE IF NOT EXISTS push_samples (LIKE samples) ON COMMIT DELETE ROWS;
CREATE TEMPORARY TABLE IF NOT EXISTS push_metrics (LIKE run_metrics) ON COMMIT DELETE ROWS;
CREATE TEMPORARY TABLE IF NOT EXISTS push_series (LIKE run_series) ON COMMIT DELETE ROWS`

// pushSnapshotsSQL stores the staged snapshots not yet stored.
const pushSnapshotsSQL = `INSERT INTO snapshots (id, taken_at, host, doc)
SELECT id, taken_at, host, doc FROM push_snapshots ORDER BY id COLLATE "C"
ON CONFLICT (id) DO NOTHING`

// pushRunsSQL stores the staged runs not yet stored and, in the same
// statement, the monitor series, samples and medians of exactly those runs, counts those
// runs in their hosts' labels (host_labels) and appends their medians to
// their hosts' lists (host_medians), each in key order as addHostLabels
// and appendHostMedians lock them; it returns how many runs it stored.
// host_labels is written first, as by every other writer: the main query
// reads labels_added, so it runs while the main query does, and the
// data-modifying CTEs nothing reads (hosts_added) run after it.
var pushRunsSQL = `WITH added AS (
	INSERT INTO runs (` + strings.Join(runCols, ", ") + `)
	SELECT ` + strings.Join(runCols, ", ") + ` FROM push_runs ORDER BY id COLLATE "C"
	ON CONFLICT (id) DO NOTHING
	RETURNING id, host, label
), labels_added AS (
	INSERT INTO host_labels (host, label, runs)
	SELECT host, label, count(*) FROM added GROUP BY host, label
	ORDER BY host COLLATE "C", label COLLATE "C"
	ON CONFLICT (host, label) DO UPDATE SET runs = host_labels.runs + excluded.runs
	RETURNING 1
), series_added AS (
	INSERT INTO run_series (` + strings.Join(seriesCols, ", ") + `)
	SELECT ` + prefixed("p.", seriesCols) + ` FROM push_series p JOIN added a ON a.id = p.run_id
	ORDER BY p.run_id COLLATE "C"
), samples_added AS (
	INSERT INTO samples (` + strings.Join(sampleCols, ", ") + `)
	SELECT ` + prefixed("p.", sampleCols) + ` FROM push_samples p JOIN added a ON a.id = p.run_id
	ORDER BY p.run_id COLLATE "C", p.metric COLLATE "C", p.iteration
), metrics_added AS (
	INSERT INTO run_metrics (` + strings.Join(metricCols, ", ") + `)
	SELECT ` + prefixed("p.", metricCols) + ` FROM push_metrics p JOIN added a ON a.id = p.run_id
	ORDER BY p.run_id COLLATE "C", p.metric COLLATE "C"
	RETURNING host, probe, metric, params, unit, better, median
), hosts_added AS (
	INSERT INTO host_medians (` + strings.Join(hostMedianCols, ", ") + `)
	SELECT host, probe, metric, params, unit, better, string_agg(float8send(median), ''::bytea)
	FROM metrics_added GROUP BY host, probe, metric, params, unit, better
	ORDER BY host COLLATE "C", probe COLLATE "C", metric COLLATE "C", params COLLATE "C", unit COLLATE "C", better COLLATE "C"
	ON CONFLICT (host, probe, metric, params, unit, better) DO UPDATE SET medians = host_medians.medians || excluded.medians
)
SELECT count(*) FROM added WHERE (SELECT count(*) FROM labels_added) >= 0`

func prefixed(p string, cols []string) string {
	out := make([]string, len(cols))
	for i, c := range cols {
		out[i] = p + c
	}
	return strings.Join(out, ", ")
}

func (s *Store) pushCopyPG(ctx context.Context, c *pgx.Conn, b pushLoad) (int, error) {
	runRows, seriesRows, sampleRows, medianRows, err := copyRows(b.runs)
	if err != nil {
		return 0, err
	}
	snapRows := make([][]any, len(b.snaps))
	for i, x := range b.snaps {
		snapRows[i] = []any{x.id, x.takenAt, x.host, x.doc}
	}
	tx, err := c.Begin(ctx)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, pushStaging); err != nil {
		var pe *pgconn.PgError
		if errors.As(err, &pe) && pe.Code == pgInsufficientPriv {
			return 0, errNoTemp
		}
		return 0, fmt.Errorf("creating the staging tables: %w", err)
	}
	for _, t := range []struct {
		table string
		cols  []string
		rows  [][]any
	}{
		{"push_snapshots", []string{"id", "taken_at", "host", "doc"}, snapRows},
		{"push_runs", runCols, runRows},
		{"push_series", seriesCols, seriesRows},
		{"push_samples", sampleCols, sampleRows},
		{"push_metrics", metricCols, medianRows},
	} {
		if err := copyTable(ctx, tx, t.table, t.cols, t.rows); err != nil {
			return 0, err
		}
	}
	if len(snapRows) > 0 {
		if _, err := tx.Exec(ctx, pushSnapshotsSQL); err != nil {
			return 0, fmt.Errorf("storing snapshots: %w", err)
		}
		// Their fact sets, as every other snapshot writer stores them
		// (a snapshot another writer stored meanwhile keeps its own).
		if err := s.SaveSummaries(ctx, pgxExec{tx}, b.decoded()); err != nil {
			return 0, err
		}
	}
	var added int
	if err := tx.QueryRow(ctx, pushRunsSQL).Scan(&added); err != nil {
		return 0, fmt.Errorf("storing runs: %w", err)
	}
	return added, tx.Commit(ctx)
}

// pgxExec runs the store's database/sql-style statements on a pgx
// transaction.
type pgxExec struct{ tx pgx.Tx }

func (e pgxExec) ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error) {
	tag, err := e.tx.Exec(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	return driver.RowsAffected(tag.RowsAffected()), nil
}
