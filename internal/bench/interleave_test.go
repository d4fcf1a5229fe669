package bench

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/effect"
	"github.com/perflab/perflab/internal/run"
)

// driftingHost is a fake host whose speed wanders ±10% over the session
// (one step per probe call) while a state's effect multiplies it.
type driftingHost struct {
	rng    *rand.Rand
	level  float64 // the host's drift factor now
	effect map[string]float64
	state  string
	calls  int
}

func (h *driftingHost) value(int) map[string]float64 {
	h.calls++
	if h.calls%20 == 0 { // the host moves between runs, not within
		h.level = 1 + 0.10*(2*h.rng.Float64()-1)
	}
	return map[string]float64{"ops": 1000 * h.level * h.effect[h.state] * (1 + 0.002*h.rng.NormFloat64())}
}

func (h *driftingHost) states(names ...string) []State {
	var out []State
	for _, n := range names {
		out = append(out, State{Name: n, Apply: func(context.Context) error { h.state = n; return nil }})
	}
	return out
}

// Interleaved states recover a −3% effect that the host's ±10% drift would
// hide, with an interval covering it; the same state twice reads ~1; every
// run is stored under its state's label with its block.
func TestInterleaveRecoversEffectUnderDrift(t *testing.T) {
	clk := newClock()
	h := &driftingHost{rng: rand.New(rand.NewPCG(1, 1)), level: 1, effect: map[string]float64{"A": 1, "B": 0.97, "A2": 1}}
	f := &fake{name: "n", metrics: oneMetric, value: h.value, clk: clk, step: time.Second}
	o := opts(clk)
	o.Precision, o.MinRuns, o.MaxRuns = 0, 6, 6
	var stored []*run.Run
	o.OnRun = func(r *run.Run) error { stored = append(stored, r); return nil }
	runs, res, err := Interleave(context.Background(), []Item{{Probe: f, Params: f.Defaults(false)}},
		InterleaveOptions{States: h.states("A", "B", "A2"), Blocks: 8, Seed: 42}, o)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 24 || len(stored) != 24 || res.Blocks != 8 || res.Stopped != "blocks" {
		t.Fatalf("%d runs (%d stored), %d blocks, stopped %s", len(runs), len(stored), res.Blocks, res.Stopped)
	}
	for _, r := range stored {
		if r.Block < 1 || r.Block > 8 || r.Label != "t/"+r.State {
			t.Fatalf("run %s: state %q block %d label %q", r.ID, r.State, r.Block, r.Label)
		}
	}
	got := map[string]Effect{}
	for _, e := range res.Effects {
		got[e.State] = e
	}
	b, a2 := got["B"], got["A2"]
	if b.Blocks != 8 || !(b.Lo < 0.97 && 0.97 < b.Hi) || b.Hi >= 0.99 {
		t.Errorf("B vs A: %.4f [%.4f, %.4f] over %d blocks, want an interval covering 0.97 and below 0.99", b.Ratio, b.Lo, b.Hi, b.Blocks)
	}
	if !(a2.Lo < 1 && 1 < a2.Hi) || math.Abs(a2.Ratio-1) > 0.01 {
		t.Errorf("A2 vs A: %.4f [%.4f, %.4f], want about 1", a2.Ratio, a2.Lo, a2.Hi)
	}
}

// With a precision target the session ends once every effect is resolved.
func TestInterleaveStopsAtPrecision(t *testing.T) {
	clk := newClock()
	h := &driftingHost{rng: rand.New(rand.NewPCG(2, 2)), level: 1, effect: map[string]float64{"A": 1, "B": 0.9}}
	f := &fake{name: "n", metrics: oneMetric, value: h.value, clk: clk, step: time.Second}
	o := opts(clk)
	o.Precision, o.MaxRuns = 0.02, 6
	_, res, err := Interleave(context.Background(), []Item{{Probe: f, Params: f.Defaults(false)}},
		InterleaveOptions{States: h.states("A", "B"), Blocks: 50, Seed: 1}, o)
	if err != nil {
		t.Fatal(err)
	}
	if res.Stopped != "precision" || res.Blocks < 3 || res.Blocks >= 50 {
		t.Errorf("stopped %s after %d blocks", res.Stopped, res.Blocks)
	}
}

func TestInterleaveBadStates(t *testing.T) {
	clk := newClock()
	f := &fake{name: "n", metrics: oneMetric, value: constant(1), clk: clk, step: time.Second}
	items := []Item{{Probe: f, Params: f.Defaults(false)}}
	ok := func(context.Context) error { return nil }
	for _, c := range []struct {
		states []State
		want   string
	}{
		{[]State{{"A", ok}}, "fewer than the two"},
		{[]State{{"A", ok}, {"A", ok}}, "named twice"},
		{[]State{{"A", ok}, {"a/b", ok}}, "slash or space"},
	} {
		_, _, err := Interleave(context.Background(), items, InterleaveOptions{States: c.states}, opts(clk))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.states, err, c.want)
		}
	}
	// A state that cannot be applied stops the session with its reason.
	fail := []State{{"A", ok}, {"B", func(context.Context) error { return errors.New("exit status 1") }}}
	_, _, err := Interleave(context.Background(), items, InterleaveOptions{States: fail, Seed: 3}, opts(clk))
	if err == nil || !strings.Contains(err.Error(), "state B") || !strings.Contains(err.Error(), "exit status 1") {
		t.Errorf("failing state: %v", err)
	}
}

func TestRepeatRoundRobin(t *testing.T) {
	clk := newClock()
	f1 := &fake{name: "p1", metrics: oneMetric, value: constant(1), clk: clk, step: time.Second}
	f2 := &fake{name: "p2", metrics: oneMetric, value: constant(2), clk: clk, step: time.Second}
	o := opts(clk)
	o.Repeat = 3
	runs, err := Run(context.Background(), []Item{{Probe: f1, Params: f1.Defaults(false)}, {Probe: f2, Params: f2.Defaults(false)}}, o)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range runs {
		got = append(got, r.Probe+"#"+string(rune('0'+r.Block)))
	}
	if strings.Join(got, " ") != "p1#1 p2#1 p1#2 p2#2 p1#3 p2#3" {
		t.Errorf("order %v, want round-robin", got)
	}
	o.Repeat = -1
	if _, err := Run(context.Background(), []Item{{Probe: f1, Params: f1.Defaults(false)}}, o); err == nil {
		t.Error("negative repeat accepted")
	}
}

// UntilVerdict: a −10% state under ±10% drift is called worse and the
// session stops there, long before its time limit; two identical states
// (only within-block noise) stop as equivalent or run to the time limit,
// never with a change. The fake clock is the session's clock, so the
// time limit is exact.
func TestInterleaveUntilVerdict(t *testing.T) {
	for _, c := range []struct {
		effect float64
		want   string
	}{{0.9, "worse"}, {1, ""}} {
		clk := newClock()
		h := &driftingHost{rng: rand.New(rand.NewPCG(4, 4)), level: 1, effect: map[string]float64{"A": 1, "B": c.effect}}
		f := &fake{name: "n", metrics: oneMetric, value: h.value, clk: clk, step: time.Second}
		o := opts(clk)
		o.Precision, o.MinRuns, o.MaxRuns = 0, 3, 3
		_, res, err := Interleave(context.Background(), []Item{{Probe: f, Params: f.Defaults(false)}},
			InterleaveOptions{States: h.states("A", "B"), Blocks: MaxRepeat, Seed: 5, UntilVerdict: true, MaxTime: 10 * time.Minute}, o)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Effects) != 1 || res.Alpha <= 0 || res.Alpha > 0.05 {
			t.Fatalf("effect %v: %+v", c.effect, res)
		}
		v := res.Effects[0].Verdict
		switch {
		case c.want == "worse" && (v != "worse" || res.Stopped != "verdict" || res.Seconds >= 600):
			t.Errorf("−10%%: %s, stopped by %s after %.0f s", v, res.Stopped, res.Seconds)
		case c.want == "" && (v.Changed() || res.Seconds > 600):
			t.Errorf("A/A: %s, stopped by %s after %.0f s", v, res.Stopped, res.Seconds)
		}
	}
}

// The looks of a sequential session spend at most alpha in all, the last
// one the rest; before MinBlocks nothing is spent.
func TestSequentialSpendsAlphaOnce(t *testing.T) {
	s := &Sequential{Alpha: 0.05, MaxTime: time.Minute}
	res := &Interleaved{}
	var levels []float64
	none := func(o effect.Options) []Effect { levels = append(levels, o.Alpha); return nil }
	for b := 1; ; b++ {
		if s.Look(res, none, b, 3, MaxRepeat, time.Duration(b)*7*time.Second) {
			break
		}
		if b > 100 {
			t.Fatal("no end")
		}
	}
	sum := 0.0
	for _, l := range levels {
		sum += l
	}
	if len(levels) != 6 || math.Abs(sum-0.05) > 1e-12 || res.Stopped != "max-time" {
		t.Errorf("levels %v (sum %v), stopped %q; want 6 looks (blocks 3–8 of 7 s in a minute) spending 0.05", levels, sum, res.Stopped)
	}
}

// The effects of the same runs are the same to the bit, however often
// they are computed and in whatever order the runs come: the blocks are
// paired in block order. They were once paired in a map's order, so the
// mean of the log-ratios, and with it the interval and p, could move in
// their last bits from one call to the next (with 10 blocks, 2 results in
// 2000 calls), and a verdict at the edge of α could flip.
func TestEffectsAtBlockOrderFixed(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	key := func(es []Effect) string {
		var b strings.Builder
		for _, e := range es {
			fmt.Fprintf(&b, "%s/%s %d %x %x %x %x %s\n", e.Metric, e.State, e.Blocks, math.Float64bits(e.Ratio),
				math.Float64bits(e.Lo), math.Float64bits(e.Hi), math.Float64bits(e.P), e.Verdict)
		}
		return b.String()
	}
	for blocks := 3; blocks <= 30; blocks++ {
		var runs []*run.Run
		for b := 1; b <= blocks; b++ {
			for _, st := range []string{"A", "B"} {
				r := &run.Run{ID: fmt.Sprintf("%s%02d", st, b), Probe: "p", State: st, Block: b, Complete: true,
					Metrics: []run.Metric{{Name: "ops", Unit: "1/s", Better: run.Higher}}}
				r.Samples = []run.Sample{{Metric: "ops", Value: 1000 * (1 + 0.01*rng.NormFloat64())}}
				runs = append(runs, r)
			}
		}
		want := key(Effects(runs, "A"))
		if want == "" {
			t.Fatalf("%d blocks: no effect", blocks)
		}
		for i := range 200 {
			in := runs
			if i%2 == 1 { // A's runs first, so the base stays the first state named
				in = slices.Clone(runs)
				rng.Shuffle(len(in), func(i, j int) { in[i], in[j] = in[j], in[i] })
				slices.SortStableFunc(in, func(x, y *run.Run) int { return strings.Compare(x.State, y.State) })
			}
			if got := key(Effects(in, "A")); got != want {
				t.Fatalf("%d blocks, call %d: %s, first call %s", blocks, i, got, want)
			}
		}
	}
}
