// Package store keeps benchmark runs and the host snapshots they were taken
// on, so that compare, report and check can join runs measured days or hosts
// apart.
//
// The default backend is an embedded SQLite database (modernc.org/sqlite,
// pure Go, so perflab stays one static binary) under the XDG data directory.
// SQL differences between backends are confined to a small dialect value
// (placeholders, DSN handling), which is the seam a PostgreSQL backend for a
// shared store plugs into; every query is written in the portable subset both
// understand (ON CONFLICT, no RETURNING, integer timestamps).
//
// The schema is versioned (table schema_version) and migrated forward on
// Open. A database written by a newer perflab is refused untouched, because
// an older binary cannot know what its newer tables mean.
//
// Commands that only read use OpenReadOnly, which never creates, migrates or
// writes anything, so a database shared read-only, on a read-only mount or
// owned by another user can still be listed and compared. Open refuses a
// database it could not write before anything runs, so a command that
// writes fails in its first second with the reason instead of with SQLite's
// "attempt to write a readonly database" half-way through.
package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver
)

// ErrNewerSchema is returned by Open for a database written by a newer
// perflab.
var ErrNewerSchema = errors.New("database schema is newer than this perflab supports")

// ErrNotFound is returned when no run or snapshot matches an id.
var ErrNotFound = errors.New("not found")

// ErrAmbiguous is returned when an id prefix matches more than one run.
var ErrAmbiguous = errors.New("ambiguous id prefix")

// ErrBadPath is returned by Open for a database path that cannot be one: a
// missing directory or a directory in place of the file.
var ErrBadPath = errors.New("bad database path")

// ErrNotPerflab is returned by Open for a SQLite database of some other
// program, which perflab must not write its tables into.
var ErrNotPerflab = errors.New("not a perflab database")

// ErrExists is returned by SaveRun for a run id that is already stored.
var ErrExists = errors.New("already stored")

// ErrReadOnly is returned by Open for a database this process may not
// write, and by SaveRun and Delete on a store opened with OpenReadOnly.
var ErrReadOnly = errors.New("database is read-only")

// ErrNoDatabase is returned by OpenReadOnly when there is nothing to read:
// no database file (it is created by the first command that stores a run)
// or an empty one.
var ErrNoDatabase = errors.New("no runs are stored yet")

// ErrOlderSchema is returned by OpenReadOnly for a database whose schema is
// too old to be read without migrating it, which a read-only open may not do.
var ErrOlderSchema = errors.New("database schema is older than this perflab reads")

// Store is an open run database.
type Store struct {
	db       *sql.DB
	d        dialect
	readOnly bool
	Path     string // the database file (SQLite) or the DSN with any password removed

	hasHostLabels hostLabelsFlag // memo of keepsHostLabels
	hasRunSeries  runSeriesFlag  // memo of keepsRunSeries
}

// DefaultPath is $XDG_DATA_HOME/perflab/perflab.db, falling back to
// ~/.local/share/perflab/perflab.db as the XDG base directory spec says.
func DefaultPath() (string, error) {
	dir := os.Getenv("XDG_DATA_HOME")
	if dir == "" || !filepath.IsAbs(dir) {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("cannot find the data directory: %w (set XDG_DATA_HOME or use --db)", err)
		}
		dir = filepath.Join(home, ".local", "share")
	}
	return filepath.Join(dir, "perflab", "perflab.db"), nil
}

// Open opens (creating and migrating as needed) the store named by dsn: ""
// for the default SQLite file, a file path, "sqlite:PATH", or a PostgreSQL
// URL (postgres://…, see openPostgres). A database
// this process may not write is refused with ErrReadOnly before anything
// is read or written.
func Open(dsn string) (*Store, error) {
	if IsPostgres(dsn) {
		return openPostgres(dsn, false)
	}
	path, err := sqlitePath(dsn, true)
	if err != nil {
		return nil, err
	}
	if err := checkWritable(path); err != nil {
		return nil, err
	}
	d := sqliteDialect{}
	db, err := sql.Open(d.driver(), d.dsn(path))
	if err != nil {
		return nil, fmt.Errorf("database %s: %w", path, err)
	}
	// One connection: SQLite serialises writers anyway, and a single
	// connection cannot deadlock against itself on a write lock.
	db.SetMaxOpenConns(1)
	s := &Store{db: db, d: d, Path: path}
	ctx := context.Background()
	if err := retry(ctx, func() error { return s.migrate(ctx) }); err != nil {
		db.Close()
		return nil, fmt.Errorf("database %s: %w", path, err)
	}
	return s, nil
}

// sqlitePath resolves dsn to the SQLite file it names and checks that the
// path can hold a database. With create, the default location's directory
// is made; a read-only open creates nothing.
func sqlitePath(dsn string, create bool) (string, error) {
	path := strings.TrimPrefix(dsn, "sqlite:")
	if path == "" {
		p, err := DefaultPath()
		if err != nil {
			return "", err
		}
		if !create {
			// A missing default directory only means nothing was stored
			// yet; OpenReadOnly says so when it finds no file.
			return p, nil
		}
		// The default location is ours to create; an explicit path's
		// directory is the user's, and a typo there should not be papered
		// over by creating it.
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return "", fmt.Errorf("cannot create the data directory: %w (use --db PATH)", err)
		}
		return p, nil
	}
	if st, err := os.Stat(filepath.Dir(path)); err != nil || !st.IsDir() {
		return "", fmt.Errorf("%w: database %s: directory %s does not exist", ErrBadPath, path, filepath.Dir(path))
	}
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return "", fmt.Errorf("%w: database %s is a directory, not a file", ErrBadPath, path)
	}
	return path, nil
}

// Close closes the database.
func (s *Store) Close() error { return s.db.Close() }

// q adapts a query written with ? placeholders to the backend.
func (s *Store) q(query string) string { return s.d.rebind(query) }
