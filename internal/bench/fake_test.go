package bench

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/perflab/perflab/internal/hostnoise"
	"github.com/perflab/perflab/internal/probe"
	"github.com/perflab/perflab/internal/run"
)

// clock is a fake clock that only fake probes move, so budgets and
// durations in tests are exact and cost no real time.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// fake is a deterministic probe: value(i) gives the values of call i
// (warm-up calls included), each call advances the clock by step.
type fake struct {
	name    string
	metrics []run.Metric
	value   func(i int) map[string]float64
	clk     *clock
	step    time.Duration
	stepFn  func(i int) time.Duration // overrides step
	setup   time.Duration             // clock advance in Setup
	// hooks
	setupErr error
	iterErr  func(ctx context.Context, i int) error
	onIter   func(env *probe.Env, i int)

	calls     int
	setups    int
	teardowns int
	dir       string
	env       probe.Env
}

func (f *fake) Name() string               { return f.name }
func (f *fake) Doc() string                { return "a fake probe for harness tests" }
func (f *fake) Defaults(bool) probe.Params { return probe.Params{"k": "v"} }
func (f *fake) Metrics(p probe.Params) ([]run.Metric, error) {
	if p["k"] == "bad" {
		return nil, errors.New("parameter k: bad value")
	}
	return f.metrics, nil
}

func (f *fake) Setup(_ context.Context, env *probe.Env) error {
	f.setups++
	f.dir = env.Dir
	f.env = *env
	if f.clk != nil {
		f.clk.Advance(f.setup)
	}
	return f.setupErr
}

func (f *fake) Iterate(ctx context.Context, env *probe.Env) (map[string]float64, error) {
	i := f.calls
	f.calls++
	if f.onIter != nil {
		f.onIter(env, i)
	}
	if f.clk != nil {
		if f.stepFn != nil {
			f.clk.Advance(f.stepFn(i))
		} else {
			f.clk.Advance(f.step)
		}
	}
	if f.iterErr != nil {
		if err := f.iterErr(ctx, i); err != nil {
			return nil, err
		}
	}
	return f.value(i), nil
}

func (f *fake) Teardown(*probe.Env) error {
	f.teardowns++
	return nil
}

var oneMetric = []run.Metric{{Name: "ops", Unit: "ops/s", Better: run.Higher}}

func constant(v float64) func(int) map[string]float64 {
	return func(int) map[string]float64 { return map[string]float64{"ops": v} }
}

// alternating never converges: half the samples at lo, half at hi.
func alternating(lo, hi float64) func(int) map[string]float64 {
	return func(i int) map[string]float64 {
		if i%2 == 0 {
			return map[string]float64{"ops": lo}
		}
		return map[string]float64{"ops": hi}
	}
}

// fakeNoise is a deterministic host-noise sentinel: call i returns
// lost[i] percent lost on every CPU (the last value repeats) with the
// longest gap maxGap, or err.
type fakeNoise struct {
	lost   []float64
	maxGap time.Duration
	err    error

	mu    sync.Mutex
	calls [][]int // the CPUs of each call
	durs  []time.Duration
}

func (f *fakeNoise) Measure(ctx context.Context, cpus []int, d time.Duration) (hostnoise.Result, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, append([]int(nil), cpus...))
	f.durs = append(f.durs, d)
	if err := ctx.Err(); err != nil {
		return hostnoise.Result{}, err
	}
	if f.err != nil {
		return hostnoise.Result{}, f.err
	}
	pct := 0.0
	if len(f.lost) > 0 {
		pct = f.lost[min(len(f.calls)-1, len(f.lost)-1)]
	}
	res := hostnoise.Result{Threshold: 200 * time.Microsecond, LostPct: pct, InterruptionsPerSec: 10, MaxGap: f.maxGap}
	for _, c := range cpus {
		res.CPUs = append(res.CPUs, hostnoise.CPU{CPU: c, Spun: d, LostPct: pct, InterruptionsPerSec: 10, MaxGap: f.maxGap})
	}
	return res, nil
}
