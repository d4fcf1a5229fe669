package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"github.com/perflab/perflab/internal/run"
	"github.com/perflab/perflab/internal/stats"
)

// MetricRow is one usable run's median of one metric: the unit a fleet
// report aggregates (the run is the unit, docs/fleet.md). A run is usable
// when it completed and did not fail or get interrupted; a metric without
// samples or with a non-finite median has no row.
type MetricRow struct {
	RunID, Metric, Host, Probe, Params, Label string
	Started                                   int64 // unix nanoseconds
	Unit                                      string
	Better                                    run.Better
	Median                                    float64
}

// MetricRows are r's rows of run_metrics, in the run's metric order.
func MetricRows(r *run.Run) []MetricRow {
	if !r.Complete || r.Stop == run.StopFailed || r.Stop == run.StopInterrupted {
		return nil
	}
	byMetric := map[string][]float64{}
	for _, x := range r.Samples {
		byMetric[x.Metric] = append(byMetric[x.Metric], x.Value)
	}
	params := r.ParamKey()
	var out []MetricRow
	seen := map[string]bool{}
	for _, m := range r.Metrics {
		vs := byMetric[m.Name]
		if len(vs) == 0 || seen[m.Name] {
			continue
		}
		seen[m.Name] = true
		med := stats.Median(vs)
		if math.IsNaN(med) || math.IsInf(med, 0) {
			continue
		}
		out = append(out, MetricRow{RunID: r.ID, Metric: m.Name, Host: r.Host, Probe: r.Probe, Params: params,
			Label: r.Label, Started: r.Started.UnixNano(), Unit: m.Unit, Better: m.Better, Median: med})
	}
	return out
}

// metricCols are run_metrics' columns in MetricRow's order.
var metricCols = []string{"run_id", "metric", "host", "probe", "params", "label", "started", "unit", "better", "median"}

func (m MetricRow) values() []any {
	return []any{m.RunID, m.Metric, m.Host, m.Probe, m.Params, m.Label, m.Started, m.Unit, string(m.Better), m.Median}
}

// execer is a database or a transaction.
type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// insertMetricRows writes rows in batches of sampleBatch.
func (s *Store) insertMetricRows(ctx context.Context, tx execer, rows []MetricRow) error {
	for start := 0; start < len(rows); start += sampleBatch {
		batch := rows[start:min(start+sampleBatch, len(rows))]
		ph := "(" + strings.TrimSuffix(strings.Repeat("?, ", len(metricCols)), ", ") + ")"
		q := `INSERT INTO run_metrics (` + strings.Join(metricCols, ", ") + `) VALUES ` +
			strings.TrimSuffix(strings.Repeat(ph+", ", len(batch)), ", ")
		args := make([]any, 0, len(metricCols)*len(batch))
		for _, m := range batch {
			args = append(args, m.values()...)
		}
		if _, err := tx.ExecContext(ctx, s.q(q), args...); err != nil {
			return fmt.Errorf("saving run %s medians: %w", batch[0].RunID, err)
		}
	}
	return nil
}

// backfillRunMetrics fills run_metrics for the runs a store held before
// schema 4, inside the migration's transaction (SQLite has one
// connection, so everything is read through tx).
func backfillRunMetrics(ctx context.Context, s *Store, tx *sql.Tx) error {
	rows, err := tx.QueryContext(ctx, `SELECT id, doc FROM runs`)
	if err != nil {
		return err
	}
	docs := map[string]*run.Run{}
	for rows.Next() {
		var id, doc string
		if err := rows.Scan(&id, &doc); err != nil {
			rows.Close()
			return err
		}
		var r run.Run
		if json.Unmarshal([]byte(doc), &r) != nil {
			continue // a corrupt document is reported when the run is read
		}
		r.ID = id
		docs[id] = &r
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	if len(docs) == 0 {
		return nil
	}
	srows, err := tx.QueryContext(ctx, `SELECT run_id, metric, iteration, value FROM samples`)
	if err != nil {
		return err
	}
	for srows.Next() {
		var id string
		var x run.Sample
		if err := srows.Scan(&id, &x.Metric, &x.Iteration, &x.Value); err != nil {
			srows.Close()
			return err
		}
		if r := docs[id]; r != nil {
			r.Samples = append(r.Samples, x)
		}
	}
	srows.Close()
	if err := srows.Err(); err != nil {
		return err
	}
	for _, r := range docs {
		if err := s.insertMetricRows(ctx, tx, MetricRows(r)); err != nil {
			return err
		}
	}
	return nil
}
