package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// OpenReadOnly opens the store named by dsn (as Open) for reading only. It
// never creates the file or anything beside it, never migrates and never
// writes: a missing or empty database is ErrNoDatabase, a newer schema
// ErrNewerSchema and a schema too old to read without migrating
// ErrOlderSchema. SaveRun and Delete on the store return ErrReadOnly.
func OpenReadOnly(dsn string) (*Store, error) {
	if IsPostgres(dsn) {
		return openPostgres(dsn, true)
	}
	path, err := sqlitePath(dsn, false)
	if err != nil {
		return nil, err
	}
	st, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("%w: there is no database at %s", ErrNoDatabase, path)
	case err != nil:
		return nil, readErr(path, err)
	case st.IsDir():
		return nil, fmt.Errorf("%w: database %s is a directory, not a file", ErrBadPath, path)
	}
	immutable, err := walWithoutLog(path)
	if err != nil {
		return nil, readErr(path, err)
	}
	d := sqliteDialect{}
	db, err := sql.Open(d.driver(), d.readOnlyDSN(path, immutable))
	if err != nil {
		return nil, fmt.Errorf("database %s: %w", path, err)
	}
	db.SetMaxOpenConns(1)
	s := &Store{db: db, d: d, readOnly: true, Path: path}
	if err := s.checkReadable(context.Background()); err != nil {
		db.Close()
		if errors.Is(err, ErrNoDatabase) {
			return nil, err // already names the file
		}
		return nil, fmt.Errorf("database %s: %w", path, err)
	}
	return s, nil
}

// walWithoutLog reports whether path is a WAL-mode database without a -wal
// file, which SQLite can read without creating files only as immutable.
//
// A read-only connection to a WAL database needs the -wal and -shm files.
// When they exist (a writer is connected, or one crashed) SQLite opens
// them and the reader takes part in WAL locking like any other, seeing
// every committed run. When they do not (the last writer closed cleanly
// and checkpointed everything into the database file), SQLite creates
// them if the directory is writable — and a read-only connection cannot
// delete them again, so every reader would leave files, owned by the
// reader, beside someone else's database — or fails to read at all if the
// directory is not writable. Reading such a database as immutable creates
// nothing and needs no locks, at a price: SQLite then assumes nobody
// changes the file while it is open. A writer that starts meanwhile writes
// to its own new -wal, which this reader neither sees nor minds, but the
// checkpoint it makes on closing rewrites database pages in place; a read
// that overlaps that checkpoint may fail as corrupt (or, in principle,
// see rows from both sides of it). Every read-only open is short — one
// command, or one exporter refresh, which opens the store anew — so the
// window is milliseconds, and a retry reads the new state.
//
// Bytes 18 and 19 of the SQLite header are the file format write and read
// versions: 2 means WAL, 1 the rollback journal, which a read-only
// connection reads with ordinary locks and no extra files.
func walWithoutLog(path string) (bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	var hdr [20]byte
	if _, err := io.ReadFull(f, hdr[:]); err != nil {
		return false, nil // too short for SQLite; SQLite says what it is
	}
	if hdr[18] != 2 || hdr[19] != 2 {
		return false, nil
	}
	_, err = os.Lstat(path + "-wal")
	return errors.Is(err, fs.ErrNotExist), nil
}

// readErr names a database file this process may not read.
func readErr(path string, err error) error {
	if errors.Is(err, fs.ErrPermission) {
		return fmt.Errorf("no permission to read the database %s", path)
	}
	return fmt.Errorf("cannot read the database %s: %w", path, err)
}
