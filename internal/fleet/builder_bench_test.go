package fleet

import (
	"math/rand/v2"
	"strconv"
	"testing"
)

// BenchmarkMetric is one metric of a 10,000-host report with 10 runs per
// host (the full generated store's shape: 100 runs over 10 probes): each
// host's value, noise and standard error, the fleet's median, spread and
// run noise, and the outliers. A report of that store computes ~51 of
// them, on every CPU.
func BenchmarkMetric(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	a := &metricAcc{m: Metric{Probe: "p", Metric: "x", Unit: "1/s", Better: "higher"}, medians: map[string][]float64{}}
	for i := range 10000 {
		meds := make([]float64, 10)
		for j := range meds {
			meds[j] = 100 * (1 + 0.004*rng.NormFloat64())
		}
		a.medians["node"+strconv.Itoa(i)] = meds
	}
	b.ReportAllocs()
	for b.Loop() {
		a.metric(nil)
	}
}
