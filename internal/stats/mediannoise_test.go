package stats

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestChiSquaredMedian(t *testing.T) {
	// Medians of χ² from tables (qchisq(0.5, df)).
	for df, want := range map[int]float64{1: 0.454936, 2: 1.386294, 3: 2.365974, 4: 3.356694, 10: 9.341818, 30: 29.33603} {
		if got := ChiSquaredMedian(df); math.Abs(got-want)/want > 0.008 {
			t.Errorf("ChiSquaredMedian(%d) = %.4f, want %.4f within 0.8%%", df, got, want)
		}
	}
	if math.Abs(MedianSEFactor-math.Sqrt(math.Pi/2)) > 1e-15 {
		t.Errorf("MedianSEFactor %v, want √(π/2) = %v", MedianSEFactor, math.Sqrt(math.Pi/2))
	}
	if !math.IsNaN(ChiSquaredMedian(0)) || !math.IsNaN(SDMedianUnbiased(1, 1)) || !math.IsNaN(MedianSE(1, 0)) {
		t.Error("undefined cases are not NaN")
	}
}

// The corrected SD of k normal values has median σ, and the median of k
// values scatters by about MedianSE(σ, k) (at most 26% above the exact
// value, never below it by more than the simulation's error).
func TestMedianNoiseBySimulation(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 25))
	const n = 20000
	for _, k := range []int{2, 3, 5, 10} {
		sds, meds := make([]float64, n), make([]float64, n)
		xs := make([]float64, k)
		for i := range n {
			for j := range xs {
				xs[j] = rng.NormFloat64()
			}
			m, v := Mean(xs), 0.0
			for _, x := range xs {
				v += (x - m) * (x - m)
			}
			sds[i] = SDMedianUnbiased(math.Sqrt(v/float64(k-1)), k)
			meds[i] = Median(xs)
		}
		slices.Sort(sds)
		if med := sds[n/2]; math.Abs(med-1) > 0.03 {
			t.Errorf("k=%d: median of the corrected SD %.3f, want 1 ± 0.03", k, med)
		}
		m, v := Mean(meds), 0.0
		for _, x := range meds {
			v += (x - m) * (x - m)
		}
		exact, se := math.Sqrt(v/(n-1)), MedianSE(1, k)
		if se < 0.97*exact || se > 1.26*exact {
			t.Errorf("k=%d: MedianSE %.3f, simulated %.3f", k, se, exact)
		}
	}
}
