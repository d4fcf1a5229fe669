package stats

import "math"

// MedianSEFactor is √(π/2): for normal data the standard error of the
// median of k values is MedianSEFactor·σ/√k for large k. At small k it
// overstates it (k = 1: by 25%, k = 2: 25%, k = 3: 8%, k = 5: 5%; the
// exact values are σ, 0.707σ, 0.670σ, 0.536σ), which errs towards not
// calling a host an outlier.
const MedianSEFactor = 1.2533141373155003 // math.Sqrt(math.Pi / 2)

// MedianSE is the standard error of the median of k values with standard
// deviation sigma, MedianSEFactor·sigma/√k (NaN for k < 1).
func MedianSE(sigma float64, k int) float64 {
	if k < 1 {
		return math.NaN()
	}
	return MedianSEFactor * sigma / math.Sqrt(float64(k))
}

// ChiSquaredMedian is the median of the χ² distribution with df degrees
// of freedom: exact for df = 1 (Φ⁻¹(¾)² = 0.4549) and df = 2 (2·ln 2),
// Wilson–Hilferty's df·(1 − 2/(9·df))³ above (0.7% high at df = 3, 0.4%
// at 4, less beyond). NaN for df < 1.
func ChiSquaredMedian(df int) float64 {
	switch {
	case df < 1:
		return math.NaN()
	case df == 1:
		z := NormalQuantile(0.75)
		return z * z
	case df == 2:
		return 2 * math.Ln2
	}
	v := float64(df)
	c := 1 - 2/(9*v)
	return v * c * c * c
}

// SDMedianUnbiased scales the sample standard deviation s of k normal
// values so that its median is σ: s·√((k−1)/m) with m the median of
// χ²ₖ₋₁ (the sample SD of 2 values is below σ more than half of the
// time; this corrects that). NaN for k < 2.
func SDMedianUnbiased(s float64, k int) float64 {
	if k < 2 {
		return math.NaN()
	}
	return s * math.Sqrt(float64(k-1)/ChiSquaredMedian(k-1))
}
