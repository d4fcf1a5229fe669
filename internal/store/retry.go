package store

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// SQLite's primary result codes for a lock held by another connection.
const (
	sqliteBusy   = 5
	sqliteLocked = 6
)

// Refusals a writer outlives by trying again: a PostgreSQL server at
// max_connections while a fleet pushes at once, the deadlocks and
// serialization failures of concurrent transactions inserting the same
// runs, and a SQLite file whose busy timeout ran out. A retried batch is
// idempotent (ON CONFLICT DO NOTHING).
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
	// SQLite: the busy timeout ran out while many local writers queued
	// for the one write lock.
	var coded interface{ Code() int }
	if errors.As(err, &coded) && (coded.Code()&0xff == sqliteBusy || coded.Code()&0xff == sqliteLocked) {
		return true
	}
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
