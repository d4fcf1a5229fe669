package store

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5/pgconn"
)

// quickVersion is version for the common case, a perflab store: one
// query on schema_version instead of listing the tables first, which on
// PostgreSQL is a catalog view that a new backend plans cold (~4 ms, the
// most expensive statement of a one-host 'runs history'). Anything else —
// no such table, no row, not a database — goes to version, which tells
// those cases apart. Not inside a transaction: a failed statement would
// abort it.
func (s *Store) quickVersion(ctx context.Context) (int, error) {
	var v int
	err := s.db.QueryRowContext(ctx, `SELECT version FROM schema_version`).Scan(&v)
	if err == nil {
		return v, nil
	}
	if _, pg := s.d.(pgDialect); pg {
		var pe *pgconn.PgError
		if !errors.As(err, &pe) {
			// No answer from the server (unreachable, refused): asking
			// again would only wait for the same connect timeout twice.
			return 0, s.openErr(err)
		}
	}
	return s.version(ctx, s.db)
}
