package stats

import (
	"math"
	"sync"
	"sync/atomic"

	mstats "github.com/aclements/go-moremath/stats"
)

// DriftSource says where the between-run spread of a run-level comparison
// came from.
type DriftSource string

const (
	// DriftRuns: the sides' own repeated runs (at least one side has two).
	DriftRuns DriftSource = "runs"
	// DriftHistory: one run per side; the spread comes from earlier runs
	// of the same probe and parameters on the same host (A/A calibration).
	DriftHistory DriftSource = "history"
	// DriftRunsHistory: both.
	DriftRunsHistory DriftSource = "runs+history"
	// DriftNone: one run per side and no history: drift cannot be
	// separated from a change.
	DriftNone DriftSource = "none"
	// DriftBlocks: interleaved blocks, compared pairwise; drift between
	// blocks cancels.
	DriftBlocks DriftSource = "blocks"
)

// GrossFactor is the smallest ratio of two run medians that perflab calls
// a change without any estimate of between-run drift: a factor of four
// either way, with the two runs' own median intervals disjoint. Whole-host
// drift between runs is measured in percent, but single metrics can flip
// further: in the A/A data of this project's development VM
// (testdata/aa), memory latency at the 4 MiB cache boundary moved ×3.4
// between two runs with nothing changed, as neighbours took the shared
// last-level cache. THP always vs never moves the page-fault cost by
// about ×8 and stays above it.
const GrossFactor = 4.0

// RunLevel compares two sides whose unit of replication is the run. Each
// side is given as its per-run medians (positive values).
//
// Model: ln(median of run r on side s) = μ_s + e_r with e_r ~ (0, τ²) the
// run's drift (the host's speed during that run, plus the run's own
// sampling error), independent between runs and with the same τ on both
// sides. The estimate of ln(b/a) is d = Mean(ln b) − Mean(ln a); τ² is
// estimated by pooling the within-group sums of squares of the two sides
// and of the calibration groups (earlier A/A runs, one group per host and
// configuration):
//
//	s² = Σ_g Σ_{r∈g} (x_r − x̄_g)² / Σ_g (n_g − 1),  df = Σ_g (n_g − 1)
//	SE = s·√(1/k_a + 1/k_b),  t = d/SE,  p = 2·P(T_df > |t|)
//	CI = exp(d ± t_{df,(1+conf)/2}·SE)
//
// With one run per side and no calibration df = 0: there is no interval
// and P is NaN; callers decide with the gross-change rule (GrossFactor).
type RunLevel struct {
	Ka, Kb int // runs per side
	// Ratio is the ratio of the sides' geometric means of run medians
	// (b/a); Lo and Hi bound it at the requested confidence (NaN without
	// a drift estimate).
	Ratio, Lo, Hi float64
	// Linear is set when a side has a zero or negative run median (error
	// counts, say): the model is then on the values themselves, Ratio, Lo
	// and Hi are NaN and Diff, DiffLo, DiffHi hold b − a with its interval.
	Linear               bool
	Diff, DiffLo, DiffHi float64
	// P is the two-sided p-value of "no change"; NaN without a drift
	// estimate.
	P float64
	// DF is the degrees of freedom of the drift estimate; SD its value on
	// the log scale (DriftPct = 100·(e^SD − 1), the typical run-to-run
	// move of this metric).
	DF       int
	SD       float64
	DriftPct float64
	Source   DriftSource

	base float64 // side a's mean, on the model's scale
}

// BaseMean is side a's mean on the model's scale (log for ratios, the
// values themselves when Linear): the level a linear minimum effect is
// relative to.
func (r RunLevel) BaseMean() float64 { return r.base }

// HasInterval reports whether the comparison had a drift estimate.
func (r RunLevel) HasInterval() bool {
	if r.Linear {
		return r.DF > 0 && !math.IsNaN(r.DiffLo)
	}
	return r.DF > 0 && !math.IsNaN(r.Lo)
}

// CompareRuns computes the run-level comparison of per-run medians a and b
// with optional calibration groups (per-run medians of earlier runs, one
// slice per host and configuration). Non-positive and non-finite values are
// ignored: run medians are rates or times.
func CompareRuns(a, b []float64, calibration [][]float64, conf float64) RunLevel {
	tr := logs
	linear := !allPositive(a) || !allPositive(b)
	if linear {
		tr = finite
	}
	la, lb := tr(a), tr(b)
	nan := math.NaN()
	r := RunLevel{Ka: len(la), Kb: len(lb), Ratio: nan, Lo: nan, Hi: nan, P: nan, SD: nan, DriftPct: nan,
		Linear: linear, Diff: nan, DiffLo: nan, DiffHi: nan}
	if r.Ka == 0 || r.Kb == 0 {
		r.Source = DriftNone
		return r
	}
	ma, mb := Mean(la), Mean(lb)
	d := mb - ma
	if linear {
		r.Diff = d
	} else {
		r.Ratio = math.Exp(d)
	}
	ss, df := sumSq(la, ma)+sumSq(lb, mb), r.Ka-1+r.Kb-1
	own := df > 0
	var hist bool
	for _, g := range calibration {
		lg := tr(g)
		if len(lg) < 2 {
			continue
		}
		ss += sumSq(lg, Mean(lg))
		df += len(lg) - 1
		hist = true
	}
	switch {
	case own && hist:
		r.Source = DriftRunsHistory
	case own:
		r.Source = DriftRuns
	case hist:
		r.Source = DriftHistory
	default:
		r.Source = DriftNone
		return r
	}
	r.DF = df
	r.SD = math.Sqrt(ss / float64(df))
	if !linear {
		r.DriftPct = 100 * math.Expm1(r.SD)
	}
	se := r.SD * math.Sqrt(1/float64(r.Ka)+1/float64(r.Kb))
	lo, hi := d, d
	switch {
	case se == 0 && d == 0: // identical runs: no change, certainly
		r.P = 1
	case se == 0:
		r.P = 0
	default:
		t := mstats.TDist{V: float64(df)}
		r.P = math.Min(1, 2*(1-t.CDF(math.Abs(d)/se)))
		q := TQuantile((1+conf)/2, float64(df))
		lo, hi = d-q*se, d+q*se
	}
	if linear {
		r.DiffLo, r.DiffHi = lo, hi
	} else {
		r.Lo, r.Hi = math.Exp(lo), math.Exp(hi)
	}
	r.base = ma
	return r
}

func allPositive(xs []float64) bool {
	for _, x := range xs {
		if !(x > 0) && !math.IsNaN(x) {
			return false
		}
	}
	return true
}

// MinEffect is the smallest relative change a run-level verdict claims:
// a change is called only when the whole interval of the ratio lies beyond
// ±MinEffect·margin (half the equivalence margin, ±1% at the default ±2%).
// This keeps the false-positive rate of "better" and "worse" below α when
// per-run offsets are not normal (the simulation in runlevel_test.go), and
// leaves the band between it and the margin to "same"/"equivalent".
const MinEffect = 0.5

// Direction is +1 when the whole interval of the ratio lies above
// 1+minRel, −1 when it lies below 1/(1+minRel), else 0 (no change claimed).
func (r RunLevel) Direction(minRel float64) int {
	if !r.HasInterval() {
		return 0
	}
	if r.Linear {
		m := minRel * math.Abs(r.base)
		switch {
		case r.DiffLo > m:
			return 1
		case r.DiffHi < -m:
			return -1
		}
		return 0
	}
	switch {
	case r.Lo > 1+minRel:
		return 1
	case r.Hi < 1/(1+minRel):
		return -1
	}
	return 0
}

// ComparePaired compares two sides measured in interleaved blocks: a[i] and
// b[i] are the run medians of the two states in block i, measured minutes
// apart at most, so the host's slow drift is common to both and cancels in
// the difference. With dᵢ = ln bᵢ − ln aᵢ over the n blocks both have:
//
//	d̄ = Mean(dᵢ),  s_d = sd(dᵢ),  SE = s_d/√n,  df = n − 1
//	t = d̄/SE,  CI = exp(d̄ ± t_{df,(1+conf)/2}·SE)
//
// Blocks where either value is missing, zero or negative are left out.
func ComparePaired(a, b []float64, conf float64) RunLevel {
	var ds []float64
	for i := range min(len(a), len(b)) {
		if a[i] > 0 && b[i] > 0 && !math.IsInf(a[i], 0) && !math.IsInf(b[i], 0) {
			ds = append(ds, math.Log(b[i])-math.Log(a[i]))
		}
	}
	return ComparePairedLogs(ds, 0, 0, conf)
}

// ComparePairedLogs is ComparePaired on the blocks' log-ratios
// dᵢ = ln bᵢ − ln aᵢ, with the spread optionally pooled with earlier
// sessions of the same measurement (bisect's successive sessions):
// extraSS is their sum of squared deviations from their own means and
// extraDF its degrees of freedom, added to this session's as CompareRuns
// adds calibration groups.
func ComparePairedLogs(ds []float64, extraSS float64, extraDF int, conf float64) RunLevel {
	nan := math.NaN()
	n := len(ds)
	r := RunLevel{Ka: n, Kb: n, Ratio: nan, Lo: nan, Hi: nan, P: nan, SD: nan, DriftPct: nan, Diff: nan, DiffLo: nan, DiffHi: nan, Source: DriftBlocks}
	if n == 0 {
		r.Source = DriftNone
		return r
	}
	d := Mean(ds)
	r.Ratio = math.Exp(d)
	r.DF = n - 1 + max(extraDF, 0)
	if r.DF < 1 {
		r.DF = 0
		r.Source = DriftNone
		return r
	}
	r.SD = math.Sqrt((sumSq(ds, d) + extraSS) / float64(r.DF))
	r.DriftPct = 100 * math.Expm1(r.SD)
	se := r.SD / math.Sqrt(float64(n))
	lo, hi := d, d
	switch {
	case se == 0 && d == 0:
		r.P = 1
	case se == 0:
		r.P = 0
	default:
		t := mstats.TDist{V: float64(r.DF)}
		r.P = math.Min(1, 2*(1-t.CDF(math.Abs(d)/se)))
		q := TQuantile((1+conf)/2, float64(r.DF))
		lo, hi = d-q*se, d+q*se
	}
	r.Lo, r.Hi = math.Exp(lo), math.Exp(hi)
	return r
}

// SumSq is Σ(xᵢ − mean)², the part of a spread ComparePairedLogs pools.
func SumSq(xs []float64) float64 { return sumSq(xs, Mean(xs)) }

// RelHalfWidth is the larger distance of the interval's ends from the
// ratio, relative to it (+Inf without an interval): the precision a
// run-level or paired comparison has reached.
func (r RunLevel) RelHalfWidth() float64 {
	if !r.HasInterval() || r.Linear || r.Ratio == 0 {
		return math.Inf(1)
	}
	return math.Max(r.Hi-r.Ratio, r.Ratio-r.Lo) / r.Ratio
}

// RunsNeeded is the number of runs per side with which a change of
// minPct percent would be significant at alpha, for a metric whose
// run-to-run drift is driftPct percent (using the normal quantiles: a
// planning figure, not a guarantee). It is at least 2.
func RunsNeeded(driftPct, minPct, alpha float64) int {
	if driftPct <= 0 || minPct <= 0 {
		return 2
	}
	sd := math.Log1p(driftPct / 100)
	eff := math.Log1p(minPct / 100)
	z := mstats.StdNormal.InvCDF(1 - alpha/2)
	n := int(math.Ceil(2 * (z * sd / eff) * (z * sd / eff)))
	return max(n, 2)
}

// TQuantile is the p-quantile of Student's t distribution with df degrees
// of freedom, found by bisection on its CDF (to 1e-10). Results are
// memoised: a sequential session asks for the same few quantiles at every
// look, and each bisection costs ~40 incomplete beta functions.
func TQuantile(p, df float64) float64 {
	if p <= 0 || p >= 1 || df <= 0 || math.IsNaN(p) {
		return math.NaN()
	}
	if p == 0.5 {
		return 0
	}
	k := [2]float64{p, df}
	if q, ok := tqCache.Load(k); ok {
		return q.(float64)
	}
	q := tQuantile(p, df)
	if tqCacheN.Add(1) > 1<<14 {
		tqCache.Clear()
		tqCacheN.Store(0)
	}
	tqCache.Store(k, q)
	return q
}

var (
	tqCache  sync.Map // [2]float64{p, df} → quantile
	tqCacheN atomic.Int64
)

func tQuantile(p, df float64) float64 {
	t := mstats.TDist{V: df}
	lo, hi := -1.0, 1.0
	for t.CDF(lo) > p {
		lo *= 2
	}
	for t.CDF(hi) < p {
		hi *= 2
	}
	for i := 0; i < 200 && hi-lo > 1e-10; i++ {
		mid := (lo + hi) / 2
		if t.CDF(mid) < p {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}

func logs(xs []float64) []float64 {
	out := make([]float64, 0, len(xs))
	for _, x := range xs {
		if x > 0 && !math.IsInf(x, 0) {
			out = append(out, math.Log(x))
		}
	}
	return out
}

// Mean is the arithmetic mean of xs (NaN for none).
func Mean(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

func sumSq(xs []float64, m float64) float64 {
	var s float64
	for _, x := range xs {
		s += (x - m) * (x - m)
	}
	return s
}

// RatioMeanCI is the mean of the per-block ratios num[i]/den[i] (blocks
// where den is 0 are skipped) with its two-sided t interval at conf: the
// share of a gap (bisect) or of a gain (tune search) one part of it
// explains, block by block. With fewer than two ratios the interval is NaN.
func RatioMeanCI(num, den []float64, conf float64) (m, lo, hi float64) {
	var xs []float64
	for i := range min(len(num), len(den)) {
		if den[i] != 0 {
			xs = append(xs, num[i]/den[i])
		}
	}
	if len(xs) == 0 {
		return math.NaN(), math.NaN(), math.NaN()
	}
	m = Mean(xs)
	if len(xs) < 2 {
		return m, math.NaN(), math.NaN()
	}
	se := math.Sqrt(sumSq(xs, m)/float64(len(xs)-1)) / math.Sqrt(float64(len(xs)))
	q := TQuantile((1+conf)/2, float64(len(xs)-1))
	return m, m - q*se, m + q*se
}
