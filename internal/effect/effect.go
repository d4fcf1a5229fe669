// Package effect is perflab's one answer to "is this change better, worse,
// the same, equivalent, or unknown?". Every command that calls a change —
// compare, the interleaved sessions of bench and tune, bisect, runs
// history, fleet, the exporter and the console — builds an Effect from the
// run-level statistics (package stats) and asks its Verdict. Nothing else
// in perflab compares an effect's sign with zero (effect_ast_test.go holds
// the repository to it).
//
// An Effect is B against A for one metric: the ratio b/a (or the
// difference b − a for metrics that can be zero) with its interval, the
// p-value of "no change" (Holm-adjusted when the effect is one of a
// family), the equivalence margin, which direction is better, and the
// runs a side.
//
// # The rule
//
// As x/perf's benchmath states its test in one place, this is perflab's,
// at significance α (default 0.05) and equivalence margin m (default ±2%):
//
//  1. Inconclusive when a side has no runs.
//  2. Run level with a drift estimate (two or more runs on a side, A/A
//     calibration runs from the store, or two or more interleaved
//     blocks): a change is called when p < α AND the whole interval of
//     the ratio lies beyond ±MinEffect·m (±1% at the default margin); its
//     direction and the metric's better-is make it better or worse.
//     When the effect is one of a family (a comparison's metrics) p is
//     Holm-adjusted; an effect that alone has p < α and its interval
//     beyond ±MinEffect·m, but not the adjusted p, is inconclusive and the
//     reason says so: "same" would contradict the interval shown beside
//     it, and more runs settle it.
//  3. Run level without a drift estimate (one run a side, no history):
//     only a gross change is called — the two medians at least
//     stats.GrossFactor (×4) apart with disjoint median intervals, or from
//     all-zero to non-zero for counts. Anything else is inconclusive, and
//     the reason says how many runs would settle it.
//  4. Sample level (Go benchmark files, where benchstat treats every
//     -count repetition as a run): inconclusive when the samples cannot
//     reach p < α at all; else a change when Mann–Whitney p < α, in the
//     direction of the Hodges–Lehmann shift.
//  5. No change called: equivalent when the 1−2α interval (TOST) lies
//     inside ±m, else same.
//
// "Same" is not "equivalent": same says no change was shown, equivalent
// says the change was shown to be smaller than the margin.
package effect

import (
	"fmt"
	"math"

	"github.com/perflab/perflab/internal/run"
	"github.com/perflab/perflab/internal/stats"
)

// Verdict is the outcome for one effect.
type Verdict string

const (
	Better       Verdict = "better"       // a change in the good direction
	Worse        Verdict = "worse"        // a change in the bad direction
	Same         Verdict = "same"         // no change shown, equivalence not shown
	Equivalent   Verdict = "equivalent"   // shown to lie within ±margin (TOST)
	Inconclusive Verdict = "inconclusive" // the data cannot tell
)

// Changed reports whether the verdict calls a change (better or worse).
func (v Verdict) Changed() bool { return v == Better || v == Worse }

// Level says what the unit of replication of an effect is.
type Level string

const (
	// LevelRuns: one value per run (its median); drift between runs is the
	// noise (stats.CompareRuns, stats.ComparePaired).
	LevelRuns Level = "runs"
	// LevelSamples: every sample is an independent run (Go benchmark -count
	// repetitions), tested by Mann–Whitney as benchstat does.
	LevelSamples Level = "samples"
)

// Defaults of Options.
const (
	DefaultAlpha  = 0.05
	DefaultMargin = 0.02
)

// Options are the decision's parameters; the zero value means the
// defaults.
type Options struct {
	Alpha      float64 // significance level, default 0.05
	Margin     float64 // equivalence margin, relative, default 0.02
	Confidence float64 // level of the reported interval, default 0.95
}

// WithDefaults fills zero or out-of-range fields with the defaults.
func (o Options) WithDefaults() Options {
	if o.Alpha <= 0 || o.Alpha >= 1 {
		o.Alpha = DefaultAlpha
	}
	if o.Margin <= 0 {
		o.Margin = DefaultMargin
	}
	if o.Confidence <= 0 || o.Confidence >= 1 {
		o.Confidence = stats.DefaultConfidence
	}
	return o
}

// Effect is B against A for one metric. Build it with FromRunLevel, Runs,
// Paired or FromSamples; the fields are exported for renderers and JSON.
type Effect struct {
	Better run.Better // which direction of the metric is an improvement
	Level  Level      // runs or samples
	Source stats.DriftSource
	Ka, Kb int // runs a side (samples a side at sample level)
	DF     int // degrees of freedom of the drift estimate (0: none)

	// Ratio is b/a; Lo and Hi bound it at the Confidence level, NaN
	// without a drift estimate.
	Ratio, Lo, Hi float64
	// Linear: the model is on the values (a side has a zero run median):
	// Diff, DiffLo and DiffHi hold b − a and its interval, Base is side a's
	// level. At sample level Diff is the Hodges–Lehmann shift.
	Linear               bool
	Diff, DiffLo, DiffHi float64
	Base                 float64
	// EqLo and EqHi are the 1−2α interval (on the ratio, or on the
	// difference when Linear) the equivalence test uses; NaN when there is
	// none. Equivalent is set directly at sample level.
	EqLo, EqHi float64
	Equiv      bool

	// P is the two-sided p-value of "no change", Holm-adjusted when the
	// effect is one of a family (SetP).
	P float64
	// PAlone is P before the family adjustment and Family the family's
	// size, when SetP adjusted P for a family of two or more (Family 0
	// otherwise).
	PAlone float64
	Family int
	Alpha  float64
	Margin float64
	// Gross is +1 or −1 when, without a drift estimate, the gross-change
	// rule holds (see Gross); 0 otherwise.
	Gross int
	// MinP is the smallest p-value the sample sizes could reach (sample
	// level only).
	MinP float64
	// DriftPct is the typical run-to-run move of this metric, percent
	// (NaN without a drift estimate).
	DriftPct float64
}

// FromRunLevel builds a run-level Effect from the comparison at the
// reporting confidence (rl) and at 1−2α for equivalence (eq; pass rl
// again if none was computed: equivalence is then judged on rl's
// interval).
func FromRunLevel(rl, eq stats.RunLevel, better run.Better, o Options) Effect {
	o = o.WithDefaults()
	e := Effect{Better: better, Level: LevelRuns, Source: rl.Source, Ka: rl.Ka, Kb: rl.Kb, DF: rl.DF,
		Ratio: rl.Ratio, Lo: rl.Lo, Hi: rl.Hi, Linear: rl.Linear, Diff: rl.Diff, DiffLo: rl.DiffLo, DiffHi: rl.DiffHi,
		Base: rl.BaseMean(), P: rl.P, Alpha: o.Alpha, Margin: o.Margin, MinP: math.NaN(), DriftPct: rl.DriftPct,
		EqLo: math.NaN(), EqHi: math.NaN()}
	if !eq.HasInterval() {
		return e
	}
	if eq.Linear {
		e.EqLo, e.EqHi = eq.DiffLo, eq.DiffHi
	} else {
		e.EqLo, e.EqHi = eq.Lo, eq.Hi
	}
	return e
}

// Runs compares the per-run medians a and b (with optional A/A
// calibration groups) on the run-level model.
func Runs(a, b []float64, calibration [][]float64, better run.Better, o Options) Effect {
	o = o.WithDefaults()
	return FromRunLevel(stats.CompareRuns(a, b, calibration, o.Confidence),
		stats.CompareRuns(a, b, calibration, 1-2*o.Alpha), better, o)
}

// Paired compares interleaved blocks: a[i] and b[i] are the run medians of
// the two states in block i.
func Paired(a, b []float64, better run.Better, o Options) Effect {
	o = o.WithDefaults()
	return FromRunLevel(stats.ComparePaired(a, b, o.Confidence),
		stats.ComparePaired(a, b, 1-2*o.Alpha), better, o)
}

// PairedLogs is Paired on the blocks' log-ratios, the spread pooled with
// earlier sessions of the same measurement (stats.ComparePairedLogs).
func PairedLogs(ds []float64, extraSS float64, extraDF int, better run.Better, o Options) Effect {
	o = o.WithDefaults()
	return FromRunLevel(stats.ComparePairedLogs(ds, extraSS, extraDF, o.Confidence),
		stats.ComparePairedLogs(ds, extraSS, extraDF, 1-2*o.Alpha), better, o)
}

// Toward is the direction of one observed ratio b/a judged by better-is:
// +1 an improvement, −1 a regression, 0 none. It decides nothing on its
// own (one block, no interval); bisect counts the blocks a cause improved
// in beside the Verdict of all of them.
func Toward(ratio float64, better run.Better) int {
	s := sign(ratio - 1)
	if better == run.Lower {
		s = -s
	}
	return s
}

// FromSamples compares two samples whose every value is an independent
// run (Go benchmark -count repetitions), as benchstat does: Mann–Whitney
// U, the Hodges–Lehmann shift, TOST on that shift.
func FromSamples(a, b []float64, better run.Better, o Options) Effect {
	o = o.WithDefaults()
	nan := math.NaN()
	e := Effect{Better: better, Level: LevelSamples, Source: stats.DriftRuns, Ka: len(a), Kb: len(b),
		Ratio: nan, Lo: nan, Hi: nan, Linear: true, EqLo: nan, EqHi: nan, Alpha: o.Alpha, Margin: o.Margin,
		MinP: stats.MinPValue(len(a), len(b)), DriftPct: nan}
	mw := stats.MannWhitneyTest(a, b)
	e.P = mw.P
	hl := stats.HodgesLehmannTest(a, b, o.Confidence)
	e.Diff, e.DiffLo, e.DiffHi = hl.Shift, hl.Lo, hl.Hi
	e.Base = stats.Median(a)
	if e.Base != 0 && !math.IsNaN(e.Base) {
		e.Ratio = stats.Median(b) / e.Base
	}
	e.Equiv, _, _ = stats.Equivalent(a, b, o.Margin, o.Alpha)
	return e
}

// FromInterval is a ratio known only by its interval [lo, hi] at the
// rule's confidence (a metric's change divided by the host's own, say):
// the interval is the test, so a change is called when it lies beyond
// ±MinEffect·margin.
func FromInterval(ratio, lo, hi float64, better run.Better, o Options) Effect {
	o = o.WithDefaults()
	nan := math.NaN()
	return Effect{Better: better, Level: LevelRuns, Source: stats.DriftRuns, Ka: 1, Kb: 1, DF: 1,
		Ratio: ratio, Lo: lo, Hi: hi, Diff: nan, DiffLo: nan, DiffHi: nan, EqLo: nan, EqHi: nan,
		P: 0, Alpha: o.Alpha, Margin: o.Margin, MinP: nan, DriftPct: nan}
}

// FromShift is a change between two segments of runs (a change point of
// runs history): the relative shift rel of the later segment with its
// interval [lo, hi] (±Inf when the segments are too short) and the
// test's p. Every point is a run, so it is decided at sample level: p < α
// and the shift's direction.
func FromShift(rel, lo, hi, p float64, better run.Better, o Options) Effect {
	o = o.WithDefaults()
	nan := math.NaN()
	return Effect{Better: better, Level: LevelSamples, Source: stats.DriftRuns, Ka: 1, Kb: 1,
		Ratio: 1 + rel, Lo: nan, Hi: nan, Linear: true, Diff: rel, DiffLo: lo, DiffHi: hi, Base: 1,
		EqLo: nan, EqHi: nan, P: p, Alpha: o.Alpha, Margin: o.Margin, MinP: 0, DriftPct: nan}
}

// SetP replaces the p-value by its family-adjusted value (stats.Holm over
// the P of the family's n effects), keeping the p of the effect alone.
func (e *Effect) SetP(adjusted float64, n int) {
	if n > 1 {
		e.PAlone, e.Family = e.P, n
	}
	e.P = adjusted
}

// HasInterval reports whether the effect has a drift estimate (run level)
// or a test (sample level).
func (e Effect) HasInterval() bool {
	if e.Level == LevelSamples {
		return !math.IsNaN(e.P)
	}
	if e.DF <= 0 {
		return false
	}
	if e.Linear {
		return !math.IsNaN(e.DiffLo)
	}
	return !math.IsNaN(e.Lo)
}

// SetGross applies the gross-change rule to an effect without a drift
// estimate, from the two sides' sample summaries: the ratio at least
// stats.GrossFactor either way with disjoint median intervals, or (for
// counts) one side all zero and the other's interval above it. It sets
// and returns e.Gross.
func (e *Effect) SetGross(a, b stats.Summary) int {
	e.Gross = grossDirection(e.Ratio, e.Linear, a, b)
	return e.Gross
}

func grossDirection(ratio float64, linear bool, a, b stats.Summary) int {
	if !a.HasCI || !b.HasCI {
		return 0
	}
	if linear {
		switch {
		case a.Lo == 0 && a.Hi == 0 && b.Lo > 0:
			return 1
		case b.Lo == 0 && b.Hi == 0 && a.Lo > 0:
			return -1
		}
		return 0
	}
	switch {
	case ratio >= stats.GrossFactor && b.Lo > a.Hi:
		return 1
	case ratio <= 1/stats.GrossFactor && b.Hi < a.Lo:
		return -1
	}
	return 0
}

// Verdict applies the rule of the package doc.
func (e Effect) Verdict() Verdict {
	v, _, _ := e.decide()
	return v
}

// Reason says why an effect is inconclusive ("" otherwise).
func (e Effect) Reason() string {
	_, why, _ := e.decide()
	return why
}

// Need is the runs a side (samples a side at sample level) that could
// settle an inconclusive effect; 0 when it is not inconclusive or no
// count would.
func (e Effect) Need() int {
	_, _, n := e.decide()
	return n
}

// Direction is +1 when the effect calls an increase of the metric, −1 a
// decrease, 0 no change (whatever better-is says).
func (e Effect) Direction() int {
	dir, _, _ := e.direction()
	return dir
}

// IsGross reports whether a change was called by the gross-change rule
// (no drift estimate).
func (e Effect) IsGross() bool {
	dir, gross, _ := e.direction()
	return dir != 0 && gross
}

// direction is the heart of the rule: the called change's sign, whether
// the gross rule called it, and why nothing can be called.
func (e Effect) direction() (dir int, gross bool, why string) {
	if e.Ka == 0 || e.Kb == 0 || (math.IsNaN(e.Ratio) && !e.Linear) {
		return 0, false, "no samples on one side"
	}
	if e.Level == LevelSamples {
		if math.IsNaN(e.P) || !(e.MinP < e.Alpha) {
			return 0, false, fmt.Sprintf("too few results: -count %d or more per side can reach p < %g", stats.SamplesNeeded(e.Alpha), e.Alpha)
		}
		if e.P < e.Alpha {
			return sign(e.Diff, e.Ratio-1), false, ""
		}
		return 0, false, ""
	}
	if !e.HasInterval() {
		if e.Gross != 0 {
			return e.Gross, true, ""
		}
		return 0, false, fmt.Sprintf("one run per side cannot separate host drift from a change smaller than ×%g; --repeat 3 (or a calibration run of the same probe on each host) fixes it", stats.GrossFactor)
	}
	if !(e.P < e.Alpha) {
		if e.heldByFamily() {
			return 0, false, fmt.Sprintf("this metric alone moved (p = %.2g, its interval clear of ±%g%%), but not after Holm's adjustment for the %d metrics compared (p = %.2g); more runs would settle it",
				e.PAlone, 100*stats.MinEffect*e.Margin, e.Family, e.P)
		}
		return 0, false, ""
	}
	return e.beyond(), false, ""
}

// heldByFamily reports whether the effect alone would be called (p < α,
// its interval beyond ±MinEffect·m) but not after the family's Holm
// adjustment.
func (e Effect) heldByFamily() bool {
	return e.Family > 1 && e.PAlone < e.Alpha && !(e.P < e.Alpha) && e.beyond() != 0
}

// familyNeed is the runs a side that would take the effect alone to
// α/Family, Holm's strictest step, if its estimate held: the test
// statistic grows as 1/√(1/ka + 1/kb), so n equal sides need
// n = 2/(1/ka + 1/kb) · (z(α/2F) / z(p/2))², z the normal quantile; at
// least 3, and more than either side has now.
func (e Effect) familyNeed() int {
	za := stats.NormalQuantile(1 - e.Alpha/(2*float64(e.Family)))
	zp := stats.NormalQuantile(1 - e.PAlone/2)
	n := 3
	if zp > 0 && !math.IsInf(zp, 0) {
		n = max(n, int(math.Ceil(2/(1/float64(e.Ka)+1/float64(e.Kb))*(za/zp)*(za/zp))))
	}
	return max(n, e.Ka+1, e.Kb+1)
}

// beyond is the side of ±MinEffect·margin the whole interval lies on: +1
// above, −1 below, 0 neither.
func (e Effect) beyond() int {
	minRel := stats.MinEffect * e.Margin
	if e.Linear {
		m := minRel * math.Abs(e.Base)
		switch {
		case e.DiffLo > m:
			return 1
		case e.DiffHi < -m:
			return -1
		}
		return 0
	}
	switch {
	case e.Lo > 1+minRel:
		return 1
	case e.Hi < 1/(1+minRel):
		return -1
	}
	return 0
}

func sign(xs ...float64) int {
	for _, x := range xs {
		switch {
		case x > 0:
			return 1
		case x < 0:
			return -1
		}
	}
	return 0
}

// Equivalent reports whether the effect was shown to lie within ±Margin:
// the 1−2α interval inside the margin (TOST).
func (e Effect) Equivalent() bool {
	if e.Level == LevelSamples {
		return e.Equiv
	}
	if math.IsNaN(e.EqLo) || math.IsNaN(e.EqHi) || e.DF <= 0 {
		return false
	}
	if e.Linear {
		if e.EqLo == 0 && e.EqHi == 0 {
			return true
		}
		m := e.Margin * math.Abs(e.Base)
		return e.EqLo > -m && e.EqHi < m
	}
	return e.EqLo > 1/(1+e.Margin) && e.EqHi < 1+e.Margin
}

func (e Effect) decide() (Verdict, string, int) {
	dir, _, why := e.direction()
	if why != "" {
		need := 0
		switch {
		case e.Level == LevelSamples:
			need = stats.SamplesNeeded(e.Alpha)
		case e.heldByFamily():
			need = e.familyNeed()
		case e.Ka > 0 && e.Kb > 0:
			need = 3
		}
		return Inconclusive, why, need
	}
	switch {
	case dir > 0 && e.Better == run.Higher, dir < 0 && e.Better == run.Lower:
		return Better, "", 0
	case dir != 0:
		return Worse, "", 0
	}
	if e.Equivalent() {
		return Equivalent, "", 0
	}
	return Same, "", 0
}
