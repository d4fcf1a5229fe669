package stats

import (
	"math"
	"slices"
)

// DefaultConfidence is the confidence level of every interval perflab shows.
const DefaultConfidence = 0.95

// Summary describes one sample: its median with a 95% exact confidence
// interval, the range, and the mean and coefficient of variation.
type Summary struct {
	N      int
	Median float64
	// Lo and Hi bound the 95% confidence interval of the median. When the
	// sample is too small for an interval (HasCI false) at least one of
	// them is infinite.
	Lo, Hi float64
	// HasCI is false when n is too small for a 95% interval.
	HasCI bool
	// Confidence is the actual coverage of [Lo, Hi], ≥ 0.95 (order
	// statistics give only discrete levels).
	Confidence float64
	Min, Max   float64
	Mean       float64
	// CV is the standard deviation (n−1) over the mean; NaN for n < 2 or a
	// zero mean.
	CV float64
}

// Summarize computes the Summary of xs at DefaultConfidence. xs is not
// modified. An empty sample yields N = 0 and NaN everywhere.
func Summarize(xs []float64) Summary {
	return SummarizeConf(xs, DefaultConfidence)
}

// SummarizeConf is Summarize at another confidence level.
func SummarizeConf(xs []float64, conf float64) Summary {
	xs = finite(xs)
	n := len(xs)
	nan := math.NaN()
	if n == 0 {
		return Summary{Median: nan, Lo: nan, Hi: nan, Min: nan, Max: nan, Mean: nan, CV: nan}
	}
	s := sorted(xs)
	sum := Summary{N: n, Min: s[0], Max: s[n-1], Median: medianSorted(s)}
	sum.Lo, sum.Hi, sum.Confidence, sum.HasCI = medianCISorted(s, conf)
	sum.Mean, sum.CV = meanCV(s)
	return sum
}

// Median returns the sample median (NaN for an empty sample).
func Median(xs []float64) float64 {
	s := sorted(xs)
	if len(s) == 0 {
		return math.NaN()
	}
	return medianSorted(s)
}

// MedianSorted is Median of s, which must be sorted and finite; it
// allocates nothing (for callers that own many small lists).
func MedianSorted(s []float64) float64 {
	if len(s) == 0 {
		return math.NaN()
	}
	return medianSorted(s)
}

func medianSorted(s []float64) float64 {
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return s[n/2-1] + (s[n/2]-s[n/2-1])/2
}

func meanCV(xs []float64) (mean, cv float64) {
	n := float64(len(xs))
	for _, x := range xs {
		mean += x
	}
	mean /= n
	if len(xs) < 2 || mean == 0 {
		return mean, math.NaN()
	}
	var ss float64
	for _, x := range xs {
		d := x - mean
		ss += d * d
	}
	return mean, math.Sqrt(ss/(n-1)) / math.Abs(mean)
}

// sorted returns the finite values of xs in ascending order. NaN and ±Inf
// are not measurements (a failed iteration, a division by zero in a tool's
// output); every function of this package ignores them rather than let one
// poison a median or a rank.
func sorted(xs []float64) []float64 {
	s := finite(xs)
	slices.Sort(s)
	return s
}

func finite(xs []float64) []float64 {
	out := make([]float64, 0, len(xs))
	for _, x := range xs {
		if !math.IsNaN(x) && !math.IsInf(x, 0) {
			out = append(out, x)
		}
	}
	return out
}
