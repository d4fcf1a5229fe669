package compare

import (
	"fmt"
	"math"

	"github.com/perflab/perflab/internal/run"
	"github.com/perflab/perflab/internal/stats"
)

// Host noise as evidence. Every run from 'perflab bench' carries a reading
// of the host-noise sentinel before and after it (run.Noise): the share of
// a spinning thread's time the hypervisor, interrupts or other tasks took
// in gaps over 200 µs. On hypervisors that report no steal this is the only
// record that the host, not the setting, differed between the sides.
//
// A side's figure is the mean lost_pct of all readings of its runs. The
// difference is a likely cause when all of these hold:
//
//   - the means differ by at least noiseMinDeltaPts percentage points: a
//     host taking 1% more of the CPU slows CPU-bound work by about 1%, the
//     default precision target of bench, and less could not move a metric
//     beyond what bench resolves;
//   - the noisier side is above noiseNoteLostPct, the threshold at which
//     bench notes a run as noisy: two quiet hosts explain nothing (after
//     the first rule this only excludes 0% against exactly 1%, but it
//     keeps the two commands agreeing on what "noisy" is);
//   - the readings differ by Mann–Whitney p < 0.05, as monitor series must.
//     One 0.1 s reading is a spot check: on the 2-vCPU guest of package
//     hostnoise, ten readings a moment apart on a quiet host (load 0.2)
//     were 0, 0, 0, 0.1, 0.4, 0.5, 0.7, 2.4, 2.6 and 4.3%, so the two
//     readings of one run per side differ by a point by chance alone. The
//     test needs readings enough to see a consistent difference: two runs
//     a side (four readings each), or one run against four, at the least.
const (
	noiseMinDeltaPts = 1.0
	noiseNoteLostPct = 1.0 // bench's warnNoiseLostPct
	noiseAlpha       = 0.05
)

// hostNoiseDiffs returns the host-noise difference between two sides as
// an explainable difference, or nothing when it is not notable or either
// side has no readings (runs made with --no-noise-check, or before perflab
// took them). A noisier host explains metrics that got worse.
func hostNoiseDiffs(base, other []*run.Run) []sourced {
	a, b := noiseReadings(base), noiseReadings(other)
	if len(a) == 0 || len(b) == 0 {
		return nil
	}
	ma, mb := stats.Mean(a), stats.Mean(b)
	if math.Abs(mb-ma) < noiseMinDeltaPts || math.Max(ma, mb) <= noiseNoteLostPct {
		return nil
	}
	if _, p := stats.MannWhitney(a, b); !(p < noiseAlpha) {
		return nil
	}
	v := Better
	if mb > ma {
		v = Worse
	}
	d := Diff{Path: "hostnoise.lost_pct", Before: noiseMeanText(ma, len(a)), After: noiseMeanText(mb, len(b))}
	return []sourced{{d, "hostnoise", v}}
}

// noiseReadings lists the lost_pct of every reading of the runs.
func noiseReadings(runs []*run.Run) []float64 {
	var out []float64
	for _, r := range runs {
		if r.Noise == nil {
			continue
		}
		for _, x := range []*run.NoiseReading{r.Noise.Before, r.Noise.After} {
			if x != nil && !math.IsNaN(x.LostPct) {
				out = append(out, x.LostPct)
			}
		}
	}
	return out
}

func noiseMeanText(pct float64, n int) string {
	unit := "readings"
	if n == 1 {
		unit = "reading"
	}
	return fmt.Sprintf("%.1f%% (%d %s)", pct, n, unit)
}
