package store

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/stdlib"
	"github.com/perflab/perflab/internal/run"
)

// pgMedians is FleetMedians on PostgreSQL through pgx itself, on the
// view's connection (so inside its transaction): a fleet of ten thousand
// hosts sends millions of these rows, and database/sql's per-row locking
// and a new string for each of six repeated columns were most of the
// report's CPU. Column values are interned: a fleet has few probes,
// metrics and units, and one host name per host.
func (v *FleetView) pgMedians(ctx context.Context, q string, args []any, fn func(MetricRow) error) error {
	return v.conn.Raw(func(dc any) error {
		c := dc.(*stdlib.Conn).Conn()
		rows, err := c.Query(ctx, q, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		binaryMedian := false
		if fd := rows.FieldDescriptions(); len(fd) == 7 {
			binaryMedian = fd[6].Format == 1
		}
		seen := map[string]string{}
		var last [6]string // the previous row's: a run's rows share most columns
		intern := func(i int, b []byte) string {
			if last[i] == string(b) {
				return last[i]
			}
			s, ok := seen[string(b)]
			if !ok {
				s = string(b)
				seen[s] = s
			}
			last[i] = s
			return s
		}
		var m MetricRow
		for rows.Next() {
			raw := rows.RawValues()
			if len(raw) != 7 {
				return fmt.Errorf("run_metrics: %d columns, want 7", len(raw))
			}
			m.Host, m.Probe, m.Metric, m.Params, m.Unit = intern(0, raw[0]), intern(1, raw[1]), intern(2, raw[2]), intern(3, raw[3]), intern(4, raw[4])
			m.Better = run.Better(intern(5, raw[5]))
			switch {
			case binaryMedian && len(raw[6]) == 8:
				m.Median = math.Float64frombits(binary.BigEndian.Uint64(raw[6]))
			case binaryMedian:
				return fmt.Errorf("run_metrics.median: %d bytes, want 8", len(raw[6]))
			default:
				if m.Median, err = strconv.ParseFloat(string(raw[6]), 64); err != nil {
					return fmt.Errorf("run_metrics.median: %w", err)
				}
			}
			if err := fn(m); err != nil {
				return err
			}
		}
		return rows.Err()
	})
}

// pgLatestSnapshots sets each host's SnapshotID on PostgreSQL: per host,
// the index on (host, started) read backwards to its newest selected run
// whose snapshot is stored (of runs started at the same instant, the
// greatest id), instead of aggregating every run twice (1.5 s of the
// server's time at 540,000 runs; docs/fleet-scale.md).
func (v *FleetView) pgLatestSnapshots(ctx context.Context, f FleetFilter, hosts []FleetHost) error {
	if len(hosts) == 0 {
		return nil
	}
	names := make([]string, len(hosts))
	for i, h := range hosts {
		names[i] = h.Name
	}
	w, args := f.where("r.")
	q := `SELECT h.host, x.snapshot_id FROM unnest($1::text[]) WITH ORDINALITY AS h(host, n)
		CROSS JOIN LATERAL (SELECT r.snapshot_id FROM runs r JOIN snapshots s ON s.id = r.snapshot_id` +
		w + ` AND r.host = h.host ORDER BY r.started DESC, r.id COLLATE "C" DESC LIMIT 1) x ORDER BY h.n`
	// The filter's placeholders follow the host list's.
	for i := range args {
		q = strings.Replace(q, "?", "$"+strconv.Itoa(i+2), 1)
	}
	rows, err := v.tx.QueryContext(ctx, q, append([]any{names}, args...)...)
	if err != nil {
		return err
	}
	defer rows.Close()
	idx := make(map[string]int, len(hosts))
	for i, h := range hosts {
		idx[h.Name] = i
	}
	for rows.Next() {
		var host, snap string
		if err := rows.Scan(&host, &snap); err != nil {
			return err
		}
		if i, ok := idx[host]; ok {
			hosts[i].SnapshotID = snap
		}
	}
	return rows.Err()
}

// pgHostMedians is FleetHostMedians on PostgreSQL through pgx on the
// view's connection, the text columns interned as pgMedians does.
func (v *FleetView) pgHostMedians(ctx context.Context, q string, fn func(*HostMedians) error) error {
	return v.conn.Raw(func(dc any) error {
		c := dc.(*stdlib.Conn).Conn()
		rows, err := c.Query(ctx, q)
		if err != nil {
			return err
		}
		defer rows.Close()
		fd := rows.FieldDescriptions()
		if len(fd) != 7 {
			return fmt.Errorf("host_medians: %d columns, want 7", len(fd))
		}
		binaryMedians := fd[6].Format == 1
		seen := map[string]string{}
		intern := func(b []byte) string {
			s, ok := seen[string(b)]
			if !ok {
				s = string(b)
				seen[s] = s
			}
			return s
		}
		var h HostMedians
		var buf []byte
		for rows.Next() {
			raw := rows.RawValues()
			if len(raw) != 7 {
				return fmt.Errorf("host_medians: %d columns, want 7", len(raw))
			}
			h.Host, h.Probe, h.Metric, h.Params, h.Unit = intern(raw[0]), intern(raw[1]), intern(raw[2]), intern(raw[3]), intern(raw[4])
			h.Better = run.Better(intern(raw[5]))
			b := raw[6]
			if !binaryMedians { // text format: \x and hex digits
				hx, ok := bytes.CutPrefix(b, []byte(`\x`))
				if !ok {
					return fmt.Errorf("host_medians.medians: not bytea text")
				}
				buf = buf[:0]
				if buf, err = hex.AppendDecode(buf, hx); err != nil {
					return fmt.Errorf("host_medians.medians: %w", err)
				}
				b = buf
			}
			if h.Medians, err = decodeMedians(h.Medians[:0], b); err != nil {
				return err
			}
			if err := fn(&h); err != nil {
				return err
			}
		}
		return rows.Err()
	})
}
