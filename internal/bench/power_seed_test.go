package bench

import (
	"maps"
	"runtime"
	"testing"
)

// The power curve is a seeded simulation: each cell draws from its own
// generator (seeded by the curve's seed and the cell), so the curve is the
// same whatever order its goroutines run and finish in, at GOMAXPROCS 1
// and 2. Another seed gives another curve, so the comparison is not of
// constants.
func TestPowerCurveSameSeedSameCurve(t *testing.T) {
	d := designFor(t, aaSession(t), VerdictSamples)
	ratios, minutes := []float64{1, 0.98, 0.95}, []float64{0.5, 1, 2}
	want := curve(d, ratios, minutes, 20, 7)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, procs := range []int{1, 2} {
		runtime.GOMAXPROCS(procs)
		if got := curve(d, ratios, minutes, 20, 7); !maps.Equal(got, want) {
			t.Fatalf("GOMAXPROCS %d: %v, first curve %v", procs, got, want)
		}
	}
	if maps.Equal(curve(d, ratios, minutes, 20, 8), want) {
		t.Errorf("seed 8 gave seed 7's curve %v", want)
	}
}
