package fleet

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"

	"github.com/perflab/perflab/internal/audit"
	"github.com/perflab/perflab/internal/snapshot"
	"github.com/perflab/perflab/internal/store"
)

// FromStore makes the report of the runs in s matching f without holding
// them: hosts and their latest snapshots' ids come from one aggregate
// query, each snapshot is parsed and reduced to its Facts by a pool of
// workers and dropped, and the runs' medians are read from the store's
// per-host lists of them (host_medians) or, for a selection of runs, its
// per-run medians (run_metrics), rather than from their samples. On a store
// too old to have them (read-only, schema before 4) the runs are loaded
// as Build would. The report equals Build's over the same runs and
// snapshots (TestFromStoreEqualsBuild). Every read is of one consistent
// view of the store, so runs pushed while the report reads are either
// wholly in it or not at all. A selection without runs gives a report
// without hosts.
func FromStore(ctx context.Context, s *store.Store, f store.FleetFilter, w *audit.Workload) (*Report, error) {
	v, err := s.FleetView(ctx)
	if err != nil {
		return nil, err
	}
	defer v.Close()
	hosts, err := v.FleetHosts(ctx, f)
	if err != nil {
		return nil, err
	}
	b := NewBuilder(w)
	facts, err := hostFacts(ctx, v, b, hosts)
	if err != nil {
		return nil, err
	}
	for _, h := range hosts {
		b.AddHost(Host{Name: h.Name, Runs: h.Runs, Latest: h.Latest, SnapshotID: h.SnapshotID}, facts[h.SnapshotID])
	}
	err = addMedians(ctx, v, f, b)
	if errors.Is(err, store.ErrNoMedians) {
		v.Close() // SQLite has one connection, which the view holds
		err = addRuns(ctx, s, f, b)
	}
	if err != nil {
		return nil, err
	}
	return b.Report(), nil
}

// addMedians adds the runs' medians: for a report of all runs on a store
// that keeps them per host (schema 6), a row per host and metric
// (host_medians); for a selection of runs (--label, --since) or an older
// store opened read-only, a row per run and metric (run_metrics). Both
// hold the same values (TestFromStoreEqualsBuild, TestHostMediansMatchRunMetrics).
func addMedians(ctx context.Context, v *store.FleetView, f store.FleetFilter, b *Builder) error {
	if f.Label == "" && f.Since.IsZero() {
		ok, err := v.HasHostMedians(ctx)
		if err != nil {
			return err
		}
		if ok {
			return v.FleetHostMedians(ctx, func(h *store.HostMedians) error {
				b.AddMedians(h.Probe, h.Metric, h.Params, h.Unit, h.Better, h.Host, h.Medians)
				return nil
			})
		}
	}
	return v.FleetMedians(ctx, f, func(m store.MetricRow) error {
		b.AddMedian(m.Probe, m.Metric, m.Params, m.Unit, m.Better, m.Host, m.Median)
		return nil
	})
}

// addRuns is the medians of a store without run_metrics, from its runs.
func addRuns(ctx context.Context, s *store.Store, f store.FleetFilter, b *Builder) error {
	runs, err := s.Runs(ctx, store.Filter{Label: f.Label})
	if err != nil {
		return err
	}
	for _, r := range runs {
		if !r.Started.Before(f.Since) {
			b.AddRun(r)
		}
	}
	return nil
}

// hostFacts reduces the hosts' latest snapshots to their Facts: from the
// fact sets stored with them (schema 5), once per distinct set, and for a
// snapshot without one (stored before, by another version, or a report
// under a user profile's workload) from the snapshot itself, parsed on
// every CPU. The first host's snapshot is the reference.
func hostFacts(ctx context.Context, v *store.FleetView, b *Builder, hosts []store.FleetHost) (map[string]HostFacts, error) {
	var ids []string
	for _, h := range hosts {
		if h.SnapshotID != "" {
			ids = append(ids, h.SnapshotID)
		}
	}
	out := map[string]HostFacts{}
	if len(ids) == 0 {
		return out, nil
	}
	stored := b.StoredAudit()
	var ref *FactSet
	if stored {
		err := v.SnapshotFacts(ctx, ids[:1], func(doc []byte, _ []string) error {
			var err error
			ref, err = parseFactSet(doc)
			return err
		})
		if err != nil {
			return nil, err
		}
	}
	if ref == nil {
		err := v.SnapshotDocs(ctx, ids[:1], func(id string, data []byte) error {
			s, err := snapshot.Unmarshal(data)
			if err != nil {
				return fmt.Errorf("snapshot %s: %w", id, err)
			}
			ref = b.factSet(s)
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	if ref != nil {
		b.ReferenceSet(ref)
	}
	if stored {
		err := v.SnapshotFacts(ctx, ids, func(doc []byte, snaps []string) error {
			fs, err := parseFactSet(doc)
			if err != nil {
				return err
			}
			hf, ok := b.FactsOf(fs)
			if !ok {
				return nil
			}
			for _, id := range snaps {
				out[id] = hf
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	var rest []string
	for _, id := range ids {
		if _, ok := out[id]; !ok {
			rest = append(rest, id)
		}
	}
	return out, decodeFacts(ctx, v, b, rest, out)
}

// decodeFacts reads the snapshots in ids and reduces each to its Facts on
// every CPU, into out.
func decodeFacts(ctx context.Context, v *store.FleetView, b *Builder, ids []string, out map[string]HostFacts) error {
	if len(ids) == 0 {
		return nil
	}
	type doc struct {
		id   string
		data []byte
	}
	docs := make(chan doc, 64)
	var mu sync.Mutex
	var firstErr error
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for d := range docs {
				snap, err := snapshot.Unmarshal(d.data)
				var hf HostFacts
				if err == nil {
					hf = b.Facts(snap)
				}
				mu.Lock()
				if err != nil && firstErr == nil {
					firstErr = fmt.Errorf("snapshot %s: %w", d.id, err)
				}
				out[d.id] = hf
				mu.Unlock()
			}
		}()
	}
	err := v.SnapshotDocs(ctx, ids, func(id string, data []byte) error {
		select {
		case docs <- doc{id, data}:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	})
	close(docs)
	wg.Wait()
	if err != nil {
		return err
	}
	return firstErr
}
