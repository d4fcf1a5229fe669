package stats

import (
	"math"
	"math/rand/v2"
	"testing"
)

func near(a, b, tol float64) bool {
	if math.IsInf(a, 0) || math.IsInf(b, 0) || math.IsNaN(a) || math.IsNaN(b) {
		return a == b || (math.IsNaN(a) && math.IsNaN(b))
	}
	return math.Abs(a-b) <= tol*math.Max(1, math.Max(math.Abs(a), math.Abs(b)))
}

func seq(lo, n int) []float64 {
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = float64(lo + i)
	}
	return xs
}

// Published order-statistic intervals for the median (Conover, Practical
// Nonparametric Statistics, table of binomial CIs; Hollander & Wolfe).
func TestMedianCIPublished(t *testing.T) {
	cases := []struct {
		n        int
		conf     float64
		lo, hi   int // 1-based order statistics, 0 = none
		coverage float64
	}{
		{5, 0.95, 0, 0, 0},
		{6, 0.95, 1, 6, 0.96875},
		{10, 0.95, 2, 9, 0.978515625},
		{20, 0.95, 6, 15, 0.958610535},
		{8, 0.99, 1, 8, 0.9921875},
		{7, 0.99, 0, 0, 0},
	}
	for _, c := range cases {
		xs := seq(1, c.n)
		// Shuffle: the function must not rely on sorted input.
		rand.New(rand.NewPCG(1, uint64(c.n))).Shuffle(len(xs), func(i, j int) { xs[i], xs[j] = xs[j], xs[i] })
		lo, hi, ok := MedianCI(xs, c.conf)
		if c.lo == 0 {
			if ok || !(math.IsInf(lo, -1) || math.IsInf(hi, 1)) {
				t.Errorf("n=%d conf=%v: got [%v,%v] ok=%v, want no interval", c.n, c.conf, lo, hi, ok)
			}
		} else if !ok || lo != float64(c.lo) || hi != float64(c.hi) {
			t.Errorf("n=%d conf=%v: got [%v,%v] ok=%v, want [x(%d), x(%d)]", c.n, c.conf, lo, hi, ok, c.lo, c.hi)
		}
		s := SummarizeConf(xs, c.conf)
		if c.lo != 0 && !near(s.Confidence, c.coverage, 1e-8) {
			t.Errorf("n=%d: coverage %v, want %v", c.n, s.Confidence, c.coverage)
		}
	}
	if got := MedianCISamples(0.95); got != 6 {
		t.Errorf("MedianCISamples(0.95) = %d, want 6", got)
	}
	if got := MedianCISamples(0.99); got != 8 {
		t.Errorf("MedianCISamples(0.99) = %d, want 8", got)
	}
}

// The greedy interval must still be valid for large n, where C(n,k)
// overflows: coverage ≥ conf and the interval roughly n/2 ± 1.96·√n/2.
func TestMedianCILargeN(t *testing.T) {
	for _, n := range []int{31, 100, 1001, 20000} {
		l, r, cov := medianCIOrders(n, 0.95)
		if cov < 0.95 || cov > 0.98 {
			t.Errorf("n=%d coverage %v", n, cov)
		}
		half := 1.96 * math.Sqrt(float64(n)) / 2
		if math.Abs(float64(l)-(float64(n)/2-half)) > 2 || math.Abs(float64(r)-(float64(n)/2+half)) > 3 {
			t.Errorf("n=%d: orders [%d,%d], want about %.1f±%.1f", n, l, r, float64(n)/2, half)
		}
	}
}

func TestSummarize(t *testing.T) {
	s := Summarize([]float64{4, 1, 3, 2})
	if s.N != 4 || s.Median != 2.5 || s.Min != 1 || s.Max != 4 || s.Mean != 2.5 || s.HasCI {
		t.Errorf("Summarize = %+v", s)
	}
	// sd of 1..4 is √(5/3).
	if !near(s.CV, math.Sqrt(5.0/3)/2.5, 1e-12) {
		t.Errorf("CV = %v", s.CV)
	}
	if e := Summarize(nil); e.N != 0 || !math.IsNaN(e.Median) {
		t.Errorf("empty: %+v", e)
	}
	one := Summarize([]float64{7})
	if one.Median != 7 || !math.IsNaN(one.CV) || one.HasCI {
		t.Errorf("n=1: %+v", one)
	}
	z := Summarize([]float64{-1, 0, 1})
	if z.Median != 0 || !math.IsNaN(z.CV) {
		t.Errorf("zero mean: %+v", z)
	}
}

func TestRelCIHalfWidth(t *testing.T) {
	xs := []float64{100, 101, 99, 100, 102, 98, 100, 100, 101, 99}
	// n=10: CI [x(2), x(9)] = [99, 101], median 100 → 1%.
	if got := RelCIHalfWidth(xs, 0.95); !near(got, 0.01, 1e-12) {
		t.Errorf("RelCIHalfWidth = %v, want 0.01", got)
	}
	if got := RelCIHalfWidth(xs[:3], 0.95); !math.IsInf(got, 1) {
		t.Errorf("n=3: %v, want +Inf", got)
	}
	// A zero median with spread: relative width is undefined.
	if got := RelCIHalfWidth([]float64{-1, 0, 0, 0, 0, 1}, 0.95); !math.IsInf(got, 1) {
		t.Errorf("zero median: %v, want +Inf", got)
	}
	if got := RelCIHalfWidth([]float64{0, 0, 0, 0, 0, 0}, 0.95); got != 0 {
		t.Errorf("all zero: %v, want 0", got)
	}
}

// Critical values of U (two-sided α = 0.05) from the published
// Mann–Whitney tables: P(U ≤ c) ≤ 0.025 < P(U ≤ c+1).
func TestMannWhitneyCriticalTable(t *testing.T) {
	table := map[[2]int]int{
		{3, 5}: 0, {3, 8}: 2, {4, 4}: 0, {4, 6}: 2, {4, 10}: 5,
		{5, 5}: 2, {5, 8}: 6, {5, 10}: 8, {6, 6}: 5, {6, 9}: 10,
		{7, 7}: 8, {7, 10}: 14, {8, 8}: 13, {9, 9}: 17, {10, 10}: 23,
		{20, 20}: 127,
	}
	for nn, c := range table {
		n1, n2 := nn[0], nn[1]
		// Build samples with U = c and U = c+1 and check the test's
		// decision flips exactly there.
		for _, u := range []int{c, c + 1} {
			a, b := samplesWithU(n1, n2, u)
			gotU, p := MannWhitney(a, b)
			if gotU != float64(u) {
				t.Fatalf("%v: built U=%d, test says %v", nn, u, gotU)
			}
			if sig := p <= 0.05; sig != (u == c) {
				t.Errorf("n=%v U=%d: p=%.5f, critical value is %d", nn, u, p, c)
			}
		}
	}
}

// samplesWithU returns samples of sizes n1, n2 without ties where exactly u
// pairs have a > b: b = 0..n2−1, a placed just above chosen b values.
func samplesWithU(n1, n2, u int) (a, b []float64) {
	b = seq(0, n2)
	for i := 0; i < n1; i++ {
		above := min(u, n2) // a value above `above` of the b values
		u -= above
		a = append(a, float64(above)-0.5+float64(i+1)/float64(4*n1+4))
	}
	return a, b
}

// Complete separation has p = 2/C(n1+n2, n1) exactly.
func TestMannWhitneySeparated(t *testing.T) {
	for n1 := 1; n1 <= 12; n1++ {
		for n2 := 1; n2 <= 12; n2++ {
			_, p := MannWhitney(seq(0, n1), seq(100, n2))
			want := math.Min(1, 2/math.Exp(lchoose(n1+n2, n1)))
			if !near(p, want, 1e-9) {
				t.Errorf("%d+%d: p=%v want %v", n1, n2, p, want)
			}
			if !near(MinPValue(n1, n2), want, 1e-9) {
				t.Errorf("MinPValue(%d,%d)=%v want %v", n1, n2, MinPValue(n1, n2), want)
			}
		}
	}
	// Two of three per side can never reach 0.05.
	if !near(MinPValue(3, 3), 0.1, 1e-12) || SamplesNeeded(0.05) != 4 {
		t.Errorf("MinPValue(3,3)=%v SamplesNeeded=%d", MinPValue(3, 3), SamplesNeeded(0.05))
	}
}

// bruteP enumerates every split of the pooled values into groups of n1 and
// n2 and counts those whose U is at least as extreme: the definition of the
// exact permutation p-value, ties included.
func bruteP(a, b []float64) float64 {
	pool := append(append([]float64(nil), a...), b...)
	n1, n := len(a), len(pool)
	uOf := func(mask int) float64 {
		var u float64
		for i := 0; i < n; i++ {
			if mask&(1<<i) == 0 {
				continue
			}
			for j := 0; j < n; j++ {
				if mask&(1<<j) != 0 {
					continue
				}
				switch {
				case pool[i] > pool[j]:
					u++
				case pool[i] == pool[j]:
					u += 0.5
				}
			}
		}
		return u
	}
	obs := uOf(1<<n1 - 1)
	centre := float64(n1*(n-n1)) / 2
	dev := math.Abs(obs - centre)
	if dev == 0 {
		return 1
	}
	var total, extreme float64
	for mask := 0; mask < 1<<n; mask++ {
		if popcount(mask) != n1 {
			continue
		}
		total++
		if u := uOf(mask); u <= centre-dev+1e-9 {
			extreme++
		}
	}
	return math.Min(1, 2*extreme/total)
}

func popcount(x int) int {
	c := 0
	for ; x != 0; x &= x - 1 {
		c++
	}
	return c
}

func TestMannWhitneyExactWithTies(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for iter := 0; iter < 60; iter++ {
		n1, n2 := 1+rng.IntN(7), 1+rng.IntN(7)
		a, b := make([]float64, n1), make([]float64, n2)
		for i := range a {
			a[i] = float64(rng.IntN(4))
		}
		for i := range b {
			b[i] = float64(rng.IntN(4) + rng.IntN(2))
		}
		r := MannWhitneyTest(a, b)
		if want := bruteP(a, b); !near(r.P, want, 1e-9) {
			t.Errorf("a=%v b=%v: p=%v, enumeration gives %v", a, b, r.P, want)
		}
		if !r.Exact {
			t.Errorf("small samples must use the exact distribution")
		}
	}
}

func TestMannWhitneyEdgeCases(t *testing.T) {
	if u, p := MannWhitney([]float64{5, 5, 5}, []float64{5, 5}); p != 1 || u != 3 {
		t.Errorf("identical values: u=%v p=%v", u, p)
	}
	a := []float64{1.2, 3.4, 2.2, 5.1}
	if _, p := MannWhitney(a, a); p != 1 {
		t.Errorf("identical samples: p=%v", p)
	}
	if _, p := MannWhitney(nil, a); !math.IsNaN(p) {
		t.Errorf("empty sample: p=%v, want NaN", p)
	}
	// Symmetric: swapping the samples mirrors U and keeps p.
	b := []float64{2.5, 6, 7, 4.4, 8}
	u1, p1 := MannWhitney(a, b)
	u2, p2 := MannWhitney(b, a)
	if u1+u2 != 20 || p1 != p2 {
		t.Errorf("swap: U %v+%v, p %v vs %v", u1, u2, p1, p2)
	}
}

// The normal approximation for large samples: compared with a hand
// computation of the textbook formula for fully separated samples.
func TestMannWhitneyNormal(t *testing.T) {
	a, b := seq(0, 60), seq(30, 60) // overlap of 30 values, ties in the middle
	r := MannWhitneyTest(a, b)
	if r.Exact || !r.Ties {
		t.Fatalf("want the normal approximation with ties: %+v", r)
	}
	// U: a's 0..29 beat nothing, 30..59 tie once each (½) and beat
	// 30..k−1: Σ_{k=30}^{59} (k−30) + 30·½ = 435 + 15 = 450.
	if r.U != 450 {
		t.Fatalf("U=%v want 450", r.U)
	}
	// 30 tie groups of size 2: Σ(t³−t) = 30·6 = 180, N = 120.
	sigma := math.Sqrt(3600.0 / 12 * (121 - 180.0/(120*119)))
	z := (450 - 1800 + 0.5) / sigma
	want := 2 * NormalCDF(z)
	if !near(r.P, want, 1e-12) {
		t.Errorf("p=%v want %v", r.P, want)
	}
}

func TestHodgesLehmann(t *testing.T) {
	a := []float64{1, 2, 3, 4, 5}
	b := []float64{11, 12, 13, 14, 15}
	shift, lo, hi := HodgesLehmann(a, b, 0.95)
	if shift != 10 {
		t.Errorf("shift=%v want 10", shift)
	}
	// m = n = 5 at 95%: k = 3 (Hollander & Wolfe), so [D(3), D(23)] of the
	// 25 differences 6..14 with multiplicities 1,2,3,4,5,4,3,2,1: D(3) = 7,
	// D(23) = 13.
	if lo != 7 || hi != 13 {
		t.Errorf("CI [%v,%v] want [7,13]", lo, hi)
	}
	if k, _ := hlOrder(5, 5, 0.95); k != 3 {
		t.Errorf("k=%d want 3", k)
	}
	// Too few samples for 95%: no interval.
	if _, lo, hi := HodgesLehmann([]float64{1, 2}, []float64{3, 4}, 0.95); !math.IsInf(lo, -1) || !math.IsInf(hi, 1) {
		t.Errorf("n=2: [%v,%v]", lo, hi)
	}
}

// The HL interval inverts the Mann–Whitney test: shifting a by a value
// inside the interval keeps p above α, outside it brings p to ≤ α.
func TestHodgesLehmannInvertsTest(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for iter := 0; iter < 30; iter++ {
		n1, n2 := 5+rng.IntN(10), 5+rng.IntN(10)
		a, b := make([]float64, n1), make([]float64, n2)
		for i := range a {
			a[i] = rng.NormFloat64()
		}
		for i := range b {
			b[i] = rng.NormFloat64() + 1
		}
		r := HodgesLehmannTest(a, b, 0.95)
		alpha := 1 - r.Confidence
		shifted := func(d float64) float64 {
			as := make([]float64, n1)
			for i, x := range a {
				as[i] = x + d
			}
			_, p := MannWhitney(as, b)
			return p
		}
		const eps = 1e-9
		if p := shifted(r.Lo + eps); p <= alpha+1e-12 {
			t.Errorf("just inside lo: p=%v ≤ %v", p, alpha)
		}
		if p := shifted(r.Lo - eps); p > alpha+1e-12 {
			t.Errorf("just outside lo: p=%v > %v", p, alpha)
		}
		if p := shifted(r.Hi + eps); p > alpha+1e-12 {
			t.Errorf("just outside hi: p=%v > %v", p, alpha)
		}
	}
}

func TestHolm(t *testing.T) {
	// By hand: sorted 0.005·4 = 0.02, 0.01·3 = 0.03, 0.03·2 = 0.06,
	// 0.04·1 = 0.04 → raised to 0.06 by monotonicity.
	got := Holm([]float64{0.01, 0.04, 0.03, 0.005})
	want := []float64{0.03, 0.06, 0.06, 0.02}
	for i := range want {
		if !near(got[i], want[i], 1e-12) {
			t.Errorf("Holm[%d]=%v want %v", i, got[i], want[i])
		}
	}
	got = Holm([]float64{0.5, math.NaN(), 0.8})
	if got[0] != 1 || !math.IsNaN(got[1]) || got[2] != 1 {
		t.Errorf("with NaN: %v", got)
	}
	if len(Holm(nil)) != 0 {
		t.Error("empty")
	}
}

func TestGeoMean(t *testing.T) {
	if g, ok := GeoMean([]float64{1, 4, 16}); !ok || !near(g, 4, 1e-12) {
		t.Errorf("GeoMean=%v", g)
	}
	// Symmetric under inversion: the geomean of ratios and of their
	// inverses multiply to 1.
	r := []float64{1.1, 0.8, 1.25}
	inv := []float64{1 / 1.1, 1 / 0.8, 1 / 1.25}
	g1, _ := GeoMean(r)
	g2, _ := GeoMean(inv)
	if !near(g1*g2, 1, 1e-12) {
		t.Errorf("g·g⁻¹ = %v", g1*g2)
	}
	for _, bad := range [][]float64{nil, {1, 0}, {2, -1}, {math.NaN()}} {
		if _, ok := GeoMean(bad); ok {
			t.Errorf("GeoMean(%v) ok", bad)
		}
	}
}

func TestEquivalent(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	noise := func(n int, centre float64) []float64 {
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = centre * (1 + 0.002*rng.NormFloat64())
		}
		return xs
	}
	a, b := noise(20, 1000), noise(20, 1001)
	if ok, lo, hi := Equivalent(a, b, 0.02, 0.05); !ok {
		t.Errorf("0.1%% shift with 0.2%% noise must be within ±2%%: [%v,%v]", lo, hi)
	}
	if ok, _, _ := Equivalent(a, noise(20, 1050), 0.02, 0.05); ok {
		t.Error("a 5% shift is not within ±2%")
	}
	// Too few samples can never show equivalence.
	if ok, _, _ := Equivalent(a[:2], b[:2], 0.02, 0.05); ok {
		t.Error("n=2 cannot be equivalent")
	}
	// Zero median: a relative margin is zero wide.
	z := []float64{-1, 0, 0, 0, 0, 0, 1}
	if ok, _, _ := Equivalent(z, z, 0.02, 0.05); ok {
		t.Error("zero median cannot be equivalent within a relative margin")
	}
}

// Non-finite values are ignored, never a hang or a poisoned median.
func TestNonFinite(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	a := []float64{1, nan, 2, 3, inf, 4, 5, 6}
	b := []float64{nan, nan}
	if s := Summarize(a); s.N != 6 || s.Median != 3.5 {
		t.Errorf("Summarize: %+v", s)
	}
	if _, p := MannWhitney(a, b); !math.IsNaN(p) {
		t.Errorf("all-NaN side: p=%v", p)
	}
	if u, p := MannWhitney(a, []float64{nan, 7, 8, 9, 10, 11, 12}); u != 0 || !near(p, 2/math.Exp(lchoose(12, 6)), 1e-12) {
		t.Errorf("u=%v p=%v", u, p)
	}
	if shift, _, _ := HodgesLehmann(a, []float64{inf, 11, 12, 13, 14, 15, 16}, 0.95); shift != 10 {
		t.Errorf("shift=%v", shift)
	}
}

func FuzzStats(f *testing.F) {
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8}, []byte{9, 9, 1}, uint8(3))
	f.Fuzz(func(t *testing.T, ra, rb []byte, mode uint8) {
		conv := func(r []byte) []float64 {
			xs := make([]float64, 0, len(r))
			for _, c := range r {
				switch {
				case mode%5 == 0 && c == 255:
					xs = append(xs, math.NaN())
				case mode%7 == 0 && c == 254:
					xs = append(xs, math.Inf(1))
				default:
					xs = append(xs, float64(c%(mode%16+1)))
				}
			}
			return xs
		}
		a, b := conv(ra), conv(rb)
		_, p := MannWhitney(a, b)
		if !math.IsNaN(p) && (p < 0 || p > 1) {
			t.Fatalf("p=%v", p)
		}
		s := Summarize(a)
		if s.N > 0 && (s.Median < s.Min || s.Median > s.Max || (s.HasCI && (s.Lo > s.Median || s.Hi < s.Median))) {
			t.Fatalf("summary %+v", s)
		}
		r := HodgesLehmannTest(a, b, 0.95)
		if r.HasCI && (r.Lo > r.Shift || r.Hi < r.Shift) {
			t.Fatalf("HL %+v", r)
		}
	})
}
