package changepoint

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

func noise(r *rand.Rand, n int, mean, sd float64) []float64 {
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = mean + sd*r.NormFloat64()
	}
	return xs
}

func TestOneStepFoundAtItsIndex(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	exact, extra, covered := 0, 0, 0
	const trials = 100
	for i := 0; i < trials; i++ {
		// 20 runs at 100 ± 2, then 20 at 90 ± 2: a 10% slowdown, 5 σ.
		xs := append(noise(r, 20, 100, 2), noise(r, 20, 90, 2)...)
		pts := Detect(xs, Options{})
		var step *Point
		for j := range pts {
			if d := pts[j].Index - 20; d >= -1 && d <= 1 {
				step = &pts[j]
			}
		}
		if step == nil {
			t.Errorf("trial %d: step at 20 missed: %+v", i, pts)
			continue
		}
		extra += len(pts) - 1
		if step.Index == 20 {
			exact++
		}
		if c := step.Change; c > -0.07 || c < -0.13 || step.ChangeLo > c || step.ChangeHi < c {
			t.Errorf("trial %d: change %.3f [%.3f, %.3f], want about -0.10 inside its interval", i, c, step.ChangeLo, step.ChangeHi)
		}
		if step.ChangeLo <= -0.1 && step.ChangeHi >= -0.1 {
			covered++
		}
	}
	// Each side of the step is tested again at alpha 1%, so about 2
	// spurious points in 100 trials are expected.
	t.Logf("exact index in %d of %d trials; %d spurious points; 95%% interval covers -10%% in %d", exact, trials, extra, covered)
	// The interval is relative to the estimated median before, not the
	// true 100, so its coverage of -10% is a little under 95%.
	if covered < 85 {
		t.Errorf("the 95%% interval covers the true change in only %d of %d trials", covered, trials)
	}
	if exact < 95 || extra > 5 {
		t.Errorf("exact index in %d of %d trials (want ≥ 95), %d spurious points (want ≤ 5)", exact, trials, extra)
	}
}

func TestFlatSeriesFalsePositiveRate(t *testing.T) {
	for _, c := range []struct {
		name string
		gen  func(r *rand.Rand) []float64
	}{
		{"normal", func(r *rand.Rand) []float64 { return noise(r, 30, 100, 3) }},
		{"lognormal", func(r *rand.Rand) []float64 {
			xs := noise(r, 30, 0, 0.3)
			for i := range xs {
				xs[i] = 100 * math.Exp(xs[i])
			}
			return xs
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(7, 11))
			const trials = 400
			fp := 0
			for i := 0; i < trials; i++ {
				if len(Detect(c.gen(r), Options{})) > 0 {
					fp++
				}
			}
			rate := float64(fp) / trials
			t.Logf("%s: false-positive rate %.2f%% (%d of %d flat series)", c.name, 100*rate, fp, trials)
			if rate > 0.025 {
				t.Errorf("false-positive rate %.1f%%, want ≤ 2.5%% at alpha 1%%", 100*rate)
			}
		})
	}
}

func TestTwoSteps(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	xs := append(append(noise(r, 15, 100, 1), noise(r, 15, 120, 1)...), noise(r, 15, 100, 1)...)
	pts := Detect(xs, Options{})
	if len(pts) != 2 || pts[0].Index != 15 || pts[1].Index != 30 {
		t.Fatalf("change points %+v, want at 15 and 30", pts)
	}
	if pts[0].Change < 0.15 || pts[1].Change > -0.12 {
		t.Errorf("magnitudes %+v, want about +20%% then -17%%", pts)
	}
}

func TestMinSegment(t *testing.T) {
	// A step three runs before the end cannot be found with segments of
	// at least 4 runs on each side, and is found with 3.
	xs := []float64{10, 10.1, 9.9, 10, 10.2, 9.8, 10, 10.1, 9.9, 10, 10.1, 9.9, 20, 20.1, 19.9}
	if pts := Detect(xs, Options{MinSegment: 4}); len(pts) != 0 && pts[0].Index > len(xs)-4 {
		t.Errorf("point closer to the end than MinSegment: %+v", pts)
	}
	pts := Detect(xs, Options{MinSegment: 3})
	if len(pts) != 1 || pts[0].Index != 12 {
		t.Errorf("min segment 3: %+v, want one point at 12", pts)
	}
}

func TestEdgeCases(t *testing.T) {
	if pts := Detect([]float64{1, 2, 3}, Options{}); pts != nil {
		t.Errorf("short series: %+v", pts)
	}
	xs := []float64{1, 1, 1, 1, 1, 5, 5, 5, 5, math.NaN()}
	if pts := Detect(xs, Options{}); pts != nil {
		t.Errorf("series with NaN: %+v", pts)
	}
	if pts := Detect(make([]float64, 20), Options{}); len(pts) != 0 {
		t.Errorf("constant series: %+v", pts)
	}
	r := rand.New(rand.NewPCG(5, 6))
	ys := append(noise(r, 12, 50, 1), noise(r, 12, 0, 1)...)
	a, b := Detect(ys, Options{}), Detect(ys, Options{})
	if !reflect.DeepEqual(a, b) || len(a) != 1 {
		t.Errorf("not deterministic or missed: %+v vs %+v", a, b)
	}
	if !math.IsNaN(a[0].Change) && a[0].Before == 0 {
		t.Errorf("change from a zero median must be NaN: %+v", a[0])
	}
}

// TestBestSplitMatchesDefinition checks the running-sum search against Q̂
// computed straight from its definition.
func TestBestSplitMatchesDefinition(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	for trial := 0; trial < 50; trial++ {
		z := noise(r, 6+r.IntN(10), 0, 1)
		m := 2 + r.IntN(2)
		var buf []float64
		tau, kappa, q, ok := bestSplit(z, m, &buf)
		if !ok {
			t.Fatal("no split")
		}
		bt, bk, bq := naiveBest(z, m)
		if tau != bt || kappa != bk || math.Abs(q-bq) > 1e-9*math.Max(1, math.Abs(bq)) {
			t.Fatalf("z=%v m=%d: got (%d,%d,%g), want (%d,%d,%g)", z, m, tau, kappa, q, bt, bk, bq)
		}
	}
}

func naiveBest(z []float64, m int) (int, int, float64) {
	bt, bk, bq := 0, 0, math.Inf(-1)
	for t := m; t <= len(z)-m; t++ {
		for k := t + m; k <= len(z); k++ {
			x, y := z[:t], z[t:k]
			var between, wx, wy float64
			for _, a := range x {
				for _, b := range y {
					between += math.Abs(a - b)
				}
			}
			for i := range x {
				for j := i + 1; j < len(x); j++ {
					wx += math.Abs(x[i] - x[j])
				}
			}
			for i := range y {
				for j := i + 1; j < len(y); j++ {
					wy += math.Abs(y[i] - y[j])
				}
			}
			n, mm := float64(len(x)), float64(len(y))
			e := 2*between/(n*mm) - wx/(n*(n-1)/2) - wy/(mm*(mm-1)/2)
			if q := n * mm / (n + mm) * e; q > bq {
				bt, bk, bq = t, k, q
			}
		}
	}
	return bt, bk, bq
}

func TestJSONWithoutInterval(t *testing.T) {
	// Segments of 2 are too short for a 95% interval, and a median of 0
	// before has no relative change: both must still encode.
	pts := Detect([]float64{0, 0, 0, 0, 0, 0, 9, 9, 9, 9, 9, 9}, Options{MinSegment: 2})
	if len(pts) != 1 {
		t.Fatalf("points %+v", pts)
	}
	b, err := json.Marshal(pts)
	if err != nil || !strings.Contains(string(b), `"change":null`) {
		t.Errorf("json %s, %v", b, err)
	}
}
