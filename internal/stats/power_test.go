package stats

import (
	"math"
	"math/rand/v2"
	"testing"
)

// Draw and FitBlockNoise are inverses up to sampling error: a long session
// drawn from a model with drift φ = 0.7 and a 2% paired spread fits back
// to about those values, and an effect shows in the paired mean.
func TestBlockNoiseRoundTrip(t *testing.T) {
	m := BlockNoise{Phi: 0.7, LevelSD: 0.05, PairedSD: 0.02}
	m.DriftSD = m.LevelSD * math.Sqrt(1-m.Phi*m.Phi)
	rng := rand.New(rand.NewPCG(1, 2))
	a, b := m.Draw(rng, 4000, 1000, 1)
	f := FitBlockNoise(a, b)
	if f.Blocks != 4000 || math.Abs(f.Phi-0.7) > 0.05 || math.Abs(f.PairedSD-0.02) > 0.002 || math.Abs(f.Rho) > 0.05 {
		t.Errorf("fit %+v, want φ 0.7, paired sd 0.02, ρ 0", f)
	}
	if math.Abs(f.WithinSD-f.PairedSD/math.Sqrt2) > 1e-12 || len(f.Resid) != 4000 {
		t.Errorf("within %v, %d residuals", f.WithinSD, len(f.Resid))
	}
	// Resampling the fitted residuals keeps the spread; a ratio moves b.
	a2, b2 := f.Draw(rng, 4000, 1000, 0.98)
	var d float64
	for i := range a2 {
		d += math.Log(b2[i] / a2[i])
	}
	if d /= 4000; math.Abs(d-math.Log(0.98)) > 0.002 {
		t.Errorf("mean log ratio %v, want ln 0.98", d)
	}
	if g := FitBlockNoise(a2, b2); math.Abs(g.PairedSD-f.PairedSD) > 0.002 {
		t.Errorf("resampled paired sd %v, fitted %v", g.PairedSD, f.PairedSD)
	}
	if z := FitBlockNoise([]float64{1, 2, 3}, []float64{1, 2, 3}); z.Blocks != 3 || z.PairedSD != 0 {
		t.Errorf("3 blocks: %+v, want an empty model", z)
	}
}

func TestSpendPocock(t *testing.T) {
	if SpendPocock(0.05, 0) != 0 || math.Abs(SpendPocock(0.05, 1)-0.05) > 1e-15 || SpendPocock(0.05, 2) != SpendPocock(0.05, 1) {
		t.Error("spending must run from 0 at t=0 to alpha at t=1 and stay there")
	}
	prev := 0.0
	for t0 := 0.1; t0 <= 1; t0 += 0.1 {
		s := SpendPocock(0.05, t0)
		if s <= prev || s < 0.05*t0 {
			t.Errorf("α(%.1f) = %v: not increasing, or below linear spending", t0, s)
		}
		prev = s
	}
}
