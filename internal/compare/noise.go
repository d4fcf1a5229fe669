package compare

import (
	"math"
	"slices"

	"github.com/perflab/perflab/internal/run"
	"github.com/perflab/perflab/internal/stats"
)

// noiseFloor measures the A/A spread of one metric: among the side's runs
// and the history, take the runs of the same probe and parameters on the
// host of the side's first run, and report the range of their per-run
// medians relative to the median of those medians. It needs at least two
// runs; a single run says nothing about run-to-run variation. Runs in
// exclude (those of the other sides) never count.
func noiseFloor(k Key, side, history []*run.Run, exclude map[string]bool) *Noise {
	var ref *run.Run
	for _, r := range side {
		if r.Probe == k.Probe && (k.Params == "" || r.ParamKey() == k.Params) {
			ref = r
			break
		}
	}
	if ref == nil {
		return nil
	}
	seen := map[string]bool{}
	var medians []float64
	for _, r := range slices.Concat(side, history) {
		if seen[r.ID] || exclude[r.ID] || r.Probe != k.Probe || r.Host != ref.Host || suiteOf(r) != k.Suite || !sameParams(r, ref) {
			continue
		}
		seen[r.ID] = true
		if v := r.Values(k.Metric); len(v) > 0 {
			medians = append(medians, stats.Median(v))
		}
	}
	if len(medians) < 2 {
		return nil
	}
	mid := stats.Median(medians)
	if mid == 0 {
		return nil
	}
	lo, hi := slices.Min(medians), slices.Max(medians)
	return &Noise{Runs: len(medians), SpreadPct: 100 * (hi - lo) / math.Abs(mid)}
}

// sameParams: the same parameters and placement, as compare's rows key them.
func sameParams(a, b *run.Run) bool { return a.ParamKey() == b.ParamKey() }
