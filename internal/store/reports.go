package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Report is a stored result that is not a run: a bisection, say. Doc is
// its JSON document as the command wrote it.
type Report struct {
	ID      string
	Kind    string
	Created time.Time
	Host    string
	Doc     []byte
}

// SaveReport stores a report; an id already stored is an error.
func (s *Store) SaveReport(ctx context.Context, r Report) error {
	if err := s.refuseWrite("saving " + r.Kind + " " + r.ID); err != nil {
		return err
	}
	_, err := s.db.ExecContext(ctx, s.q(`INSERT INTO reports (id, kind, created, host, doc) VALUES (?, ?, ?, ?, ?)`),
		r.ID, r.Kind, r.Created.UnixNano(), r.Host, string(r.Doc))
	return s.writeErr(err)
}

// Report reads a report of kind by id or unique id prefix.
func (s *Store) Report(ctx context.Context, kind, id string) (*Report, error) {
	full, err := s.resolve(ctx, "reports", kind, id)
	if err != nil {
		return nil, err
	}
	var r Report
	var created int64
	var doc string
	err = s.db.QueryRowContext(ctx, s.q(`SELECT id, kind, created, host, doc FROM reports WHERE id = ? AND kind = ?`), full, kind).
		Scan(&r.ID, &r.Kind, &created, &r.Host, &doc)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("no %s %q: %w", kind, id, ErrNotFound)
	}
	if err != nil {
		return nil, err
	}
	r.Created, r.Doc = time.Unix(0, created).UTC(), []byte(doc)
	return &r, nil
}
