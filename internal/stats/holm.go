package stats

import (
	"math"
	"slices"
)

// Holm returns the Holm–Bonferroni adjusted p-values of ps, in the same
// order: reject hypothesis i at family-wise level α when Holm(ps)[i] < α.
// NaN p-values (untestable metrics) stay NaN and do not count towards m.
func Holm(ps []float64) []float64 {
	out := make([]float64, len(ps))
	idx := make([]int, 0, len(ps))
	for i, p := range ps {
		if math.IsNaN(p) {
			out[i] = math.NaN()
			continue
		}
		idx = append(idx, i)
	}
	slices.SortStableFunc(idx, func(x, y int) int {
		switch {
		case ps[x] < ps[y]:
			return -1
		case ps[x] > ps[y]:
			return 1
		}
		return 0
	})
	m := len(idx)
	running := 0.0
	for rank, i := range idx {
		adj := math.Min(1, float64(m-rank)*ps[i])
		running = math.Max(running, adj) // step-down: never below a smaller p's
		out[i] = running
	}
	return out
}
