package bisect

import (
	"context"
	"fmt"
	"os"

	"github.com/perflab/perflab/internal/compare"
	"github.com/perflab/perflab/internal/run"
	"github.com/perflab/perflab/internal/snapshot"
	"github.com/perflab/perflab/internal/stats"
)

// Good is the good host as --good names it: its snapshot and, when it came
// from stored runs or an export, those runs (for the good host's value of
// the metric).
type Good struct {
	Snapshot *snapshot.Snapshot
	Runs     []*run.Run
}

// ResolveGood reads --good: a snapshot file, a run export, or a label or
// run id from the store (through compare.Sources).
func ResolveGood(ctx context.Context, arg string, src *compare.Sources) (*Good, error) {
	if fi, err := os.Stat(arg); err == nil && !fi.IsDir() {
		if s, err := snapshot.ReadFile(arg); err == nil {
			return &Good{Snapshot: s}, nil
		}
	}
	side, err := src.Side(ctx, arg)
	if err != nil {
		return nil, err
	}
	for _, r := range side.Runs {
		if s := side.Snapshots[r.SnapshotID]; s != nil {
			return &Good{Snapshot: s, Runs: side.Runs}, nil
		}
	}
	return nil, fmt.Errorf("%s: its runs carry no host snapshot to take the good settings from", arg)
}

// Value is the good host's median of probe's metric over its runs (the
// median of the runs' medians), 0 when it has none.
func (g *Good) Value(probe, metric string) float64 {
	var meds []float64
	for _, r := range g.Runs {
		if r.Probe != probe {
			continue
		}
		if v := r.Values(metric); len(v) > 0 {
			meds = append(meds, stats.Median(v))
		}
	}
	if len(meds) == 0 {
		return 0
	}
	return stats.Median(meds)
}
