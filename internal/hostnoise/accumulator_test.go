package hostnoise

import (
	"math"
	"testing"
	"time"
)

const us = time.Microsecond

func feed(th time.Duration, gaps ...time.Duration) *accumulator {
	a := &accumulator{threshold: th}
	for _, g := range gaps {
		a.observe(g)
	}
	return a
}

// A gap exactly at the threshold is not lost; one nanosecond more is, and
// counts whole (the thread was away for all of it, not for the excess).
func TestAccumulatorThresholdEdge(t *testing.T) {
	a := feed(200*us, 30, 200*us, 200*us+1, 40)
	if a.count != 1 || a.lost != 200*us+1 {
		t.Errorf("count %d lost %s, want 1 gap of 200.001µs", a.count, a.lost)
	}
	if a.reads != 4 {
		t.Errorf("reads %d, want 4", a.reads)
	}
}

// The longest gap is kept whether or not it crossed the threshold, so a
// quiet reading still says how close it came.
func TestAccumulatorMax(t *testing.T) {
	if a := feed(200*us, 30, 150*us, 40); a.max != 150*us || a.count != 0 || a.lost != 0 {
		t.Errorf("quiet: max %s count %d lost %s", a.max, a.count, a.lost)
	}
	if a := feed(200*us, 3*time.Millisecond, 30, 250*us); a.max != 3*time.Millisecond {
		t.Errorf("max %s, want 3ms", a.max)
	}
}

// 100 ms spun: two descheduling events (1 ms and 300 µs), 25 interrupt-
// sized gaps of 40 µs below the threshold, and 30 ns reads for the rest:
// 1.3% lost, 20 events per second.
func TestSummaryLostPctAndRate(t *testing.T) {
	a := &accumulator{threshold: Threshold}
	var spun time.Duration
	obs := func(g time.Duration) { a.observe(g); spun += g }
	obs(time.Millisecond)
	for i := 0; i < 25; i++ {
		obs(40 * us)
	}
	obs(300 * us)
	for spun < 100*time.Millisecond {
		obs(30)
	}
	r := summarize([]int{3}, []accumulator{*a}, []time.Duration{spun})
	c := r.CPUs[0]
	wantPct := 100 * float64(1300*us) / float64(spun)
	if c.CPU != 3 || c.Interruptions != 2 || c.Lost != 1300*us || math.Abs(c.LostPct-wantPct) > 1e-9 {
		t.Errorf("cpu %d: %d interruptions, lost %s (%.4f%%), want 2, 1.3ms (%.4f%%)", c.CPU, c.Interruptions, c.Lost, c.LostPct, wantPct)
	}
	if math.Abs(c.InterruptionsPerSec-2/spun.Seconds()) > 1e-9 {
		t.Errorf("rate %g/s, want %g", c.InterruptionsPerSec, 2/spun.Seconds())
	}
	if r.MaxGap != time.Millisecond || r.LostPct != c.LostPct {
		t.Errorf("overall max %s lost %g, want the one CPU's", r.MaxGap, r.LostPct)
	}
}

// Over several CPUs the overall figures weigh each CPU by the time it
// spun, and the maximum is the maximum anywhere.
func TestSummaryOverCPUs(t *testing.T) {
	quiet := feed(Threshold, 30, 50*us)
	busy := feed(Threshold, 4*time.Millisecond, 1*time.Millisecond)
	r := summarize([]int{0, 1}, []accumulator{*quiet, *busy}, []time.Duration{100 * time.Millisecond, 100 * time.Millisecond})
	if r.CPUs[0].LostPct != 0 || r.CPUs[1].LostPct != 5 {
		t.Errorf("per CPU %g%% %g%%, want 0 and 5", r.CPUs[0].LostPct, r.CPUs[1].LostPct)
	}
	if r.LostPct != 2.5 || r.InterruptionsPerSec != 10 || r.MaxGap != 4*time.Millisecond {
		t.Errorf("overall %g%% %g/s max %s, want 2.5%%, 10/s, 4ms", r.LostPct, r.InterruptionsPerSec, r.MaxGap)
	}
	// Nothing spun (cancelled at once) is 0%, not NaN.
	z := summarize([]int{0}, []accumulator{{threshold: Threshold}}, []time.Duration{0})
	if z.LostPct != 0 || z.InterruptionsPerSec != 0 {
		t.Errorf("zero spin: %g%% %g/s", z.LostPct, z.InterruptionsPerSec)
	}
}

func TestHistogram(t *testing.T) {
	a := feed(Threshold, 30, 999, 1*us, 1500, 3*us, 5*time.Millisecond)
	got := a.buckets()
	want := []Bucket{
		{Lo: 512, Hi: 1024, Count: 1, Sum: 1000},       // 1 µs = 1000 ns
		{Lo: 1024, Hi: 2048, Count: 1, Sum: 1500},      // 999 ns is below the floor
		{Lo: 2048, Hi: 4096, Count: 1, Sum: 3000},      //
		{Lo: 1 << 22, Hi: 1 << 23, Count: 1, Sum: 5e6}, // 5 ms
	}
	if len(got) != len(want) {
		t.Fatalf("buckets %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("bucket %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}
