package store

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/perflab/perflab/internal/run"
)

// PairRunsMost is how many probe×host pairs one PairRuns query reads: 64
// pairs of 31 runs are about 2,000 documents (4 MB of JSON at schema 8,
// 14 MB with the monitor series inline as before), a few
// samples queries of sampleIDs runs, and 128 parameters.
const PairRunsMost = 64

// PairRuns is, for each pair, what RunsBatch(Filter{Probe, Host, Limit:
// limit}) returns — the same runs, documents, samples and order (newest
// first, ties by id bytewise), without their monitor series (run_series,
// schema 8: the index's verdicts never read them, and they were 70% of a
// document's bytes) — read for many pairs at once: one query
// for the runs of every PairRunsMost pairs and one per sampleIDs runs for
// their samples, instead of two round trips per pair. The console's host
// index reads its pairs' runs this way (a verdict per pair). out[i] is
// pairs[i]'s runs; a pair without runs has none.
func (s *Store) PairRuns(ctx context.Context, pairs []ProbeHost, limit int) ([][]*run.Run, error) {
	out := make([][]*run.Run, len(pairs))
	for start := 0; start < len(pairs); start += PairRunsMost {
		part := pairs[start:min(start+PairRunsMost, len(pairs))]
		if err := s.pairRuns(ctx, part, max(limit, 1), out[start:start+len(part)]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// pairRuns fills out (aligned with pairs) with each pair's newest limit
// runs. The window numbers each pair's runs in RunsBatch's order over the
// (probe, host, started) index; only the ids of the kept rows are joined
// back for their documents, so a pair's older runs are never read whole.
func (s *Store) pairRuns(ctx context.Context, pairs []ProbeHost, limit int, out [][]*run.Run) error {
	slot := make(map[[2]string]int, len(pairs))
	var or []string
	var args []any
	for i, p := range pairs {
		k := [2]string{p.Probe, p.Host}
		if _, dup := slot[k]; dup {
			continue
		}
		slot[k] = i
		or = append(or, `(probe = ? AND host = ?)`)
		args = append(args, p.Probe, p.Host)
	}
	q := `SELECT r.id, r.probe, r.host, r.doc FROM runs r JOIN (
		SELECT id, row_number() OVER (PARTITION BY probe, host ORDER BY started DESC, ` + s.d.byteOrder("id") + `) AS rn
		FROM runs WHERE ` + strings.Join(or, " OR ") + `) k ON r.id = k.id
		WHERE k.rn <= ` + fmt.Sprint(limit) + ` ORDER BY ` + s.d.byteOrder("r.probe") + `, ` + s.d.byteOrder("r.host") + `, k.rn`
	rows, err := s.db.QueryContext(ctx, s.q(q), args...)
	if err != nil {
		return err
	}
	var ids []any
	idx := map[string]*run.Run{}
	var all []*run.Run
	for rows.Next() {
		var id, probe, host, doc string
		if err := rows.Scan(&id, &probe, &host, &doc); err != nil {
			rows.Close()
			return err
		}
		var r run.Run
		if err := json.Unmarshal([]byte(doc), &withoutSeries{Run: &r}); err != nil {
			rows.Close()
			return fmt.Errorf("run %s: stored document is corrupt: %w", id, err)
		}
		if r.Schema > run.Schema {
			rows.Close()
			return fmt.Errorf("run %s: %w: run schema %d", id, run.ErrNewerSchema, r.Schema)
		}
		i := slot[[2]string{probe, host}]
		out[i] = append(out[i], &r)
		idx[id] = &r
		ids = append(ids, id)
		all = append(all, &r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for start := 0; start < len(ids); start += sampleIDs {
		if err := s.attachSamples(ctx, ids[start:min(start+sampleIDs, len(ids))], idx); err != nil {
			return err
		}
	}
	for _, r := range all {
		sortSamples(r)
	}
	// A pair given twice gets the same runs twice.
	for i, p := range pairs {
		if j := slot[[2]string{p.Probe, p.Host}]; j != i {
			out[i] = out[j]
		}
	}
	return nil
}

// LabelHosts is HostsWithLabel's hosts as a list in byte order: the
// console's host index, also in byte order, merges it with its hosts
// instead of hashing every name of a label that spans the fleet (10,000
// hosts) into a map and looking each up again.
func (s *Store) LabelHosts(ctx context.Context, label string) ([]string, error) {
	kept, err := s.keepsHostLabels(ctx)
	if err != nil {
		return nil, err
	}
	q := `SELECT host FROM host_labels WHERE label = ? ORDER BY ` + s.d.byteOrder("host")
	if !kept {
		q = `SELECT host FROM (SELECT DISTINCT host FROM runs WHERE label = ?) d ORDER BY ` + s.d.byteOrder("host")
	}
	return s.strings(ctx, s.q(q), label)
}

// withoutSeries decodes a run document into Run but for its monitor
// series, which a store older than schema 8 (opened read-only) still keeps
// in it: skipped, not parsed.
type withoutSeries struct {
	*run.Run
	Monitor json.RawMessage `json:"monitor"`
}
