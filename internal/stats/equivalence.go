package stats

import "math"

// Equivalent is the two-one-sided-tests (TOST) equivalence check at level
// alpha: it reports whether the shift from a to b is shown to lie within
// ±margin·|median(a)| (margin 0.02 = ±2%). TOST at α rejects both
// "shift ≤ −δ" and "shift ≥ +δ" exactly when the 1−2α Hodges–Lehmann
// interval lies strictly inside (−δ, +δ); lo and hi are that interval.
func Equivalent(a, b []float64, margin, alpha float64) (ok bool, lo, hi float64) {
	r := HodgesLehmannTest(a, b, 1-2*alpha)
	if !r.HasCI {
		return false, r.Lo, r.Hi
	}
	delta := margin * math.Abs(Median(a))
	return r.Lo > -delta && r.Hi < delta, r.Lo, r.Hi
}

// MinPValue is the smallest two-sided Mann–Whitney p-value that samples of
// sizes n1 and n2 can produce: 2/C(n1+n2, n1), when the samples do not
// overlap at all. If it exceeds α no difference can ever be significant.
func MinPValue(n1, n2 int) float64 {
	if n1 <= 0 || n2 <= 0 {
		return 1
	}
	return math.Min(1, 2*math.Exp(-lchoose(n1+n2, n1)))
}

// SamplesNeeded is the smallest n such that two samples of n each can reach
// p < alpha (4 at α = 0.05: 2/C(8,4) ≈ 0.029).
func SamplesNeeded(alpha float64) int {
	for n := 1; n < 1<<16; n++ {
		if MinPValue(n, n) < alpha {
			return n
		}
	}
	return math.MaxInt
}
