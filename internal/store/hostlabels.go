package store

import (
	"context"
	"database/sql"
	"fmt"
	"sort"
	"strings"
	"sync/atomic"

	"github.com/perflab/perflab/internal/run"
)

// host_labels (schema 7) holds, per host and label, how many of the host's
// runs carry the label: exactly `SELECT host, label, count(*) FROM runs
// GROUP BY host, label`. The console's label filter reads the hosts of a
// label from it (one index range of at most one row per host) instead of
// every run under the label (docs/fleet-scale.md, "Labels per host
// (schema 7)"). Every writer of runs maintains it in the run's own
// transaction, before host_medians (the lock order every writer keeps):
// SaveRun, Import and Push's row path (saveRunTx), Push's COPY path
// (pushRunsSQL), CopyRuns, Delete, and the migration that adds it.

// hlKey is host_labels' primary key.
type hlKey struct{ host, label string }

// groupLabels counts runs per (host, label), keys in bytewise order (the
// order every writer locks rows in).
func groupLabels(runs []*run.Run) ([]hlKey, map[hlKey]int64) {
	by := map[hlKey]int64{}
	var keys []hlKey
	for _, r := range runs {
		k := hlKey{r.Host, r.Label}
		if _, ok := by[k]; !ok {
			keys = append(keys, k)
		}
		by[k]++
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].host != keys[j].host {
			return keys[i].host < keys[j].host
		}
		return keys[i].label < keys[j].label
	})
	return keys, by
}

// writesHostLabels is false only in tests that make a store of an older
// schema (SchemaVersion lowered) to migrate.
func writesHostLabels() bool { return SchemaVersion >= 7 }

// addHostLabels counts runs (stored in tx by this writer) in their hosts'
// labels: an upsert adding to the stored count, which on PostgreSQL locks
// the row and adds to its newest committed version, so concurrent writers
// of one host lose nothing.
func (s *Store) addHostLabels(ctx context.Context, tx execer, runs []*run.Run) error {
	if len(runs) == 0 || !writesHostLabels() {
		return nil
	}
	keys, by := groupLabels(runs)
	for start := 0; start < len(keys); start += hmBatch {
		part := keys[start:min(start+hmBatch, len(keys))]
		q := `INSERT INTO host_labels (host, label, runs) VALUES ` +
			strings.TrimSuffix(strings.Repeat("(?, ?, ?), ", len(part)), ", ") +
			` ON CONFLICT (host, label) DO UPDATE SET runs = host_labels.runs + excluded.runs`
		args := make([]any, 0, 3*len(part))
		for _, k := range part {
			args = append(args, k.host, k.label, by[k])
		}
		if _, err := tx.ExecContext(ctx, s.q(q), args...); err != nil {
			return fmt.Errorf("saving the hosts' labels: %w", err)
		}
	}
	return nil
}

// removeHostLabel takes the run with id out of its host's label count
// inside tx, before the run is deleted; the row goes with its last run.
// The UPDATE locks the row, so an addition committed meanwhile is kept.
func (s *Store) removeHostLabel(ctx context.Context, tx *sql.Tx, id string) error {
	if !writesHostLabels() {
		return nil
	}
	var host, label string
	if err := tx.QueryRowContext(ctx, s.q(`SELECT host, label FROM runs WHERE id = ?`), id).Scan(&host, &label); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, s.q(`UPDATE host_labels SET runs = runs - 1 WHERE host = ? AND label = ?`), host, label); err != nil {
		return fmt.Errorf("updating the hosts' labels: %w", err)
	}
	if _, err := tx.ExecContext(ctx, s.q(`DELETE FROM host_labels WHERE host = ? AND label = ? AND runs <= 0`), host, label); err != nil {
		return fmt.Errorf("updating the hosts' labels: %w", err)
	}
	return nil
}

// backfillHostLabelsSQL fills host_labels from runs in the migration's
// transaction: one INSERT … SELECT … GROUP BY on either backend.
const backfillHostLabelsSQL = `INSERT INTO host_labels (host, label, runs)
	SELECT host, label, count(*) FROM runs GROUP BY host, label`

// HostLabel is one row of host_labels: how many of a host's runs carry a
// label.
type HostLabel struct {
	Host, Label string
	Runs        int64
}

// HostLabels lists host_labels ordered by host and label (bytewise), for
// tests and checks that hold it to the runs.
func (s *Store) HostLabels(ctx context.Context) ([]HostLabel, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT host, label, runs FROM host_labels ORDER BY `+s.d.byteOrder("host")+`, `+s.d.byteOrder("label"))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []HostLabel
	for rows.Next() {
		var h HostLabel
		if err := rows.Scan(&h.Host, &h.Label, &h.Runs); err != nil {
			return nil, err
		}
		out = append(out, h)
	}
	return out, rows.Err()
}

// keepsHostLabels reports whether the store has host_labels (schema 7 or
// later; a store opened read-only may be older). Once true it is not asked
// again: a schema never goes back.
func (s *Store) keepsHostLabels(ctx context.Context) (bool, error) {
	if s.hasHostLabels.Load() {
		return true, nil
	}
	v, err := s.quickVersion(ctx)
	if err != nil {
		return false, err
	}
	ok := v >= 7
	if ok {
		s.hasHostLabels.Store(true)
	}
	return ok, nil
}

// hostLabelsFlag is the Store's memo of keepsHostLabels.
type hostLabelsFlag = atomic.Bool

// LabelRuns counts the runs labelled label: from host_labels (schema 7: a
// row per host), or on an older store opened read-only from runs.
func (s *Store) LabelRuns(ctx context.Context, label string) (int, error) {
	kept, err := s.keepsHostLabels(ctx)
	if err != nil {
		return 0, err
	}
	q := `SELECT COALESCE(sum(runs), 0) FROM host_labels WHERE label = ?`
	if !kept {
		q = `SELECT count(*) FROM runs WHERE label = ?`
	}
	var n int64
	err = s.db.QueryRowContext(ctx, s.q(q), label).Scan(&n)
	return int(n), err
}
