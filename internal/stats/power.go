package stats

import (
	"math"
	"math/rand/v2"
)

// Time to a verdict: a noise model of interleaved blocks fitted to real
// sessions, and the alpha-spending function of the sequential stop.
//
// The model, for one probe metric, on the log scale: block i has a level
// Lᵢ (how fast the host was during the block) that drifts as an AR(1)
// process, Lᵢ = φ·Lᵢ₋₁ + ηᵢ, and the two states' block medians scatter
// around it: ln aᵢ = Lᵢ − dᵢ/2, ln bᵢ = Lᵢ + dᵢ/2 + ln(ratio). The paired
// log-ratio dᵢ carries what the drift does not cancel: its spread, its own
// lag-1 autocorrelation ρ, and its shape, kept as the standardised
// residuals of the real sessions and resampled (no normality assumed).

// BlockNoise is the noise model of interleaved blocks for one metric.
type BlockNoise struct {
	Blocks   int     // blocks it was fitted on
	Phi      float64 // lag-1 autocorrelation of the block level (drift)
	LevelSD  float64 // sd of the block level, log scale
	DriftSD  float64 // sd of the level's innovations ηᵢ, LevelSD·√(1−φ²)
	PairedSD float64 // sd of dᵢ = ln bᵢ − ln aᵢ, what the paired test sees
	WithinSD float64 // PairedSD/√2: one state's scatter around its block's level
	Rho      float64 // lag-1 autocorrelation of dᵢ (0 when the drift cancels)
	// Resid are the standardised (dᵢ − d̄)/PairedSD, the shape Draw
	// resamples.
	Resid []float64
}

// FitBlockNoise fits the model to an A/A session: a[i] and b[i] are the
// two states' run medians in block i, in block order. Blocks with a
// missing or non-positive value are left out; fewer than 4 usable blocks
// give a zero model (Blocks < 4).
func FitBlockNoise(a, b []float64) BlockNoise {
	var lv, ds []float64
	for i := range min(len(a), len(b)) {
		if a[i] > 0 && b[i] > 0 && !math.IsInf(a[i], 0) && !math.IsInf(b[i], 0) {
			la, lb := math.Log(a[i]), math.Log(b[i])
			lv = append(lv, (la+lb)/2)
			ds = append(ds, lb-la)
		}
	}
	m := BlockNoise{Blocks: len(ds)}
	if len(ds) < 4 {
		return m
	}
	m.LevelSD = sd(lv)
	m.Phi = clamp(lag1(lv), -0.95, 0.95)
	m.DriftSD = m.LevelSD * math.Sqrt(1-m.Phi*m.Phi)
	m.PairedSD = sd(ds)
	m.WithinSD = m.PairedSD / math.Sqrt2
	m.Rho = clamp(lag1(ds), -0.9, 0.9)
	d := Mean(ds)
	for _, x := range ds {
		if m.PairedSD > 0 {
			m.Resid = append(m.Resid, (x-d)/m.PairedSD)
		}
	}
	return m
}

// Draw simulates n blocks of a session whose second state is ratio times
// the first (1: an A/A session), around the level base.
func (m BlockNoise) Draw(rng *rand.Rand, n int, base, ratio float64) (a, b []float64) {
	a, b = make([]float64, n), make([]float64, n)
	level := m.LevelSD * rng.NormFloat64()
	innov := math.Sqrt(1 - m.Rho*m.Rho)
	var dPrev float64
	for i := range n {
		if i > 0 {
			level = m.Phi*level + m.DriftSD*rng.NormFloat64()
		}
		r := rng.NormFloat64()
		if len(m.Resid) > 0 {
			r = m.Resid[rng.IntN(len(m.Resid))]
		}
		d := m.PairedSD * r
		if i > 0 {
			d = m.Rho*dPrev + innov*d
		}
		dPrev = d
		lb := math.Log(base) + level
		a[i] = math.Exp(lb - d/2)
		b[i] = math.Exp(lb+d/2) * ratio
	}
	return a, b
}

// SpendPocock is the Lan–DeMets Pocock-type alpha-spending function: the
// share of alpha a sequential test may have spent by the fraction t of its
// maximum time, α·ln(1 + (e−1)·t). It spends early, which suits a stop
// meant to come as soon as the data allow.
func SpendPocock(alpha, t float64) float64 {
	t = clamp(t, 0, 1)
	return alpha * math.Log(1+(math.E-1)*t)
}

func sd(xs []float64) float64 {
	if len(xs) < 2 {
		return 0
	}
	return math.Sqrt(sumSq(xs, Mean(xs)) / float64(len(xs)-1))
}

// lag1 is the lag-1 autocorrelation of a series (0 without spread).
func lag1(xs []float64) float64 {
	m := Mean(xs)
	var num, den float64
	for i, x := range xs {
		den += (x - m) * (x - m)
		if i > 0 {
			num += (x - m) * (xs[i-1] - m)
		}
	}
	if den == 0 {
		return 0
	}
	return num / den
}

func clamp(x, lo, hi float64) float64 { return math.Max(lo, math.Min(hi, x)) }
