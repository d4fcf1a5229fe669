package store

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"strconv"

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
		intern := func(b []byte) string {
			if s, ok := seen[string(b)]; ok {
				return s
			}
			s := string(b)
			seen[s] = s
			return s
		}
		var m MetricRow
		for rows.Next() {
			raw := rows.RawValues()
			if len(raw) != 7 {
				return fmt.Errorf("run_metrics: %d columns, want 7", len(raw))
			}
			m.Host, m.Probe, m.Metric, m.Params, m.Unit = intern(raw[0]), intern(raw[1]), intern(raw[2]), intern(raw[3]), intern(raw[4])
			m.Better = run.Better(intern(raw[5]))
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
