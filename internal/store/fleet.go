package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/perflab/perflab/internal/run"
)

// ErrNoMedians is returned by FleetMedians for a store opened read-only
// whose schema predates run_metrics (schema 4): the caller reads the runs
// themselves instead.
var ErrNoMedians = fmt.Errorf("the store has no per-run medians (schema older than 4)")

// FleetFilter selects the runs of a fleet report: a label ("" any) and
// runs started at or after Since (zero: all).
type FleetFilter struct {
	Label string
	Since time.Time
}

func (f FleetFilter) where(alias string) (string, []any) {
	w := ` WHERE ` + alias + `started >= ?`
	args := []any{f.Since.UnixNano()}
	if f.Since.IsZero() {
		args[0] = int64(-1 << 62)
	}
	if f.Label != "" {
		w += ` AND ` + alias + `label = ?`
		args = append(args, f.Label)
	}
	return w, args
}

// FleetView is a consistent view of a store for a fleet report: every
// read sees the store as it was when the view began, however many
// writers push meanwhile (PostgreSQL: a read-only REPEATABLE READ
// transaction; SQLite: one read transaction, which WAL isolates). Close
// it when done.
type FleetView struct {
	s    *Store
	tx   *sql.Tx
	conn *sql.Conn // PostgreSQL: the transaction's connection, for pgx's own reads
}

// FleetView begins a view.
func (s *Store) FleetView(ctx context.Context) (*FleetView, error) {
	if _, ok := s.d.(pgDialect); ok {
		conn, err := s.db.Conn(ctx)
		if err != nil {
			return nil, err
		}
		tx, err := conn.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true})
		if err != nil {
			conn.Close()
			return nil, err
		}
		return &FleetView{s: s, tx: tx, conn: conn}, nil
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	return &FleetView{s: s, tx: tx}, nil
}

// Close ends the view (again: nothing).
func (v *FleetView) Close() error {
	err := v.tx.Rollback()
	if v.conn != nil {
		v.conn.Close()
	}
	if errors.Is(err, sql.ErrTxDone) {
		return nil
	}
	return err
}

// FleetHost is one host's runs in a fleet report's selection.
type FleetHost struct {
	Name       string
	Runs       int
	Latest     time.Time // start of its latest run
	SnapshotID string    // of its latest run whose snapshot is stored ("" none)
}

// FleetHosts lists the hosts with runs matching f, by name (bytewise), with
// the snapshot of each one's latest run that has a stored snapshot (of runs
// started at the same instant, the one with the greatest id).
func (v *FleetView) FleetHosts(ctx context.Context, f FleetFilter) ([]FleetHost, error) {
	s := v.s
	w, args := f.where("")
	rows, err := v.tx.QueryContext(ctx, s.q(`SELECT host, count(*), max(started) FROM runs`+w+` GROUP BY host ORDER BY `+s.d.byteOrder("host")), args...)
	if err != nil {
		return nil, err
	}
	var out []FleetHost
	idx := map[string]int{}
	for rows.Next() {
		var h FleetHost
		var latest int64
		if err := rows.Scan(&h.Name, &h.Runs, &latest); err != nil {
			rows.Close()
			return nil, err
		}
		h.Latest = time.Unix(0, latest).UTC()
		idx[h.Name] = len(out)
		out = append(out, h)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if _, ok := s.d.(pgDialect); ok {
		return out, v.pgLatestSnapshots(ctx, f, out)
	}
	w2, args2 := f.where("r2.")
	w1, args1 := f.where("r.")
	q := `SELECT r.host, r.snapshot_id, r.id FROM runs r
		JOIN (SELECT r2.host AS h, max(r2.started) AS m FROM runs r2 JOIN snapshots s2 ON s2.id = r2.snapshot_id` + w2 + ` GROUP BY r2.host) x
		ON r.host = x.h AND r.started = x.m
		JOIN snapshots s ON s.id = r.snapshot_id` + w1
	rows, err = v.tx.QueryContext(ctx, s.q(q), append(args2, args1...)...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	best := map[string]string{} // host → run id chosen
	for rows.Next() {
		var host, snap, id string
		if err := rows.Scan(&host, &snap, &id); err != nil {
			return nil, err
		}
		i, ok := idx[host]
		if !ok || (best[host] != "" && best[host] > id) {
			continue
		}
		best[host] = id
		out[i].SnapshotID = snap
	}
	return out, rows.Err()
}

// FleetMedians calls fn with each usable run's median of each metric among
// the runs matching f, in no particular order, without loading the runs.
func (v *FleetView) FleetMedians(ctx context.Context, f FleetFilter, fn func(MetricRow) error) error {
	s := v.s
	if ver, err := s.version(ctx, v.tx); err != nil {
		return err
	} else if ver < 4 {
		return ErrNoMedians
	}
	w, args := f.where("")
	q := s.q(`SELECT host, probe, metric, params, unit, better, median FROM run_metrics` + w)
	if v.conn != nil {
		return v.pgMedians(ctx, q, args, fn)
	}
	rows, err := v.tx.QueryContext(ctx, q, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	var m MetricRow
	var better string
	for rows.Next() {
		if err := rows.Scan(&m.Host, &m.Probe, &m.Metric, &m.Params, &m.Unit, &better, &m.Median); err != nil {
			return err
		}
		m.Better = run.Better(better)
		if err := fn(m); err != nil {
			return err
		}
	}
	return rows.Err()
}

// SnapshotDocs calls fn with the stored document of each snapshot in ids
// that is stored, fetching them in batches, in no particular order. The
// caller parses them (snapshot.Unmarshal), possibly concurrently.
func (v *FleetView) SnapshotDocs(ctx context.Context, ids []string, fn func(id string, doc []byte) error) error {
	const batch = 200
	for start := 0; start < len(ids); start += batch {
		part := ids[start:min(start+batch, len(ids))]
		ph := make([]byte, 0, 3*len(part))
		args := make([]any, len(part))
		for i, id := range part {
			if i > 0 {
				ph = append(ph, ", "...)
			}
			ph = append(ph, '?')
			args[i] = id
		}
		if err := v.snapshotBatch(ctx, `SELECT id, doc FROM snapshots WHERE id IN (`+string(ph)+`)`, args, fn); err != nil {
			return err
		}
	}
	return nil
}

func (v *FleetView) snapshotBatch(ctx context.Context, q string, args []any, fn func(string, []byte) error) error {
	rows, err := v.tx.QueryContext(ctx, v.s.q(q), args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var doc sql.RawBytes
		if err := rows.Scan(&id, &doc); err != nil {
			return err
		}
		if err := fn(id, append([]byte(nil), doc...)); err != nil {
			return err
		}
	}
	return rows.Err()
}
