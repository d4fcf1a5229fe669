package stats

import "math"

// GeoMean returns exp(mean(ln x)) of xs, and false when xs is empty or holds
// a value ≤ 0 (or NaN), for which the geometric mean is undefined.
func GeoMean(xs []float64) (float64, bool) {
	if len(xs) == 0 {
		return math.NaN(), false
	}
	var s float64
	for _, x := range xs {
		if !(x > 0) || math.IsInf(x, 1) {
			return math.NaN(), false
		}
		s += math.Log(x)
	}
	return math.Exp(s / float64(len(xs))), true
}
