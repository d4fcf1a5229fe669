package store

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
)

// ErrUnreachable is returned by Open and OpenReadOnly when the PostgreSQL
// server cannot be reached.
var ErrUnreachable = errors.New("cannot connect to PostgreSQL")

// IsPostgres reports whether dsn names a PostgreSQL store (a postgres:// or
// postgresql:// URL) rather than a SQLite file.
func IsPostgres(dsn string) bool {
	return strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://")
}

// pgMaxConns bounds one perflab process's connections to a shared server:
// a fleet of processes writing at once must not exhaust max_connections
// (100 by default). Runs are saved one transaction at a time anyway.
const pgMaxConns = 4

// openPostgres opens a PostgreSQL store through pgx. The URL is libpq's
// (postgres://user:password@host:port/dbname?sslmode=…, or host=/run/dir
// for a unix socket); PGPASSWORD, PGSSLMODE and ~/.pgpass apply as with
// psql. The tables live in the connection's current schema (search_path),
// so one database can hold several stores in different schemas.
//
// Read-only, the session sets default_transaction_read_only, so the server
// itself refuses any write, and nothing is created or migrated: an empty
// database is ErrNoDatabase, as for SQLite.
func openPostgres(dsn string, readOnly bool) (*Store, error) {
	shown := redactDSN(dsn)
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrBadPath, shown, errors.Unwrap(err))
	}
	if cfg.ConnectTimeout == 0 {
		// A dead server fails the command in seconds rather than after
		// the TCP retries.
		cfg.ConnectTimeout = 10 * time.Second
	}
	if readOnly {
		cfg.RuntimeParams["default_transaction_read_only"] = "on"
	}
	db := stdlib.OpenDB(*cfg)
	db.SetMaxOpenConns(pgMaxConns)
	db.SetConnMaxIdleTime(time.Minute)
	db.SetMaxIdleConns(3) // a console comparison reads on three at once (serve's warmConns)
	s := &Store{db: db, d: pgDialect{}, readOnly: readOnly, Path: shown}
	ctx := context.Background()
	err = retry(ctx, func() error {
		if readOnly {
			return s.checkReadable(ctx)
		}
		return s.migrate(ctx)
	})
	if err != nil {
		db.Close()
		if errors.Is(err, ErrNoDatabase) {
			return nil, err
		}
		return nil, fmt.Errorf("database %s: %w", shown, err)
	}
	return s, nil
}

// redactDSN is the URL with any password replaced, fit for messages and
// Store.Path.
func redactDSN(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		return "(unparsable PostgreSQL URL)"
	}
	q := u.Query()
	if q.Has("password") {
		q.Set("password", "xxxxx")
		u.RawQuery = q.Encode()
	}
	return u.Redacted()
}

// PostgreSQL error codes (SQLSTATE) that say why a store cannot be used.
const (
	pgReadOnlyTx       = "25006"
	pgInsufficientPriv = "42501"
	pgInvalidPassword  = "28P01"
	pgInvalidAuth      = "28000"
	pgNoDatabase       = "3D000"
)

// pgErr names why the server could not be read: the connection, the
// credentials, or a database that does not exist.
func pgErr(err error) error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch pe.Code {
		case pgInvalidPassword, pgInvalidAuth:
			return fmt.Errorf("PostgreSQL refused the login (user and password in the URL, PGPASSWORD or ~/.pgpass?): %s", pe.Message)
		case pgNoDatabase:
			return fmt.Errorf("%w: %s (create it with createdb, or name another in the URL)", ErrBadPath, pe.Message)
		}
		return &pgWrapped{msg: fmt.Sprintf("PostgreSQL: %s (SQLSTATE %s)", pe.Message, pe.Code), err: err}
	}
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) {
		// pgx tries every address (and TLS, then plain) and lists each
		// failure; the first network error says it once.
		var ne *net.OpError
		if errors.As(err, &ne) {
			return fmt.Errorf("%w: %v", ErrUnreachable, ne)
		}
		var de *net.DNSError
		if errors.As(err, &de) {
			return fmt.Errorf("%w: %v", ErrUnreachable, de)
		}
		return fmt.Errorf("%w: %v", ErrUnreachable, errors.Unwrap(ce))
	}
	return fmt.Errorf("cannot read the PostgreSQL database: %w", err)
}

// pgWriteErr turns the server's refusal to write into ErrReadOnly.
func pgWriteErr(path string, err error) error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) && (pe.Code == pgReadOnlyTx || pe.Code == pgInsufficientPriv) {
		return fmt.Errorf("%w: %s cannot be written: %s", ErrReadOnly, path, pe.Message)
	}
	return err
}

// pgWrapped is the server's error in perflab's words, still unwrapping to
// it so that retry can tell a transient refusal.
type pgWrapped struct {
	msg string
	err error
}

func (e *pgWrapped) Error() string { return e.msg }
func (e *pgWrapped) Unwrap() error { return e.err }
