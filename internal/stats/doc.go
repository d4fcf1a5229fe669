// Package stats holds the pure statistics behind perflab's bench stopping
// rule, compare verdicts and reports. Every function takes plain []float64
// samples and returns numbers; nothing here reads the host or the store, so
// each result can be checked against published tables and against
// golang.org/x/perf/benchmath (benchstat), which the tests feed the same data.
//
// NaN and ±Inf values are not measurements and are ignored by every
// function (a sample of only such values is empty).
//
// Benchmark samples are skewed and often multimodal, so everything here is
// distribution-free: medians instead of means, ranks instead of t-tests.
// docs/statistics.md explains the choices for operators; the formulas are:
//
// Median and its confidence interval. For sorted x(1) ≤ … ≤ x(n) the median
// is x((n+1)/2), interpolating between the two middle values for even n. The
// number K of samples below the population median is Binomial(n, 1/2), so the
// interval [x(l), x(r−1)] (1-based order statistics) covers the median with
// probability P(l ≤ K < r) = Σ_{k=l}^{r−1} C(n,k)/2ⁿ. MedianCI grows [l, r)
// outward from the mode of K, taking the larger neighbouring probability
// (the left one on a tie), until the coverage reaches the requested
// confidence. It is exact for every n: no normal approximation. When even
// [x(1), x(n)] covers less than asked (n ≤ 5 at 95%), there is no interval
// and ok is false; MedianCISamples says how many samples are needed.
//
// Spread. CV = s / x̄ with the n−1 sample standard deviation; it is shown
// for orientation only, the verdicts never use it.
//
// Mann–Whitney U. U = Σᵢ Σⱼ [aᵢ > bⱼ] + ½[aᵢ = bⱼ], i.e. U = R_a − n_a(n_a+1)/2
// with R_a the sum of a's mid-ranks in the pooled sample. Two-sided
// p = 2·P(U ≤ min(U, n_a·n_b − U)), capped at 1, and p = 1 when U sits at the
// centre n_a·n_b/2. For n_a, n_b ≤ 50 without ties (≤ 25 with ties) the null
// distribution of U is computed exactly, conditional on the observed tie
// groups, by counting the ways to draw n_a of the pooled values: a tie group
// of size t from which k are drawn contributes k times its mid-rank and
// C(t,k) ways. Larger samples use the normal approximation with mean
// n_a·n_b/2, variance n_a·n_b/12 · ((N+1) − Σ(t³−t)/(N(N−1))) (tie
// correction, N = n_a+n_b) and a continuity correction of ½. These are the
// same limits and rules benchstat uses, so p-values agree with it.
//
// Hodges–Lehmann shift. The estimate of how far b sits from a is the median
// of all n_a·n_b differences bⱼ − aᵢ. Its confidence interval is
// [D(k), D(n_a·n_b+1−k)] over the sorted differences, where k−1 is the
// largest u with P(U ≤ u) ≤ (1−conf)/2 under the no-ties null distribution
// (exact up to 50 per side, normal approximation above). This is the
// interval that inverts the Mann–Whitney test, so "p < α" and "the 1−α
// interval excludes 0" agree up to ties.
//
// Holm–Bonferroni. For m p-values sorted ascending p(1) ≤ … ≤ p(m) the
// adjusted value is p̃(i) = max_{j≤i} min(1, (m−j+1)·p(j)). It controls the
// family-wise error rate across every metric of one comparison without
// Bonferroni's loss of power.
//
// Equivalence (TOST). Two one-sided tests at level α of "shift ≤ −δ" and
// "shift ≥ +δ" both reject exactly when the 1−2α Hodges–Lehmann interval lies
// inside (−δ, +δ), so Equivalent checks that inclusion, with δ = margin ×
// |median(a)|.
//
// Geometric mean. GeoMean = exp(mean(ln xᵢ)) of positive values; a suite's
// summary is the geometric mean of the per-metric ratios median(b)/median(a),
// which is insensitive to the metrics' units and symmetric under swapping.
//
// A median's standard error (the fleet rule's own-noise check). For k
// normal values with standard deviation σ, MedianSE = √(π/2)·σ/√k, the
// large-k standard error of their median; at small k it overstates the
// exact value (σ, 0.707σ, 0.670σ, 0.536σ at k = 1, 2, 3, 5), which errs
// towards "not different". SDMedianUnbiased makes a sample SD s of k
// values median-unbiased: s·√((k−1)/m), m = ChiSquaredMedian(k−1), since
// (k−1)s²/σ² is χ²ₖ₋₁; the median of χ²₁ is Φ⁻¹(¾)², of χ²₂ 2·ln 2, and
// above Wilson–Hilferty's df·(1 − 2/(9·df))³.
package stats
