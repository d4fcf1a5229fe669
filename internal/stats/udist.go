package stats

import (
	"math"
	"sync"
)

// uDist is the exact null distribution of the Mann–Whitney U statistic for
// sizes n1, n2 given the pooled sample's tie groups, indexed by 2U so that
// the half-steps that ties produce stay integral.
type uDist struct {
	n1, n2 int
	cum    []float64 // cum[i] = P(2U ≤ i)
}

// cdf2 is P(2U ≤ u2).
func (d *uDist) cdf2(u2 int) float64 {
	switch {
	case u2 < 0:
		return 0
	case u2 >= len(d.cum):
		return 1
	}
	return d.cum[u2]
}

// quantile2 is the largest u2 with P(2U ≤ u2) ≤ p, or −1 if none.
func (d *uDist) quantile2(p float64) int {
	best := -1
	for i, c := range d.cum {
		if c > p*(1+1e-12) {
			break
		}
		best = i
	}
	return best
}

// newUDist counts, for every way to draw n1 of the pooled values as "the
// first sample", twice its rank sum. A group of size t from which k are
// drawn adds k·rank and C(t,k) ways; the counts are kept as float64 because
// C(100,50) ≈ 10²⁹ overflows integers, and only ratios are needed.
func newUDist(n1, n2 int, groups []tieGroup) *uDist {
	n := n1 + n2
	maxR2 := 2 * n1 * n // bound on twice the rank sum
	ways := make([][]float64, n1+1)
	for k := range ways {
		ways[k] = make([]float64, maxR2+1)
	}
	ways[0][0] = 1
	taken := 0
	for _, g := range groups {
		taken += g.size
		// Descending k so that ways[k−j] is still the count before g.
		for k := min(n1, taken); k >= 1; k-- {
			row := ways[k]
			c := 1.0
			for j := 1; j <= min(k, g.size); j++ {
				c = c * float64(g.size-j+1) / float64(j) // C(size, j)
				shift := j * g.rank2
				src := ways[k-j]
				for s := maxR2 - shift; s >= 0; s-- {
					if v := src[s]; v != 0 {
						row[s+shift] += c * v
					}
				}
			}
		}
	}
	off := n1 * (n1 + 1) // 2U = 2R − n1(n1+1)
	total := math.Exp(lchoose(n, n1))
	var sum float64
	for _, v := range ways[n1] {
		sum += v
	}
	if sum > 0 {
		total = sum // exact normaliser, free of lgamma rounding
	}
	d := &uDist{n1: n1, n2: n2, cum: make([]float64, 2*n1*n2+1)}
	var acc float64
	for u2 := range d.cum {
		if r := u2 + off; r <= maxR2 {
			acc += ways[n1][r]
		}
		d.cum[u2] = acc / total
	}
	return d
}

var noTiesCache sync.Map // [2]int → *uDist

// noTiesUDist is the distribution without ties, cached per (n1, n2) since
// every metric of a comparison usually has the same sample sizes.
func noTiesUDist(n1, n2 int) *uDist {
	key := [2]int{n1, n2}
	if d, ok := noTiesCache.Load(key); ok {
		return d.(*uDist)
	}
	groups := make([]tieGroup, n1+n2)
	for i := range groups {
		groups[i] = tieGroup{size: 1, rank2: 2 * (i + 1)}
	}
	d := newUDist(n1, n2, groups)
	noTiesCache.Store(key, d)
	return d
}
