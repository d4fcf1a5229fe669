package stats

import (
	"math"
)

// MedianCI returns the exact distribution-free confidence interval of the
// median of xs at the given confidence (0.95 for 95%). ok is false when xs
// has too few samples for an interval at that level (see MedianCISamples) or
// conf is not in (0, 1); the side that cannot be bounded is then −Inf/+Inf.
func MedianCI(xs []float64, conf float64) (lo, hi float64, ok bool) {
	s := sorted(xs)
	if len(s) == 0 {
		return math.Inf(-1), math.Inf(1), false
	}
	lo, hi, _, ok = medianCISorted(s, conf)
	return lo, hi, ok
}

// RelCIHalfWidth is the half-width of the median's confidence interval
// relative to the median: max(hi−median, median−lo)/|median|. The bench
// harness stops repeating once it falls below the requested precision. It is
// +Inf when there is no interval yet or the median is zero.
func RelCIHalfWidth(xs []float64, conf float64) float64 {
	lo, hi, ok := MedianCI(xs, conf)
	if !ok {
		return math.Inf(1)
	}
	m := Median(xs)
	if m == 0 {
		if lo == 0 && hi == 0 {
			return 0
		}
		return math.Inf(1)
	}
	return math.Max(hi-m, m-lo) / math.Abs(m)
}

// MedianCISamples is the smallest sample size with a finite median
// confidence interval at conf (6 at 95%, 8 at 99%).
func MedianCISamples(conf float64) int {
	for n := 1; n < 1<<20; n++ {
		if _, hi, _ := medianCIOrders(n, conf); hi <= n {
			if lo, _, _ := medianCIOrders(n, conf); lo >= 1 {
				return n
			}
		}
	}
	return math.MaxInt
}

func medianCISorted(s []float64, conf float64) (lo, hi, coverage float64, ok bool) {
	n := len(s)
	if !(conf > 0 && conf < 1) {
		return math.Inf(-1), math.Inf(1), 0, false
	}
	l, r, coverage := medianCIOrders(n, conf)
	// A side the sample cannot bound is infinite; the other side is still
	// reported (as benchstat does), but there is no usable interval.
	lo, hi = math.Inf(-1), math.Inf(1)
	if l >= 1 {
		lo = s[l-1]
	}
	if r <= n {
		hi = s[r-1]
	}
	return lo, hi, coverage, l >= 1 && r <= n
}

// medianCIOrders returns 1-based order statistics l < r with
// P(l ≤ K < r) ≥ conf for K ~ Binomial(n, ½), grown greedily outward from the
// mode (the left neighbour first on equal probabilities), and that coverage.
// l < 1 or r > n means the interval is unbounded on that side.
func medianCIOrders(n int, conf float64) (l, r int, coverage float64) {
	if n <= 0 {
		return 0, 1, 0
	}
	if conf >= 1 {
		return 0, n + 1, 1
	}
	// [kl, kr) is the set of K values summed; the CI is x(kl)..x(kr).
	// K = k means k samples fall below the median, so the median lies
	// between x(k) and x(k+1).
	mode := (n+1+1)/2 - 1 // ⌈(n+1)/2⌉−1: the lower mode for odd n+1
	kl, kr := mode, mode+1
	coverage = binomHalfPMF(n, mode)
	for coverage < conf {
		lp, rp := binomHalfPMF(n, kl-1), binomHalfPMF(n, kr)
		if lp == 0 && rp == 0 {
			break
		}
		if lp >= rp {
			coverage += lp
			kl--
		} else {
			coverage += rp
			kr++
		}
	}
	return kl, kr, coverage
}

// binomHalfPMF is P(K = k) for K ~ Binomial(n, ½), computed in log space so
// that large n neither overflows C(n,k) nor underflows 2⁻ⁿ near the mode.
func binomHalfPMF(n, k int) float64 {
	if k < 0 || k > n {
		return 0
	}
	// Exact symmetry matters: the greedy growth compares P(K=k) with
	// P(K=n−k), and the tie must be seen as a tie.
	k = min(k, n-k)
	return math.Exp(lchoose(n, k) - float64(n)*math.Ln2)
}

func lchoose(n, k int) float64 {
	a, _ := math.Lgamma(float64(n + 1))
	b, _ := math.Lgamma(float64(k + 1))
	c, _ := math.Lgamma(float64(n - k + 1))
	return a - b - c
}
