package builtin

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/perflab/perflab/internal/probe"
	"github.com/perflab/perflab/internal/run"
)

// SchedWakeup measures how long a thread blocked on a pipe takes to run
// after another thread writes to it, at 1, 2 and 4 concurrent pairs (the
// "CPU调度延时" of seed 004).
type SchedWakeup struct {
	cfg   wakeupConfig
	pairs []*pipePair
	rec   [][]float64
	procs procsGuard
}

type wakeupConfig struct {
	pairs     []int
	duration  time.Duration
	placement string
}

// wakeupMaxSamples caps the per-pair round trips kept for percentiles.
const wakeupMaxSamples = 1 << 19

var placements = []string{"os", "spread", "same"}

func (*SchedWakeup) Name() string { return "sched.wakeup" }

func (*SchedWakeup) Doc() string {
	return "Thread wake-up latency in µs: pairs of OS threads ping-pong a 4-byte token through two pipes with " +
		"blocking read/write, as `perf bench sched pipe -T` does; one round trip is two wake-ups, so the " +
		"latency is round-trip/2, the number `perf bench sched pipe` prints as usecs/op divided by 2. Each round " +
		"trip is timed (vDSO clock) for the mean and the p50/p99 percentiles. Runs 1, 2 and 4 pairs at once to " +
		"show how wake-up latency degrades with load. placement=spread (default) pins the two ends of a pair on " +
		"different CPUs, so every wake-up is a cross-CPU wake-up (an IPI, and on a VM whose idle vCPUs halt, a " +
		"VM exit and entry: seed 004's VM-versus-container gap); same pins both ends on one CPU (a pure context " +
		"switch, see sched.ctxswitch); os leaves placement to the scheduler, as perf does, which mixes the two " +
		"cases from run to run."
}

func (*SchedWakeup) Defaults(quick bool) probe.Params {
	p := probe.Params{"pairs": "1,2,4", "duration": "400ms", "placement": "spread"}
	if quick {
		p["duration"] = "100ms"
	}
	return p
}

func (s *SchedWakeup) parse(p probe.Params) (wakeupConfig, error) {
	const name = "sched.wakeup"
	var cfg wakeupConfig
	var err error
	if err = checkKnown(name, p, s.Defaults(false)); err != nil {
		return cfg, err
	}
	if cfg.pairs, err = intsParam(name, p, "pairs", []int{1, 2, 4}, 1, 256); err != nil {
		return cfg, err
	}
	if cfg.duration, err = durationParam(name, p, "duration", 400*time.Millisecond, time.Millisecond, time.Minute); err != nil {
		return cfg, err
	}
	if cfg.placement, err = choiceParam(name, p, "placement", "spread", placements); err != nil {
		return cfg, err
	}
	return cfg, nil
}

func (s *SchedWakeup) Metrics(p probe.Params) ([]run.Metric, error) {
	cfg, err := s.parse(p)
	if err != nil {
		return nil, err
	}
	var ms []run.Metric
	for _, stat := range []string{"mean", "p50", "p99"} {
		for _, n := range cfg.pairs {
			ms = append(ms, run.Metric{
				Name: stat + ".pairs" + strconv.Itoa(n), Unit: "µs", Better: run.Lower,
				Series: stat, X: float64(n), XUnit: "pairs",
			})
		}
	}
	return ms, nil
}

func (s *SchedWakeup) Setup(_ context.Context, env *probe.Env) error {
	cfg, err := s.parse(env.Params)
	if err != nil {
		return err
	}
	s.cfg = cfg
	most := cfg.pairs[len(cfg.pairs)-1]
	s.procs.raise(2*most + 2)
	for range most {
		pp, err := newPipePair()
		if err != nil {
			return fmt.Errorf("sched.wakeup: %w", err)
		}
		s.pairs = append(s.pairs, pp)
		s.rec = append(s.rec, make([]float64, 0, wakeupMaxSamples))
	}
	return nil
}

func (s *SchedWakeup) Iterate(ctx context.Context, env *probe.Env) (map[string]float64, error) {
	if len(s.pairs) == 0 {
		return nil, fmt.Errorf("sched.wakeup: Iterate before Setup")
	}
	defer pauseGC()()
	stop, release := stopFlag(ctx)
	defer release()
	out := map[string]float64{}
	for _, n := range s.cfg.pairs {
		ping, pong := placePairs(allowedCPUs(env), n, s.cfg.placement)
		res := pingPong(s.pairs[:n], ping, pong, s.rec[:n], s.cfg.duration, stop)
		if stop.Load() {
			return nil, ctx.Err()
		}
		var all []float64
		var trips int
		var sumNs float64
		for _, r := range res {
			if r.err != nil {
				return nil, fmt.Errorf("sched.wakeup: %w", r.err)
			}
			trips += r.roundTrips
			sumNs += float64(r.elapsed.Nanoseconds())
			all = append(all, r.rtts...)
		}
		if trips == 0 || len(all) == 0 {
			return nil, fmt.Errorf("sched.wakeup: no round trip completed")
		}
		slices.Sort(all)
		key := ".pairs" + strconv.Itoa(n)
		// Mean over pairs of elapsed/round trips, halved: perf's usecs/op / 2.
		out["mean"+key] = sumNs / float64(trips) / 2 / 1e3
		out["p50"+key] = percentile(all, 0.50) / 2 / 1e3
		out["p99"+key] = percentile(all, 0.99) / 2 / 1e3
	}
	return out, nil
}

func (s *SchedWakeup) Teardown(*probe.Env) error {
	for _, pp := range s.pairs {
		pp.close()
	}
	s.pairs, s.rec = nil, nil
	s.procs.restore()
	return nil
}

// placePairs returns the CPU of each pair's pinger and ponger.
func placePairs(cpus []int, n int, placement string) (ping, pong []int) {
	ping, pong = make([]int, n), make([]int, n)
	for i := range n {
		switch placement {
		case "spread":
			ping[i], pong[i] = cpus[(2*i)%len(cpus)], cpus[(2*i+1)%len(cpus)]
		case "same":
			ping[i] = cpus[i%len(cpus)]
			pong[i] = ping[i]
		default:
			ping[i], pong[i] = -1, -1
		}
	}
	return ping, pong
}
