package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// migrations[i] takes the schema from version i to i+1. Append only: a
// released migration is never edited, because databases in the field have
// already run it.
var migrations = [][]string{
	// 1: runs, their raw samples, and the snapshots they refer to. The run
	// document (everything but samples) is JSON so a field added to run.Run
	// needs no migration; the columns beside it are only what lists filter
	// and sort on. Samples are rows so that they can be queried in SQL.
	{
		`CREATE TABLE snapshots (
			id       TEXT PRIMARY KEY,
			taken_at BIGINT NOT NULL,
			host     TEXT NOT NULL,
			doc      TEXT NOT NULL
		)`,
		`CREATE TABLE runs (
			id          TEXT PRIMARY KEY,
			label       TEXT NOT NULL,
			suite       TEXT NOT NULL,
			probe       TEXT NOT NULL,
			host        TEXT NOT NULL,
			snapshot_id TEXT NOT NULL,
			started     BIGINT NOT NULL,
			complete    INTEGER NOT NULL,
			doc         TEXT NOT NULL
		)`,
		`CREATE INDEX runs_started ON runs (started)`,
		`CREATE INDEX runs_label ON runs (label, started)`,
		`CREATE TABLE samples (
			run_id    TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
			metric    TEXT NOT NULL,
			iteration INTEGER NOT NULL,
			value     DOUBLE PRECISION NOT NULL,
			PRIMARY KEY (run_id, metric, iteration)
		)`,
	},
	// 2: indices for the web console (perflab serve), which lists hosts,
	// a host's runs of one probe over a time range and a host's
	// snapshots by time, on stores of 10,000 runs and more.
	{
		`CREATE INDEX runs_host ON runs (host, started)`,
		`CREATE INDEX runs_probe_host ON runs (probe, host, started)`,
		`CREATE INDEX snapshots_host ON snapshots (host, taken_at)`,
	},
	// 3: results that are not runs (a bisection), as JSON documents of a
	// kind, so 'perflab report KIND:ID' can show them again.
	{
		`CREATE TABLE reports (
			id      TEXT PRIMARY KEY,
			kind    TEXT NOT NULL,
			created BIGINT NOT NULL,
			host    TEXT NOT NULL,
			doc     TEXT NOT NULL
		)`,
		`CREATE INDEX reports_kind ON reports (kind, created)`,
	},
	// 4: each usable run's median per metric, written with the run, so a
	// fleet report over a million runs reads one row per run and metric
	// instead of every sample and run document (docs/fleet-scale.md).
	// Existing runs are filled in by backfillRunMetrics in the same step.
	{
		`CREATE TABLE run_metrics (
			run_id  TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
			metric  TEXT NOT NULL,
			host    TEXT NOT NULL,
			probe   TEXT NOT NULL,
			params  TEXT NOT NULL,
			label   TEXT NOT NULL,
			started BIGINT NOT NULL,
			unit    TEXT NOT NULL,
			better  TEXT NOT NULL,
			median  DOUBLE PRECISION NOT NULL,
			PRIMARY KEY (run_id, metric)
		)`,
		`CREATE INDEX run_metrics_probe ON run_metrics (probe, host, started)`,
	},
	// 5: what a fleet report needs of each snapshot (its setting and
	// identity facts, grouping identity and audit outcomes), made when the
	// snapshot is stored by the registered summarizer (snapshotfacts.go);
	// distinct sets once in fact_sets. Existing snapshots are summarized
	// by backfillSnapshotFacts in the same step.
	{
		`CREATE TABLE fact_sets (
			id  TEXT PRIMARY KEY,
			doc TEXT NOT NULL
		)`,
		`CREATE TABLE snapshot_facts (
			snapshot_id TEXT PRIMARY KEY REFERENCES snapshots (id) ON DELETE CASCADE,
			version     INTEGER NOT NULL,
			fact_set    TEXT NOT NULL
		)`,
	},
	// 6: per host and metric, the medians of the host's usable runs
	// (hostmedians.go), written with each run, so a fleet report of all
	// runs reads a row per host and metric instead of one per run and
	// metric. Filled from run_metrics by backfillHostMedians in the same
	// step. BYTEA is a BLOB to SQLite (any type name is accepted; a blob is
	// stored as it is).
	{
		`CREATE TABLE host_medians (
			host    TEXT NOT NULL,
			probe   TEXT NOT NULL,
			metric  TEXT NOT NULL,
			params  TEXT NOT NULL,
			unit    TEXT NOT NULL,
			better  TEXT NOT NULL,
			medians BYTEA NOT NULL,
			PRIMARY KEY (host, probe, metric, params, unit, better)
		)`,
	},
	// 7: per host and label, how many of the host's runs carry it
	// (hostlabels.go), written with each run, so the console's label
	// filter reads at most a row per host instead of every run under the
	// label. Filled from runs in the same step (one INSERT … SELECT …
	// GROUP BY). And an index for the newest runs of each probe under a
	// label, which the console compares a label of a million runs by.
	{
		`CREATE TABLE host_labels (
			host  TEXT NOT NULL,
			label TEXT NOT NULL,
			runs  BIGINT NOT NULL,
			PRIMARY KEY (host, label)
		)`,
		`CREATE INDEX host_labels_label ON host_labels (label, host)`,
		backfillHostLabelsSQL,
		// the newest runs of each probe under a label (LabelProbeRefs)
		`CREATE INDEX runs_label_probe ON runs (label, probe, started)`,
	},
	// 8: each run's monitor series in run_series, apart from its document
	// (series.go), so the readers that never show them (the console's
	// index build, a comparison's noise history) read and decode a third
	// of the bytes. Moved out of the stored documents by splitSeries in
	// the same step (two set-based statements, no document parsed).
	{
		`CREATE TABLE run_series (
			run_id TEXT PRIMARY KEY REFERENCES runs (id) ON DELETE CASCADE,
			doc    TEXT NOT NULL
		)`,
	},
}

// stepHooks[i] runs in migration i's transaction after its statements:
// what SQL alone cannot do (medians computed as Go computes them).
var stepHooks = map[int]func(ctx context.Context, s *Store, tx *sql.Tx) error{
	3: backfillRunMetrics,
	4: backfillSnapshotFacts,
	5: backfillHostMedians,
	7: func(ctx context.Context, s *Store, tx *sql.Tx) error { return splitSeries(ctx, s, tx) },
}

// SchemaVersion is the database schema this perflab writes.
var SchemaVersion = len(migrations)

// oldestReadable is the oldest schema whose tables the queries of this
// perflab read as they are, so OpenReadOnly can use it without migrating.
// Raise it to the new SchemaVersion when a migration changes a table or
// column those queries use; a migration that only adds leaves it alone.
var oldestReadable = 1

// migrate brings the database to SchemaVersion, or refuses a newer one
// without writing anything. Each step re-reads the version under the
// dialect's schema lock, so processes opening a new shared database at the
// same moment migrate it once between them.
func (s *Store) migrate(ctx context.Context) error {
	v, err := s.quickVersion(ctx)
	if err != nil {
		return err
	}
	for {
		if err := newerErr(v); err != nil {
			return err
		}
		if v >= SchemaVersion {
			s.hasRunSeries.Store(v >= 8) // known now: no query on the first read of series
			return nil
		}
		if v, err = s.step(ctx, v); err != nil {
			return fmt.Errorf("migrating schema %d to %d: %w", v, v+1, err)
		}
	}
}

// newerErr refuses a schema written by a newer perflab, whose tables this
// one cannot know the meaning of.
func newerErr(v int) error {
	if v > SchemaVersion {
		return fmt.Errorf("%w: the database has schema %d, this perflab writes schema %d (upgrade perflab, or use --db to pick another database; nothing was changed)", ErrNewerSchema, v, SchemaVersion)
	}
	return nil
}

// checkReadable is migrate for a read-only store: it accepts any schema from
// oldestReadable to SchemaVersion and changes nothing.
func (s *Store) checkReadable(ctx context.Context) error {
	v, err := s.quickVersion(ctx)
	if err != nil {
		return err
	}
	if err := newerErr(v); err != nil {
		return err
	}
	if v == 0 {
		return fmt.Errorf("%w: the database %s is empty", ErrNoDatabase, s.Path)
	}
	if v < oldestReadable {
		return fmt.Errorf("%w: the database has schema %d, this perflab reads schema %d to %d without migrating (run a command that stores runs, such as 'perflab bench', on it once as a user who may write it; that migrates it)", ErrOlderSchema, v, oldestReadable, SchemaVersion)
	}
	return nil
}

// querier is a database or a transaction.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// version reads the schema version; a database without the table is new.
func (s *Store) version(ctx context.Context, db querier) (int, error) {
	rows, err := db.QueryContext(ctx, s.d.tablesQuery())
	if err != nil {
		return 0, s.openErr(err)
	}
	tables := map[string]bool{}
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			rows.Close()
			return 0, err
		}
		tables[name] = true
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, s.openErr(err)
	}
	if !tables["schema_version"] {
		if len(tables) > 0 {
			return 0, fmt.Errorf("%w: it has tables but no schema_version, so another program created it; use another --db path", ErrNotPerflab)
		}
		return 0, nil
	}
	var v int
	err = db.QueryRowContext(ctx, `SELECT version FROM schema_version`).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	return v, err
}

// step applies migration v (to v+1) in one transaction with its version
// bump, so a crash leaves either the old schema or the new one. It returns
// the version the database has afterwards: v+1, or the version another
// process migrated it to while this one waited for the schema lock.
func (s *Store) step(ctx context.Context, v int) (int, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return v, err
	}
	defer tx.Rollback()
	if err := s.d.lockSchema(ctx, tx); err != nil {
		return v, err
	}
	if cur, err := s.version(ctx, tx); err != nil || cur != v {
		return cur, err
	}
	if v == 0 {
		if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)`); err != nil {
			return v, err
		}
	}
	for _, stmt := range migrations[v] {
		if _, err := tx.ExecContext(ctx, stmt); err != nil {
			return v, err
		}
	}
	if hook := stepHooks[v]; hook != nil {
		if err := hook(ctx, s, tx); err != nil {
			return v, err
		}
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM schema_version`); err != nil {
		return v, err
	}
	if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO schema_version (version) VALUES (?)`), v+1); err != nil {
		return v, err
	}
	return v + 1, tx.Commit()
}

// SQLite's primary result codes that say why a file could not be opened.
const (
	sqliteReadOnly = 8
	sqliteCantOpen = 14
	sqliteNotADB   = 26
)

// openErr tells the reasons a database cannot be read apart: the file is
// not SQLite at all (the user named the wrong file), or SQLite may not open
// it (read-write: a file or directory the user may not write, as the WAL
// journal needs both; read-only: a file the user may not read).
func (s *Store) openErr(err error) error {
	if _, ok := s.d.(pgDialect); ok {
		return pgErr(err)
	}
	var coded interface{ Code() int }
	if errors.As(err, &coded) {
		switch coded.Code() & 0xff {
		case sqliteNotADB:
			return fmt.Errorf("%w: the file is not a SQLite database", ErrNotPerflab)
		case sqliteReadOnly, sqliteCantOpen:
			if s.readOnly {
				return fmt.Errorf("cannot open the database for reading (permission on the file, or on its -wal and -shm files?): %w", err)
			}
			return fmt.Errorf("cannot open the database read-write, which perflab needs (permission on the file and its directory?): %w", err)
		}
	}
	return fmt.Errorf("cannot read the database (is it a perflab SQLite database?): %w", err)
}
