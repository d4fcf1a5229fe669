package builtin

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/perflab/perflab/internal/probe"
	"github.com/perflab/perflab/internal/run"
)

// CPU is sysbench's prime test re-implemented: one event checks every c in
// [3, max_prime) for primality by trial division with 64-bit integers, as
// `sysbench cpu --cpu-max-prime=N` does, so events/s are directly comparable.
type CPU struct {
	cfg cpuConfig
}

type cpuConfig struct {
	maxPrime uint64
	threads  []int
	duration time.Duration
}

func (*CPU) Name() string { return "cpu" }

func (*CPU) Doc() string {
	return "Integer CPU throughput, sysbench's prime test: one event checks every number c from 3 to max_prime-1 " +
		"by trial division with 64-bit integers by 2..sqrt(c), exactly as `sysbench cpu --cpu-max-prime=N` does, so " +
		"events/s match sysbench's. It runs at each thread count for `duration`, every thread pinned to its own CPU " +
		"(round-robin when there are more threads than CPUs), and reports the sum of the threads' events/s. " +
		"Dominated by 64-bit integer division latency; insensitive to memory."
}

func (*CPU) Defaults(quick bool) probe.Params {
	p := probe.Params{"max_prime": "10000", "threads": joinInts(defaultThreads()), "duration": "500ms"}
	if quick {
		p["duration"] = "200ms"
	}
	return p
}

func (c *CPU) parse(p probe.Params) (cpuConfig, error) {
	const name = "cpu"
	var cfg cpuConfig
	if err := checkKnown(name, p, c.Defaults(false)); err != nil {
		return cfg, err
	}
	mp, err := intParam(name, p, "max_prime", 10000, 3, 100_000_000)
	if err != nil {
		return cfg, err
	}
	cfg.maxPrime = uint64(mp)
	if cfg.threads, err = intsParam(name, p, "threads", defaultThreads(), 1, 4096); err != nil {
		return cfg, err
	}
	if cfg.duration, err = durationParam(name, p, "duration", 500*time.Millisecond, time.Millisecond, time.Minute); err != nil {
		return cfg, err
	}
	return cfg, nil
}

func (c *CPU) Metrics(p probe.Params) ([]run.Metric, error) {
	cfg, err := c.parse(p)
	if err != nil {
		return nil, err
	}
	var ms []run.Metric
	for _, t := range cfg.threads {
		ms = append(ms, run.Metric{
			Name: "events_per_sec.t" + strconv.Itoa(t), Unit: "events/s", Better: run.Higher,
			Series: "threads", X: float64(t), XUnit: "threads",
		})
	}
	return ms, nil
}

func (c *CPU) Setup(_ context.Context, env *probe.Env) error {
	cfg, err := c.parse(env.Params)
	if err != nil {
		return err
	}
	c.cfg = cfg
	return nil
}

func (c *CPU) Iterate(ctx context.Context, env *probe.Env) (map[string]float64, error) {
	defer pauseGC()()
	stop, release := stopFlag(ctx)
	defer release()
	cpus := allowedCPUs(env)
	out := map[string]float64{}
	for _, t := range c.cfg.threads {
		res := runPinned(cpus, t, func(int) workerResult {
			return primeWorker(c.cfg.maxPrime, c.cfg.duration, stop.Load)
		})
		if stop.Load() {
			return nil, ctx.Err()
		}
		rate, err := sumRates(res)
		if err != nil {
			return nil, fmt.Errorf("cpu: %w", err)
		}
		out["events_per_sec.t"+strconv.Itoa(t)] = rate
	}
	return out, nil
}

func (c *CPU) Teardown(*probe.Env) error { return nil }

// primeWorker runs events until d has passed or stopped reports true.
func primeWorker(maxPrime uint64, d time.Duration, stopped func() bool) workerResult {
	start := time.Now()
	var events float64
	var sink uint64
	for {
		sink += primeEvent(maxPrime)
		events++
		el := time.Since(start)
		if el >= d || stopped() {
			resultSink.Add(sink)
			return workerResult{units: events, elapsed: el}
		}
	}
}

// primeEvent is one sysbench cpu event: the number of primes in [3, max).
// The bound is compared as a float64 against the square root, and the
// divisor is a 64-bit unsigned integer, as in sysbench, because the cost of
// 64-bit division is what the test measures.
func primeEvent(max uint64) uint64 {
	var n uint64
	for c := uint64(3); c < max; c++ {
		t := math.Sqrt(float64(c))
		l := uint64(2)
		for ; float64(l) <= t; l++ {
			if c%l == 0 {
				break
			}
		}
		if float64(l) > t {
			n++
		}
	}
	return n
}
