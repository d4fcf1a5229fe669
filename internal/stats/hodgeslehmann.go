package stats

import (
	"math"
	"slices"
)

// HLResult is a Hodges–Lehmann estimate of the shift from a to b.
type HLResult struct {
	Shift  float64 // median of all bⱼ − aᵢ
	Lo, Hi float64 // confidence interval; ±Inf when the samples are too small
	HasCI  bool
	// Confidence is the interval's actual coverage (≥ the requested level;
	// U is discrete).
	Confidence float64
}

// HodgesLehmann estimates how far b is shifted from a (positive: b is
// larger) as the median of the pairwise differences, with the
// distribution-free confidence interval at conf that inverts the
// Mann–Whitney test. lo/hi are −Inf/+Inf when the samples are too small for
// that confidence.
func HodgesLehmann(a, b []float64, conf float64) (shift, lo, hi float64) {
	r := HodgesLehmannTest(a, b, conf)
	return r.Shift, r.Lo, r.Hi
}

// HodgesLehmannTest is HodgesLehmann with the interval's coverage.
func HodgesLehmannTest(a, b []float64, conf float64) HLResult {
	a, b = finite(a), finite(b)
	n1, n2 := len(a), len(b)
	if n1 == 0 || n2 == 0 {
		return HLResult{Shift: math.NaN(), Lo: math.NaN(), Hi: math.NaN()}
	}
	d := make([]float64, 0, n1*n2)
	for _, y := range b {
		for _, x := range a {
			d = append(d, y-x)
		}
	}
	slices.Sort(d)
	res := HLResult{Shift: medianSorted(d), Lo: math.Inf(-1), Hi: math.Inf(1)}
	k, cover := hlOrder(n1, n2, conf)
	if k >= 1 && conf > 0 && conf < 1 {
		res.Lo, res.Hi, res.HasCI = d[k-1], d[len(d)-k], true
	}
	res.Confidence = cover
	return res
}

// hlOrder returns the 1-based order k such that [D(k), D(M+1−k)] covers the
// shift with probability cover ≥ conf: k−1 is the largest u with
// P(U ≤ u) ≤ (1−conf)/2. k = 0 means no such interval exists.
func hlOrder(n1, n2 int, conf float64) (k int, cover float64) {
	tail := (1 - conf) / 2
	if n1 <= MWExactLimit && n2 <= MWExactLimit {
		d := noTiesUDist(n1, n2)
		u2 := d.quantile2(tail)
		if u2 < 0 {
			return 0, 1
		}
		u2 -= u2 % 2 // no ties: U is integral
		return u2/2 + 1, 1 - 2*d.cdf2(u2)
	}
	m := float64(n1) * float64(n2)
	sigma := math.Sqrt(m * float64(n1+n2+1) / 12)
	z := NormalQuantile(1 - tail)
	u := math.Floor(m/2 - 0.5 - z*sigma)
	if u < 0 {
		return 0, 1
	}
	return int(u) + 1, 1 - 2*NormalCDF((u+0.5-m/2)/sigma)
}

// NormalCDF is the standard normal distribution function Φ(z).
func NormalCDF(z float64) float64 { return 0.5 * math.Erfc(-z/math.Sqrt2) }

// NormalQuantile is Φ⁻¹(p).
func NormalQuantile(p float64) float64 { return math.Sqrt2 * math.Erfinv(2*p-1) }
