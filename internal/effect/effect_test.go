package effect

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/run"
	"github.com/perflab/perflab/internal/stats"
)

func TestVerdictRule(t *testing.T) {
	cases := []struct {
		name   string
		a, b   []float64
		cal    [][]float64
		better run.Better
		want   Verdict
	}{
		{"10% faster, tight runs", []float64{100, 101, 99}, []float64{110, 111, 109}, nil, run.Higher, Better},
		{"10% faster, lower is better", []float64{100, 101, 99}, []float64{110, 111, 109}, nil, run.Lower, Worse},
		{"identical", []float64{100, 100, 100}, []float64{100, 100, 100}, nil, run.Higher, Equivalent},
		{"noisy runs hide 10%", []float64{80, 120, 100}, []float64{90, 130, 110}, nil, run.Higher, Same},
		{"0.5% below the minimum effect", []float64{1000, 1000.1, 999.9}, []float64{1005, 1005.1, 1004.9}, nil, run.Higher, Equivalent},
		{"one run a side, no history", []float64{100}, []float64{130}, nil, run.Higher, Inconclusive},
		{"one run a side, calibrated", []float64{100}, []float64{130}, [][]float64{{100, 101, 99, 100}}, run.Higher, Better},
		{"no runs on a side", nil, []float64{1}, nil, run.Higher, Inconclusive},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := Runs(c.a, c.b, c.cal, c.better, Options{})
			if got := e.Verdict(); got != c.want {
				t.Fatalf("verdict %s, want %s (ratio %.4f [%.4f, %.4f] p %.3g)", got, c.want, e.Ratio, e.Lo, e.Hi, e.P)
			}
			if (e.Verdict() == Inconclusive) != (e.Reason() != "") {
				t.Errorf("reason %q for verdict %s", e.Reason(), e.Verdict())
			}
		})
	}
}

func TestGrossRuleOneRunASide(t *testing.T) {
	sa := stats.Summarize([]float64{10, 10.5, 9.5, 10.2, 9.8, 10.1})
	sb := stats.Summarize([]float64{50, 52, 49, 51, 50.5, 49.5})
	e := Runs([]float64{sa.Median}, []float64{sb.Median}, nil, run.Lower, Options{})
	if e.Verdict() != Inconclusive {
		t.Fatalf("without the gross rule: %s", e.Verdict())
	}
	if e.SetGross(sa, sb) != 1 || e.Verdict() != Worse || !e.IsGross() {
		t.Fatalf("×5 slower with disjoint intervals: gross %d verdict %s", e.Gross, e.Verdict())
	}
	sc := stats.Summarize([]float64{30, 31, 29, 30.5, 29.5, 30})
	e = Runs([]float64{sa.Median}, []float64{sc.Median}, nil, run.Lower, Options{})
	if e.SetGross(sa, sc) != 0 || e.Verdict() != Inconclusive || e.Need() != 3 {
		t.Fatalf("×3 is below the gross factor: %s need %d", e.Verdict(), e.Need())
	}
}

func TestHolmAdjustedPDecides(t *testing.T) {
	e := Runs([]float64{100, 102, 99}, []float64{106, 108, 104.5}, nil, run.Higher, Options{})
	if e.Verdict() != Better {
		t.Fatalf("unadjusted: %s p=%g", e.Verdict(), e.P)
	}
	e.SetP(math.Min(1, e.P*40), 40)
	if e.Verdict() == Better || e.Verdict() == Worse {
		t.Fatalf("adjusted p %g still calls %s", e.P, e.Verdict())
	}
	// Its interval alone is clear of the margin: "same" would contradict
	// the interval the user sees beside it, so the verdict says it cannot
	// tell, and why.
	if e.Verdict() != Inconclusive || !strings.Contains(e.Reason(), "Holm") || !strings.Contains(e.Reason(), "40 metrics") || e.Need() == 0 {
		t.Fatalf("adjusted away with the interval clear: %s need %d %q", e.Verdict(), e.Need(), e.Reason())
	}
	// A family of one is the effect alone.
	one := Runs([]float64{100, 102, 99}, []float64{106, 108, 104.5}, nil, run.Higher, Options{})
	one.SetP(one.P, 1)
	if one.Verdict() != Better || one.Family != 0 {
		t.Fatalf("family of one: %s family %d", one.Verdict(), one.Family)
	}
	// Not moved alone either: plain "same", no reason.
	flat := Runs([]float64{100, 102, 99}, []float64{101, 99.5, 102}, nil, run.Higher, Options{})
	flat.SetP(math.Min(1, flat.P*3), 3)
	if flat.Verdict() == Inconclusive || flat.Reason() != "" {
		t.Fatalf("an effect not shown alone: %s %q", flat.Verdict(), flat.Reason())
	}
}

func TestLinearCounts(t *testing.T) {
	e := Runs([]float64{0, 0, 0}, []float64{5, 6, 5}, nil, run.Lower, Options{})
	if !e.Linear || e.Verdict() != Worse {
		t.Fatalf("errors from 0 to 5: linear %v verdict %s", e.Linear, e.Verdict())
	}
	e = Runs([]float64{0, 0, 0}, []float64{0, 0, 0}, nil, run.Lower, Options{})
	if e.Verdict() != Equivalent {
		t.Fatalf("zero against zero: %s", e.Verdict())
	}
}

func TestSampleLevel(t *testing.T) {
	a := []float64{100, 101, 99, 100.5, 99.5, 100.2, 99.8, 100.1, 99.9, 100}
	b := []float64{90, 91, 89, 90.5, 89.5, 90.2, 89.8, 90.1, 89.9, 90}
	if v := FromSamples(a, b, run.Lower, Options{}).Verdict(); v != Better {
		t.Fatalf("ns/op 10%% down: %s", v)
	}
	if e := FromSamples(a[:2], b[:2], run.Lower, Options{}); e.Verdict() != Inconclusive || e.Need() == 0 {
		t.Fatalf("two a side cannot reach p<0.05: %s need %d", e.Verdict(), e.Need())
	}
}

func TestPairedBlocks(t *testing.T) {
	// Drift common to both states cancels: the host moves ±20% between
	// blocks, the state is 5% faster in every one.
	var a, b []float64
	for _, h := range []float64{1, 1.2, 0.8, 1.1, 0.9, 1.15} {
		a, b = append(a, 100*h), append(b, 105*h*(1+0.002*h))
	}
	e := Paired(a, b, run.Higher, Options{})
	if e.Source != stats.DriftBlocks || e.Verdict() != Better {
		t.Fatalf("paired 5%%: %s from %s [%g, %g]", e.Verdict(), e.Source, e.Lo, e.Hi)
	}
}

// An A/A pair must not be called a change more often than α: simulated
// runs with 10% log-normal drift, three a side.
func TestAAFalsePositives(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	const trials = 4000
	calls := 0
	for range trials {
		var a, b []float64
		for range 3 {
			a = append(a, 100*math.Exp(0.1*rng.NormFloat64()))
			b = append(b, 100*math.Exp(0.1*rng.NormFloat64()))
		}
		if Runs(a, b, nil, run.Higher, Options{}).Verdict().Changed() {
			calls++
		}
	}
	// Binomial(4000, 0.05): mean 200, sd 14; the rule's minimum effect
	// keeps it below α, so 260 (4 sd above α) never passes by chance.
	if calls > 260 {
		t.Fatalf("%d of %d A/A pairs called a change (α = 5%%)", calls, trials)
	}
}
