package store

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/perflab/perflab/internal/run"
)

// host_medians (schema 6) holds, per host and per key a fleet report
// groups a run's metric by (probe, metric, params, unit, better), the
// medians of that host's usable runs: exactly the values of its
// run_metrics rows, as 8-byte big-endian IEEE 754 doubles concatenated
// (PostgreSQL's float8send), in no particular order. A report of all runs
// reads one row per host and metric instead of one per run and metric
// (docs/fleet-scale.md, "Medians per host (schema 6)"). Every writer of
// run_metrics maintains it in the same transaction: SaveRun, Import and
// Push's row path (saveRunTx), Push's COPY path (pushRunsSQL), CopyRuns,
// Delete, and the migration that adds it.

// HostMedians is one row of host_medians: a host's runs' medians of one
// metric.
type HostMedians struct {
	Host, Probe, Metric, Params, Unit string
	Better                            run.Better
	Medians                           []float64
}

// hostMedianCols are host_medians' columns, the key first.
var hostMedianCols = []string{"host", "probe", "metric", "params", "unit", "better", "medians"}

// hmKey is host_medians' primary key.
type hmKey struct{ host, probe, metric, params, unit, better string }

func (k hmKey) less(o hmKey) bool {
	a := [...]string{k.host, k.probe, k.metric, k.params, k.unit, k.better}
	b := [...]string{o.host, o.probe, o.metric, o.params, o.unit, o.better}
	for i := range a {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return false
}

func keyOf(m MetricRow) hmKey {
	return hmKey{m.Host, m.Probe, m.Metric, m.Params, m.Unit, string(m.Better)}
}

// encodeMedians appends vs as host_medians stores them.
func encodeMedians(dst []byte, vs ...float64) []byte {
	for _, v := range vs {
		dst = binary.BigEndian.AppendUint64(dst, math.Float64bits(v))
	}
	return dst
}

// decodeMedians appends the values of a host_medians.medians to dst.
func decodeMedians(dst []float64, b []byte) ([]float64, error) {
	if len(b)%8 != 0 {
		return dst, fmt.Errorf("host_medians.medians: %d bytes, not a multiple of 8", len(b))
	}
	for i := 0; i < len(b); i += 8 {
		dst = append(dst, math.Float64frombits(binary.BigEndian.Uint64(b[i:])))
	}
	return dst, nil
}

// groupMedians groups rows by host_medians' key, keys in bytewise order
// (the order every writer locks rows in, so that writers wait for each
// other instead of deadlocking).
func groupMedians(rows []MetricRow) ([]hmKey, map[hmKey][]byte) {
	by := map[hmKey][]byte{}
	var keys []hmKey
	for _, m := range rows {
		k := keyOf(m)
		if _, ok := by[k]; !ok {
			keys = append(keys, k)
		}
		by[k] = encodeMedians(by[k], m.Median)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].less(keys[j]) })
	return keys, by
}

// writesHostMedians is false only in tests that make a store of an older
// schema (SchemaVersion lowered) to migrate.
func writesHostMedians() bool { return SchemaVersion >= 6 }

// hmBatch is how many keys one upsert writes (7 parameters each; far under
// PostgreSQL's 65,535).
const hmBatch = 1000

// appendHostMedians adds rows' medians to their hosts' lists in tx: an
// upsert that appends to the stored list, which on PostgreSQL locks the
// row and appends to its newest committed version, so concurrent writers
// of one host lose nothing.
func (s *Store) appendHostMedians(ctx context.Context, tx execer, rows []MetricRow) error {
	if len(rows) == 0 || !writesHostMedians() {
		return nil
	}
	keys, by := groupMedians(rows)
	concat := `host_medians.medians || excluded.medians`
	if _, ok := s.d.(pgDialect); !ok {
		concat = `CAST(` + concat + ` AS BLOB)` // SQLite's || makes text of blobs
	}
	ph := "(" + strings.TrimSuffix(strings.Repeat("?, ", len(hostMedianCols)), ", ") + ")"
	for start := 0; start < len(keys); start += hmBatch {
		part := keys[start:min(start+hmBatch, len(keys))]
		q := `INSERT INTO host_medians (` + strings.Join(hostMedianCols, ", ") + `) VALUES ` +
			strings.TrimSuffix(strings.Repeat(ph+", ", len(part)), ", ") +
			` ON CONFLICT (host, probe, metric, params, unit, better) DO UPDATE SET medians = ` + concat
		args := make([]any, 0, len(hostMedianCols)*len(part))
		for _, k := range part {
			args = append(args, k.host, k.probe, k.metric, k.params, k.unit, k.better, by[k])
		}
		if _, err := tx.ExecContext(ctx, s.q(q), args...); err != nil {
			return fmt.Errorf("saving the hosts' medians: %w", err)
		}
	}
	return nil
}

// removeHostMedians takes one occurrence of each of run id's medians out of
// its host's lists, before its run_metrics rows are deleted (inside tx).
// The rows are locked first (FOR UPDATE on PostgreSQL; SQLite has one
// writer), so an append committed meanwhile is kept.
func (s *Store) removeHostMedians(ctx context.Context, tx *sql.Tx, id string) error {
	if !writesHostMedians() {
		return nil
	}
	rows, err := tx.QueryContext(ctx, s.q(`SELECT host, probe, metric, params, unit, better, median FROM run_metrics WHERE run_id = ?`), id)
	if err != nil {
		return err
	}
	ms, err := scanMedianRows(rows)
	if err != nil {
		return err
	}
	keys, by := groupMedians(ms)
	lock := ""
	if _, ok := s.d.(pgDialect); ok {
		lock = " FOR UPDATE"
	}
	const where = ` WHERE host = ? AND probe = ? AND metric = ? AND params = ? AND unit = ? AND better = ?`
	for _, k := range keys {
		args := []any{k.host, k.probe, k.metric, k.params, k.unit, k.better}
		var stored []byte
		err := tx.QueryRowContext(ctx, s.q(`SELECT medians FROM host_medians`+where+lock), args...).Scan(&stored)
		if errors.Is(err, sql.ErrNoRows) {
			continue
		}
		if err != nil {
			return err
		}
		left := withoutMedians(stored, by[k])
		if len(left) == 0 {
			_, err = tx.ExecContext(ctx, s.q(`DELETE FROM host_medians`+where), args...)
		} else {
			_, err = tx.ExecContext(ctx, s.q(`UPDATE host_medians SET medians = ?`+where), append([]any{left}, args...)...)
		}
		if err != nil {
			return fmt.Errorf("updating the hosts' medians: %w", err)
		}
	}
	return nil
}

// withoutMedians is stored without one occurrence of each 8-byte value in
// gone (a value not there is skipped).
func withoutMedians(stored, gone []byte) []byte {
	out := append([]byte(nil), stored...)
	for i := 0; i+8 <= len(gone); i += 8 {
		v := gone[i : i+8]
		for j := 0; j+8 <= len(out); j += 8 {
			if bytes.Equal(out[j:j+8], v) {
				out = append(out[:j], out[j+8:]...)
				break
			}
		}
	}
	return out
}

// backfillHostMedians fills host_medians from run_metrics inside the
// migration's transaction: on PostgreSQL one INSERT … SELECT … GROUP BY
// (float8send is the same 8 bytes encodeMedians writes), on SQLite (one
// host's store) through Go.
func backfillHostMedians(ctx context.Context, s *Store, tx *sql.Tx) error {
	if _, ok := s.d.(pgDialect); ok {
		_, err := tx.ExecContext(ctx, `INSERT INTO host_medians (`+strings.Join(hostMedianCols, ", ")+`)
			SELECT host, probe, metric, params, unit, better, string_agg(float8send(median), ''::bytea)
			FROM run_metrics GROUP BY host, probe, metric, params, unit, better`)
		return err
	}
	rows, err := tx.QueryContext(ctx, `SELECT host, probe, metric, params, unit, better, median FROM run_metrics`)
	if err != nil {
		return err
	}
	ms, err := scanMedianRows(rows)
	if err != nil {
		return err
	}
	return s.appendHostMedians(ctx, tx, ms)
}

// HasHostMedians reports whether the view's store keeps host_medians
// (schema 6 or later; a store opened read-only may be older).
func (v *FleetView) HasHostMedians(ctx context.Context) (bool, error) {
	ver, err := v.s.version(ctx, v.tx)
	return ver >= 6, err
}

// FleetHostMedians calls fn with every row of host_medians, in no
// particular order: every usable run's median of every metric, grouped by
// host and metric. fn must not keep h.Medians past its return.
func (v *FleetView) FleetHostMedians(ctx context.Context, fn func(h *HostMedians) error) error {
	q := `SELECT ` + strings.Join(hostMedianCols, ", ") + ` FROM host_medians`
	if v.conn != nil {
		return v.pgHostMedians(ctx, q, fn)
	}
	rows, err := v.tx.QueryContext(ctx, q)
	if err != nil {
		return err
	}
	defer rows.Close()
	var h HostMedians
	var better string
	var raw []byte
	for rows.Next() {
		if err := rows.Scan(&h.Host, &h.Probe, &h.Metric, &h.Params, &h.Unit, &better, &raw); err != nil {
			return err
		}
		h.Better = run.Better(better)
		if h.Medians, err = decodeMedians(h.Medians[:0], raw); err != nil {
			return err
		}
		if err := fn(&h); err != nil {
			return err
		}
	}
	return rows.Err()
}

// scanMedianRows reads rows of (host, probe, metric, params, unit, better,
// median) from run_metrics, and closes them.
func scanMedianRows(rows *sql.Rows) ([]MetricRow, error) {
	defer rows.Close()
	var ms []MetricRow
	for rows.Next() {
		var m MetricRow
		var better string
		if err := rows.Scan(&m.Host, &m.Probe, &m.Metric, &m.Params, &m.Unit, &better, &m.Median); err != nil {
			return nil, err
		}
		m.Better = run.Better(better)
		ms = append(ms, m)
	}
	return ms, rows.Err()
}
