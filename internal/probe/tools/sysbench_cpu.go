package tools

import (
	"context"
	"runtime"
	"strconv"
	"time"

	"github.com/perflab/perflab/internal/probe"
	"github.com/perflab/perflab/internal/run"
)

// SysbenchCPU is `sysbench cpu`: the prime test at each thread count.
type SysbenchCPU struct {
	sb       sysbench
	threads  []int
	maxPrime int
	dur      time.Duration
}

func newSysbenchCPU() *SysbenchCPU { return &SysbenchCPU{} }

func (*SysbenchCPU) Name() string { return "sysbench.cpu" }

func (*SysbenchCPU) Doc() string {
	return "sysbench's prime test (`sysbench cpu --cpu-max-prime=N --threads=T --time=S run`) at each thread count: " +
		"events per second as sysbench prints them, the row 'sysbench prime, 1/2/4 threads' of the seed-004 baseline. " +
		"The builtin probe `cpu` is the same algorithm in Go."
}

func (*SysbenchCPU) Defaults(quick bool) probe.Params {
	p := probe.Params{"threads": "1,2,4", "max_prime": "10000", "duration": "1s"}
	if quick {
		p["threads"] = "1"
	}
	return p
}

func (c *SysbenchCPU) parse(p probe.Params) error {
	const n = "sysbench.cpu"
	if err := checkKnown(n, p, c.Defaults(false)); err != nil {
		return err
	}
	var err error
	if c.threads, err = intsParam(n, p, "threads", []int{1, 2, 4}, 1, 4096); err != nil {
		return err
	}
	if c.maxPrime, err = intParam(n, p, "max_prime", 10000, 3, 100_000_000); err != nil {
		return err
	}
	c.dur, err = runDuration(n, p, time.Second)
	return err
}

func (c *SysbenchCPU) Metrics(p probe.Params) ([]run.Metric, error) {
	if err := c.parse(p); err != nil {
		return nil, err
	}
	var ms []run.Metric
	for _, t := range c.threads {
		ms = append(ms, run.Metric{Name: "events_per_sec.t" + strconv.Itoa(t), Unit: "events/s", Better: run.Higher,
			Series: "threads", X: float64(t), XUnit: "threads"})
	}
	return ms, nil
}

func (c *SysbenchCPU) Available() error { return c.sb.available(context.Background()) }

func (c *SysbenchCPU) Setup(ctx context.Context, env *probe.Env) error {
	return c.sb.setup(ctx, env, c.parse)
}

func (c *SysbenchCPU) Iterate(ctx context.Context, env *probe.Env) (map[string]float64, error) {
	out := map[string]float64{}
	for _, t := range c.threads {
		argv := c.sb.argv("cpu", t, c.dur, []string{"--cpu-max-prime=" + strconv.Itoa(c.maxPrime)}, "run")
		r, err := c.sb.run(ctx, env, env.Dir, argv, toolTimeout(c.dur), "events_per_sec")
		if err != nil {
			return nil, err
		}
		out["events_per_sec.t"+strconv.Itoa(t)] = r.EventsPerSec
	}
	return out, nil
}

func (*SysbenchCPU) Teardown(*probe.Env) error { return nil }

// SysbenchThreads is `sysbench threads`: threads contending for a few
// mutexes and yielding, a scheduler benchmark.
type SysbenchThreads struct {
	sb                   sysbench
	threads, yields, lck int
	dur                  time.Duration
}

func newSysbenchThreads() *SysbenchThreads { return &SysbenchThreads{} }

func (*SysbenchThreads) Name() string { return "sysbench.threads" }

func (*SysbenchThreads) Doc() string {
	return "sysbench's scheduler test (`sysbench threads --threads=T --thread-yields=Y --thread-locks=L --time=S run`): " +
		"T threads repeatedly lock one of L mutexes, yield Y times and unlock; events per second and the 95th " +
		"percentile event latency, as sysbench prints them."
}

func (*SysbenchThreads) Defaults(quick bool) probe.Params {
	return probe.Params{"threads": strconv.Itoa(4 * runtime.NumCPU()), "yields": "1000", "locks": "8", "duration": "1s"}
}

func (s *SysbenchThreads) parse(p probe.Params) error {
	const n = "sysbench.threads"
	if err := checkKnown(n, p, s.Defaults(false)); err != nil {
		return err
	}
	var err error
	if s.threads, err = intParam(n, p, "threads", 4*runtime.NumCPU(), 1, 4096); err != nil {
		return err
	}
	if s.yields, err = intParam(n, p, "yields", 1000, 1, 1_000_000); err != nil {
		return err
	}
	if s.lck, err = intParam(n, p, "locks", 8, 1, 1_000_000); err != nil {
		return err
	}
	s.dur, err = runDuration(n, p, time.Second)
	return err
}

func (s *SysbenchThreads) Metrics(p probe.Params) ([]run.Metric, error) {
	if err := s.parse(p); err != nil {
		return nil, err
	}
	return []run.Metric{
		{Name: "events_per_sec", Unit: "events/s", Better: run.Higher},
		{Name: "latency_p95", Unit: "ms", Better: run.Lower},
	}, nil
}

func (s *SysbenchThreads) Available() error { return s.sb.available(context.Background()) }

func (s *SysbenchThreads) Setup(ctx context.Context, env *probe.Env) error {
	return s.sb.setup(ctx, env, s.parse)
}

func (s *SysbenchThreads) Iterate(ctx context.Context, env *probe.Env) (map[string]float64, error) {
	argv := s.sb.argv("threads", s.threads, s.dur, []string{"--thread-yields=" + strconv.Itoa(s.yields), "--thread-locks=" + strconv.Itoa(s.lck)}, "run")
	r, err := s.sb.run(ctx, env, env.Dir, argv, toolTimeout(s.dur), "events_per_sec", "lat_p95")
	if err != nil {
		return nil, err
	}
	return map[string]float64{"events_per_sec": r.EventsPerSec, "latency_p95": r.LatP95Ms}, nil
}

func (*SysbenchThreads) Teardown(*probe.Env) error { return nil }

// SysbenchMutex is `sysbench mutex`: a fixed amount of lock/unlock work;
// the time it takes is the result.
type SysbenchMutex struct {
	sb                       sysbench
	threads, num, locks, lps int
}

func newSysbenchMutex() *SysbenchMutex { return &SysbenchMutex{} }

func (*SysbenchMutex) Name() string { return "sysbench.mutex" }

func (*SysbenchMutex) Doc() string {
	return "sysbench's mutex test (`sysbench mutex --threads=T --mutex-num=N --mutex-locks=L --mutex-loops=P run`): " +
		"every thread takes L random locks out of N, spinning P loops between them; the total time of this fixed " +
		"work is the result (lower is better), as in seed 002's sysbench mutex row."
}

func (*SysbenchMutex) Defaults(quick bool) probe.Params {
	return probe.Params{"threads": strconv.Itoa(runtime.NumCPU()), "mutex_num": "4096", "mutex_locks": "50000", "mutex_loops": "10000"}
}

func (m *SysbenchMutex) parse(p probe.Params) error {
	const n = "sysbench.mutex"
	if err := checkKnown(n, p, m.Defaults(false)); err != nil {
		return err
	}
	var err error
	if m.threads, err = intParam(n, p, "threads", runtime.NumCPU(), 1, 4096); err != nil {
		return err
	}
	if m.num, err = intParam(n, p, "mutex_num", 4096, 1, 1<<24); err != nil {
		return err
	}
	if m.locks, err = intParam(n, p, "mutex_locks", 50000, 1, 1<<30); err != nil {
		return err
	}
	m.lps, err = intParam(n, p, "mutex_loops", 10000, 0, 1<<30)
	return err
}

func (m *SysbenchMutex) Metrics(p probe.Params) ([]run.Metric, error) {
	if err := m.parse(p); err != nil {
		return nil, err
	}
	return []run.Metric{{Name: "seconds", Unit: "s", Better: run.Lower}}, nil
}

func (m *SysbenchMutex) Available() error { return m.sb.available(context.Background()) }

func (m *SysbenchMutex) Setup(ctx context.Context, env *probe.Env) error {
	return m.sb.setup(ctx, env, m.parse)
}

func (m *SysbenchMutex) Iterate(ctx context.Context, env *probe.Env) (map[string]float64, error) {
	argv := m.sb.argv("mutex", m.threads, 0, []string{"--mutex-num=" + strconv.Itoa(m.num),
		"--mutex-locks=" + strconv.Itoa(m.locks), "--mutex-loops=" + strconv.Itoa(m.lps)}, "run")
	r, err := m.sb.run(ctx, env, env.Dir, argv, 2*time.Minute, "total_time")
	if err != nil {
		return nil, err
	}
	return map[string]float64{"seconds": r.TotalTime}, nil
}

func (*SysbenchMutex) Teardown(*probe.Env) error { return nil }
