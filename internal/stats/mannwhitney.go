package stats

import (
	"math"
	"slices"
)

// Exact-distribution limits of the Mann–Whitney test, per sample. They match
// benchstat's, so both tools switch to the normal approximation at the same
// sizes and print the same p-values.
const (
	MWExactLimit     = 50 // without ties
	MWTiesExactLimit = 25 // with ties: the conditional distribution is costlier
)

// MWResult is a two-sided Mann–Whitney U test of a against b.
type MWResult struct {
	N1, N2 int
	// U counts the pairs with aᵢ > bⱼ, plus ½ for each tie.
	U float64
	// P is the two-sided p-value; 1 when every value is identical, NaN when
	// a sample is empty.
	P float64
	// Exact is true when P comes from the exact (tie-conditional)
	// distribution of U rather than the normal approximation.
	Exact bool
	Ties  bool
}

// MannWhitney returns the U statistic of a against b and the two-sided
// p-value of the hypothesis that both come from the same distribution.
func MannWhitney(a, b []float64) (u, p float64) {
	r := MannWhitneyTest(a, b)
	return r.U, r.P
}

// MannWhitneyTest is MannWhitney with the details of how p was computed.
func MannWhitneyTest(a, b []float64) MWResult {
	a, b = finite(a), finite(b)
	n1, n2 := len(a), len(b)
	res := MWResult{N1: n1, N2: n2, U: math.NaN(), P: math.NaN()}
	if n1 == 0 || n2 == 0 {
		return res
	}
	groups, r2 := rankGroups(a, b)
	// 2U = 2R₁ − n₁(n₁+1), kept doubled so mid-ranks stay integral.
	u2 := r2 - n1*(n1+1)
	res.U = float64(u2) / 2
	res.Ties = len(groups) < n1+n2
	if len(groups) == 1 {
		res.P, res.Exact = 1, true
		return res
	}
	limit := MWExactLimit
	if res.Ties {
		limit = MWTiesExactLimit
	}
	small2 := min(u2, 2*n1*n2-u2)
	if n1 <= limit && n2 <= limit {
		res.Exact = true
		if 2*small2 == 2*n1*n2 { // U at the centre of a symmetric distribution
			res.P = 1
			return res
		}
		var d *uDist
		if res.Ties {
			d = newUDist(n1, n2, groups)
		} else {
			d = noTiesUDist(n1, n2)
		}
		res.P = math.Min(1, 2*d.cdf2(small2))
		return res
	}
	res.P = mwNormalP(n1, n2, res.U, groups)
	return res
}

// mwNormalP is the normal approximation with tie and continuity correction.
func mwNormalP(n1, n2 int, u float64, groups []tieGroup) float64 {
	var t float64
	for _, g := range groups {
		s := float64(g.size)
		t += s*s*s - s
	}
	nn := float64(n1 + n2)
	prod := float64(n1) * float64(n2)
	sigma := math.Sqrt(prod / 12 * ((nn + 1) - t/(nn*(nn-1))))
	if sigma == 0 {
		return 1
	}
	d := u - prod/2
	switch {
	case d > 0:
		d -= 0.5
	case d < 0:
		d += 0.5
	}
	return math.Min(1, math.Erfc(math.Abs(d/sigma)/math.Sqrt2))
}

// tieGroup is a run of equal values in the pooled sample: size values, of
// which fromA came from the first sample, at doubled mid-rank rank2.
type tieGroup struct {
	size, fromA, rank2 int
}

// rankGroups pools a and b, and returns the tie groups in ascending order
// and twice the rank sum of a.
func rankGroups(a, b []float64) (groups []tieGroup, r2 int) {
	type lv struct {
		v float64
		a bool
	}
	pool := make([]lv, 0, len(a)+len(b))
	for _, x := range a {
		pool = append(pool, lv{x, true})
	}
	for _, x := range b {
		pool = append(pool, lv{x, false})
	}
	slices.SortFunc(pool, func(x, y lv) int {
		switch {
		case x.v < y.v:
			return -1
		case x.v > y.v:
			return 1
		}
		return 0
	})
	for i := 0; i < len(pool); {
		j, na := i, 0
		for ; j < len(pool) && pool[j].v == pool[i].v; j++ {
			if pool[j].a {
				na++
			}
		}
		// Positions i+1 … j (1-based): mid-rank (i+1+j)/2.
		g := tieGroup{size: j - i, fromA: na, rank2: i + 1 + j}
		groups = append(groups, g)
		r2 += na * g.rank2
		i = j
	}
	return groups, r2
}
