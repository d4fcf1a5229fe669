package store

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// PostgreSQL refusals a writer outlives by trying again: a server at
// max_connections while a fleet pushes at once, and the deadlocks and
// serialization failures of concurrent transactions inserting the same
// runs. A retried batch is idempotent (ON CONFLICT DO NOTHING).
const (
	pgTooManyConns   = "53300"
	pgCannotConnect  = "57P03" // the server is starting up
	pgSerialization  = "40001"
	pgDeadlock       = "40P01"
	retryFor         = 2 * time.Minute
	retryFirstPause  = 20 * time.Millisecond
	retryLongestWait = 2 * time.Second
)

func transient(err error) bool {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch pe.Code {
		case pgTooManyConns, pgCannotConnect, pgSerialization, pgDeadlock:
			return true
		}
	}
	return false
}

// retry runs fn until it succeeds, fails for good, or has been refused
// transiently for retryFor, backing off exponentially with jitter from the
// clock (writers that collided must not retry in step).
func retry(ctx context.Context, fn func() error) error {
	deadline := time.Now().Add(retryFor)
	pause := retryFirstPause
	for {
		err := fn()
		if err == nil || !transient(err) || time.Now().After(deadline) {
			return err
		}
		jitter := time.Duration(time.Now().UnixNano() % int64(pause))
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(pause/2 + jitter):
		}
		pause = min(2*pause, retryLongestWait)
	}
}
