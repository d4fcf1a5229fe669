package builtin

import (
	"context"
	"fmt"
	"time"

	"github.com/perflab/perflab/internal/probe"
	"github.com/perflab/perflab/internal/run"
)

// SchedCtxSwitch measures the cost of one context switch between two
// threads of a process sharing one CPU.
type SchedCtxSwitch struct {
	cfg   ctxswConfig
	pair  *pipePair
	procs procsGuard
}

type ctxswConfig struct {
	duration  time.Duration
	placement string
}

func (*SchedCtxSwitch) Name() string { return "sched.ctxswitch" }

func (*SchedCtxSwitch) Doc() string {
	return "Context-switch cost in µs: two OS threads pinned to the same CPU (placement=same, default) " +
		"ping-pong a token through two pipes with blocking read/write for `duration`; each round trip forces two " +
		"switches, so the cost is elapsed / round trips / 2, i.e. `taskset -c 0 perf bench sched pipe -T` " +
		"total time / loops / 2. It includes the pipe read/write syscalls, as perf's number does. " +
		"placement=os lets the scheduler place the threads (then it is a wake-up latency, see sched.wakeup)."
}

func (*SchedCtxSwitch) Defaults(quick bool) probe.Params {
	p := probe.Params{"duration": "500ms", "placement": "same"}
	if quick {
		p["duration"] = "150ms"
	}
	return p
}

func (s *SchedCtxSwitch) parse(p probe.Params) (ctxswConfig, error) {
	const name = "sched.ctxswitch"
	var cfg ctxswConfig
	var err error
	if err = checkKnown(name, p, s.Defaults(false)); err != nil {
		return cfg, err
	}
	if cfg.duration, err = durationParam(name, p, "duration", 500*time.Millisecond, time.Millisecond, time.Minute); err != nil {
		return cfg, err
	}
	if cfg.placement, err = choiceParam(name, p, "placement", "same", placements); err != nil {
		return cfg, err
	}
	return cfg, nil
}

func (s *SchedCtxSwitch) Metrics(p probe.Params) ([]run.Metric, error) {
	if _, err := s.parse(p); err != nil {
		return nil, err
	}
	return []run.Metric{{Name: "switch", Unit: "µs", Better: run.Lower}}, nil
}

func (s *SchedCtxSwitch) Setup(_ context.Context, env *probe.Env) error {
	cfg, err := s.parse(env.Params)
	if err != nil {
		return err
	}
	s.cfg = cfg
	s.procs.raise(4)
	if s.pair, err = newPipePair(); err != nil {
		return fmt.Errorf("sched.ctxswitch: %w", err)
	}
	return nil
}

func (s *SchedCtxSwitch) Iterate(ctx context.Context, env *probe.Env) (map[string]float64, error) {
	if s.pair == nil {
		return nil, fmt.Errorf("sched.ctxswitch: Iterate before Setup")
	}
	defer pauseGC()()
	stop, release := stopFlag(ctx)
	defer release()
	ping, pong := placePairs(allowedCPUs(env), 1, s.cfg.placement)
	res := pingPong([]*pipePair{s.pair}, ping, pong, [][]float64{nil}, s.cfg.duration, stop)
	if stop.Load() {
		return nil, ctx.Err()
	}
	r := res[0]
	if r.err != nil {
		return nil, fmt.Errorf("sched.ctxswitch: %w", r.err)
	}
	return map[string]float64{"switch": float64(r.elapsed.Nanoseconds()) / float64(r.roundTrips) / 2 / 1e3}, nil
}

func (s *SchedCtxSwitch) Teardown(*probe.Env) error {
	if s.pair != nil {
		s.pair.close()
		s.pair = nil
	}
	s.procs.restore()
	return nil
}
