// Package changepoint finds the points in a series of runs (one value per
// run, oldest first) where the metric's distribution changed: E-divisive
// means (Matteson and James, "A Nonparametric Approach for Multiple Change
// Point Analysis of Multivariate Data", JASA 2014), with a minimum segment
// length, the method Apache Otava (formerly Hunter, Fleming et al.,
// ICPE 2023) uses to find performance regressions in CI history. It is pure:
// numbers in, change points out.
//
// # Divergence
//
// For a segment z_s … z_{e−1} and a candidate split s < τ < κ ≤ e, with
// X = z_s … z_{τ−1} (n = τ−s values) and Y = z_τ … z_{κ−1} (m = κ−τ), the
// energy distance with exponent α = 1 is
//
//	Ê(X, Y) = 2/(n·m) Σᵢ Σⱼ |xᵢ − yⱼ| − C(n,2)⁻¹ Σ_{i<k} |xᵢ − x_k| − C(m,2)⁻¹ Σ_{j<l} |yⱼ − y_l|
//
// (mean distance between the sides minus the mean distances within each),
// and the statistic is Q̂ = n·m/(n+m) · Ê. The candidate (τ̂, κ̂) maximises
// Q̂ over every τ and κ with n ≥ MinSegment and m ≥ MinSegment. Letting κ
// end before the segment does (the "κ" of the paper) keeps a later shift
// from diluting an earlier one. The sums are running sums over the
// distance matrix (see bestSplit), so one search costs O(L²) time and O(L)
// memory for a segment of L runs.
//
// # Significance
//
// Divisive: the whole series is one segment; the best candidate over all
// current segments is tested and, if significant, splits its segment in
// two, until a candidate is not significant. The test is Matteson and
// James's permutation test: the values within every current segment are
// shuffled, the maximum Q̂ over all segments recomputed, and
//
//	p = (1 + #{permutations with max Q̂ ≥ observed}) / (R + 1).
//
// A candidate is a change point when p ≤ Alpha. Because each permutation
// takes the maximum over all splits exactly as the observed statistic
// does, p accounts for having searched: on a series without a change the
// first test rejects with probability at most Alpha, so a flat series
// reports a change point at most Alpha of the time (the tests measure this
// on seeded noise). Hunter and Otava replace the permutation test with
// Student's t-test between the two sides, for speed and determinism; that
// t-test ignores the search over split points and so rejects flat series
// more often than its nominal level. Runs are few (tens to hundreds) and a
// permutation costs O(L²), so perflab keeps the permutation test and makes
// it deterministic instead: the generator is seeded from the series
// itself, so the same history always gives the same answer. A test stops
// as soon as p must exceed Alpha (the decision cannot change), so only
// accepted change points cost all R permutations. A test over L runs
// costs O(R·L²) time and O(L) memory (BenchmarkDetect, one step, on the
// 2-core development VM, shared: 50 runs 1 ms, 200 runs about 0.1 s,
// 1000 runs about 2 s).
//
// Assumptions: values in a segment are exchangeable under no change (no
// trend, no autocorrelation). A slowly drifting host violates this, and a
// drift then shows as one or more change points; each point's magnitude
// says how big the step is, which the caller weighs against the host's
// between-run noise.
//
// After the search, each change point's magnitude is measured between its
// neighbouring change points: the medians of the segments on either side,
// the relative change of the median, and a 95% interval for the shift
// (Hodges–Lehmann: the median of all pairwise differences after − before,
// with the distribution-free interval that inverts the Mann–Whitney test),
// relative to the median before.
package changepoint

import (
	"encoding/json"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"sort"

	"github.com/perflab/perflab/internal/stats"
)

// Options tune Detect; zero values take the defaults.
type Options struct {
	MinSegment   int     // fewest runs on each side of a change point (default 4, at least 2)
	Alpha        float64 // significance level of each split (default 0.01)
	Permutations int     // permutations per test (default 199)
	Seed         uint64  // 0: derived from the series
}

// Defaults for Options.
const (
	DefaultMinSegment   = 4
	DefaultAlpha        = 0.01
	DefaultPermutations = 199
)

func (o Options) withDefaults() Options {
	if o.MinSegment < 2 {
		o.MinSegment = DefaultMinSegment
	}
	if o.Alpha <= 0 || o.Alpha >= 1 {
		o.Alpha = DefaultAlpha
	}
	if o.Permutations <= 0 {
		o.Permutations = DefaultPermutations
	}
	return o
}

// Point is one change point.
type Point struct {
	Index  int     `json:"index"`  // first value of the new segment
	PValue float64 `json:"pvalue"` // permutation p-value of the split
	Q      float64 `json:"q"`      // divergence statistic Q̂ of the split
	Before float64 `json:"before"` // median of the segment before
	After  float64 `json:"after"`  // median of the segment after
	Change float64 `json:"change"` // (After − Before) / |Before|; NaN when Before is 0
	// ChangeLo and ChangeHi bound the shift at 95% (Hodges–Lehmann, the
	// interval that inverts the Mann–Whitney test), relative to |Before|;
	// ±Inf when the segments are too short for that confidence.
	ChangeLo float64 `json:"change_lo"`
	ChangeHi float64 `json:"change_hi"`
}

// ShiftConfidence is the confidence of Point.ChangeLo/ChangeHi.
const ShiftConfidence = 0.95

// Detect returns the change points of xs in index order. NaN and ±Inf
// values are not measurements: the caller must drop them first (Detect
// returns nil for a series containing any).
func Detect(xs []float64, o Options) []Point {
	o = o.withDefaults()
	for _, x := range xs {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil
		}
	}
	if len(xs) < 2*o.MinSegment {
		return nil
	}
	rng := rand.New(rand.NewPCG(seed(xs, o.Seed), 0x9e3779b97f4a7c15))
	var points []Point
	bounds := []int{0, len(xs)} // segment boundaries, sorted
	for {
		seg, c := bestOverSegments(xs, bounds, o.MinSegment)
		if seg < 0 {
			break
		}
		p := permutationP(xs, bounds, c.q, o, rng)
		if p > o.Alpha {
			break
		}
		points = append(points, Point{Index: c.tau, PValue: p, Q: c.q})
		bounds = insertSorted(bounds, c.tau)
	}
	sort.Slice(points, func(i, j int) bool { return points[i].Index < points[j].Index })
	measure(xs, points)
	return points
}

// measure fills in the medians either side of each point, bounded by its
// neighbours.
func measure(xs []float64, points []Point) {
	for i := range points {
		lo, hi := 0, len(xs)
		if i > 0 {
			lo = points[i-1].Index
		}
		if i+1 < len(points) {
			hi = points[i+1].Index
		}
		p := &points[i]
		p.Before = stats.Median(xs[lo:p.Index])
		p.After = stats.Median(xs[p.Index:hi])
		p.Change, p.ChangeLo, p.ChangeHi = math.NaN(), math.NaN(), math.NaN()
		if p.Before != 0 {
			_, lo, hi := stats.HodgesLehmann(xs[lo:p.Index], xs[p.Index:hi], ShiftConfidence)
			b := math.Abs(p.Before)
			p.Change, p.ChangeLo, p.ChangeHi = (p.After-p.Before)/b, lo/b, hi/b
		}
	}
}

type candidate struct {
	tau, kappa int // absolute indices
	q          float64
}

// bestOverSegments returns the index of the segment (bounds[i],
// bounds[i+1]) holding the best candidate, or −1 when no segment is long
// enough to split.
func bestOverSegments(xs []float64, bounds []int, m int) (int, candidate) {
	best, at := candidate{q: math.Inf(-1)}, -1
	var buf []float64
	for i := 0; i+1 < len(bounds); i++ {
		s, e := bounds[i], bounds[i+1]
		tau, kappa, q, ok := bestSplit(xs[s:e], m, &buf)
		if ok && q > best.q {
			best, at = candidate{s + tau, s + kappa, q}, i
		}
	}
	return at, best
}

// permutationP is the permutation p-value of the observed maximum q.
func permutationP(xs []float64, bounds []int, q float64, o Options, rng *rand.Rand) float64 {
	perm := make([]float64, len(xs))
	copy(perm, xs)
	var buf []float64
	extreme := 0
	for r := 0; r < o.Permutations; r++ {
		maxQ := math.Inf(-1)
		for i := 0; i+1 < len(bounds); i++ {
			seg := perm[bounds[i]:bounds[i+1]]
			rng.Shuffle(len(seg), func(a, b int) { seg[a], seg[b] = seg[b], seg[a] })
			if _, _, pq, ok := bestSplit(seg, o.MinSegment, &buf); ok && pq > maxQ {
				maxQ = pq
			}
		}
		// A relative tolerance, so a permutation that reproduces the
		// observed order is counted as at least as extreme despite
		// rounding in the running sums.
		if maxQ >= q-1e-12*math.Abs(q) {
			extreme++
		}
		// Once p exceeds Alpha whatever the remaining permutations
		// give, the decision is made: stop (Besag and Clifford's
		// sequential test). Every history ends with such a test, and
		// under no change it stops after a handful of permutations.
		if p := float64(1+extreme) / float64(o.Permutations+1); p > o.Alpha {
			return p
		}
	}
	return float64(1+extreme) / float64(o.Permutations+1)
}

// bestSplit maximises Q̂ over splits of z with both sides at least m long.
// Indices are relative to z. buf is reused between calls.
//
// With R_t[k] = Σ_{i<t} |z_i − z_k| (one row, advanced in place as t
// grows) and W[k] = Σ_{i<j<k} |z_i − z_j|, the sums Ê needs are
// between(t,k) = Σ_{t≤j<k} R_t[j], within X = W[t] and within Y =
// W[k] − W[t] − between(t,k): O(L²) time, O(L) memory, sequential reads.
func bestSplit(z []float64, m int, buf *[]float64) (tau, kappa int, q float64, ok bool) {
	n := len(z)
	if n < 2*m {
		return 0, 0, 0, false
	}
	if cap(*buf) < 2*n+1 {
		*buf = make([]float64, 2*n+1)
	}
	row, w := (*buf)[:n], (*buf)[n:2*n+1]
	w[0] = 0
	for k := 0; k < n; k++ {
		row[k] = 0
		d := 0.0
		for i := 0; i < k; i++ {
			d += math.Abs(z[i] - z[k])
		}
		w[k+1] = w[k] + d
	}
	q = math.Inf(-1)
	for t := 0; t <= n-m; t++ {
		if t >= m {
			nx := float64(t)
			withinX := w[t] / (nx * (nx - 1) / 2)
			between := 0.0
			for k := t; k < n; k++ {
				between += row[k]
				if k+1-t < m {
					continue
				}
				ny := float64(k + 1 - t)
				withinY := w[k+1] - w[t] - between
				e := 2*between/(nx*ny) - withinX - withinY/(ny*(ny-1)/2)
				if v := nx * ny / (nx + ny) * e; v > q {
					tau, kappa, q = t, k+1, v
				}
			}
		}
		zt := z[t]
		for k := t + 1; k < n; k++ {
			row[k] += math.Abs(zt - z[k])
		}
	}
	return tau, kappa, q, true
}

func insertSorted(b []int, v int) []int {
	i := sort.SearchInts(b, v)
	b = append(b, 0)
	copy(b[i+1:], b[i:])
	b[i] = v
	return b
}

// seed is the given seed, or a hash of the series so that the same history
// always gives the same change points.
func seed(xs []float64, given uint64) uint64 {
	if given != 0 {
		return given
	}
	h := fnv.New64a()
	var b [8]byte
	for _, x := range xs {
		u := math.Float64bits(x)
		for i := range b {
			b[i] = byte(u >> (8 * i))
		}
		h.Write(b[:])
	}
	return h.Sum64()
}

// MarshalJSON writes non-finite numbers (no change from a zero median, an
// interval the segments are too short for) as null, which JSON can hold.
func (p Point) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Index    int      `json:"index"`
		PValue   float64  `json:"pvalue"`
		Q        float64  `json:"q"`
		Before   float64  `json:"before"`
		After    float64  `json:"after"`
		Change   *float64 `json:"change"`
		ChangeLo *float64 `json:"change_lo"`
		ChangeHi *float64 `json:"change_hi"`
	}{p.Index, p.PValue, p.Q, p.Before, p.After, finite(p.Change), finite(p.ChangeLo), finite(p.ChangeHi)})
}

func finite(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}
