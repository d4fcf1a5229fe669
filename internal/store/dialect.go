package store

import (
	"context"
	"database/sql"
	"net/url"
	"strconv"
	"strings"
)

// dialect is what differs between SQL backends. Queries are written once
// with ? placeholders in the subset SQLite and PostgreSQL share; a backend
// rewrites placeholders and names its driver and connection string.
type dialect interface {
	driver() string
	dsn(target string) string
	rebind(query string) string
	// tablesQuery lists the names of the user tables.
	tablesQuery() string
	// lockSchema serialises migrations between processes inside tx.
	lockSchema(ctx context.Context, tx *sql.Tx) error
	// byteOrder is an ORDER BY term that sorts text column col bytewise.
	byteOrder(col string) string
}

// sqliteDialect is modernc.org/sqlite.
type sqliteDialect struct{}

func (sqliteDialect) driver() string { return "sqlite" }

// dsn sets a busy timeout so concurrent perflab processes (a bench and a
// report) wait instead of failing, WAL so readers never block the writer,
// and IMMEDIATE transactions so a writer takes its lock up front rather than
// failing on upgrade half-way through saving a run.
func (sqliteDialect) dsn(path string) string {
	u := url.URL{Path: path}
	return "file:" + u.EscapedPath() + "?_busy_timeout=10000&_journal_mode=WAL&_txlock=immediate&_foreign_keys=1"
}

// readOnlyDSN opens path with mode=ro, so SQLite itself refuses to write,
// and without the WAL and transaction settings of dsn, which only a writer
// needs. immutable is for a file read without locks or -wal and -shm files;
// walWithoutLog says when that is needed and what it costs.
func (sqliteDialect) readOnlyDSN(path string, immutable bool) string {
	u := url.URL{Path: path}
	q := "?mode=ro&_busy_timeout=10000"
	if immutable {
		q += "&immutable=1"
	}
	return "file:" + u.EscapedPath() + q
}

func (sqliteDialect) rebind(q string) string { return q }

func (sqliteDialect) tablesQuery() string {
	return `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'`
}

// dollarRebind turns ? into $1, $2 … for PostgreSQL, whose drivers do not
// accept ?. No query in this package has a ? inside a string literal.
func dollarRebind(q string) string {
	var b strings.Builder
	n := 0
	for _, r := range q {
		if r == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// The dialect methods the migration and ordering code needs beyond the
// query text. SQLite serialises writers with its IMMEDIATE transactions and
// compares text bytewise; PostgreSQL needs a lock so that two processes
// opening a new database do not both create its tables, and a collation
// named so that ids sort as they do in SQLite whatever the database's
// locale.

func (sqliteDialect) lockSchema(context.Context, *sql.Tx) error { return nil }
func (sqliteDialect) byteOrder(col string) string               { return col }

// pgDialect is PostgreSQL through jackc/pgx's database/sql driver.
type pgDialect struct{}

func (pgDialect) driver() string           { return "pgx" }
func (pgDialect) dsn(target string) string { return target }
func (pgDialect) rebind(q string) string   { return dollarRebind(q) }

// tablesQuery lists the tables of the schema the connection writes into
// (search_path's first), so a perflab schema beside others in one database
// is its own store.
func (pgDialect) tablesQuery() string {
	return `SELECT tablename FROM pg_catalog.pg_tables WHERE schemaname = current_schema()`
}

// schemaLockKey is the advisory lock perflab processes take while they
// migrate a PostgreSQL store ("perflab" in ASCII).
const schemaLockKey = 0x706572666c6162

// lockSchema takes a transaction-scoped advisory lock: a second process
// migrating the same database waits until the first commits, then sees the
// new version and has nothing left to do.
func (pgDialect) lockSchema(ctx context.Context, tx *sql.Tx) error {
	_, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(schemaLockKey))
	return err
}

func (pgDialect) byteOrder(col string) string { return col + ` COLLATE "C"` }
