package builtin

import (
	"context"
	"fmt"
	"math/bits"
	"math/rand/v2"
	"time"

	"github.com/perflab/perflab/internal/probe"
	"github.com/perflab/perflab/internal/run"
)

// MemLatency measures load-to-use latency by chasing a random cyclic chain
// of pointers through working sets from L1-sized to far beyond the LLC.
type MemLatency struct {
	cfg    memlatConfig
	mem    *region
	chains []uint32 // mem viewed as 16 uint32 slots per 64-byte node
}

type memlatConfig struct {
	sizes    []int64
	duration time.Duration
	huge     bool
}

const (
	nodeBytes    = 64             // one cache line per node
	slotsPerNode = nodeBytes / 4  // one uint32 next-pointer per size class
	chaseBatch   = 1 << 14        // loads between looks at the clock
	memlatMax    = int64(8) << 30 // slot values are word indices < 2^32
)

func (*MemLatency) Name() string { return "memory.latency" }

func (*MemLatency) Doc() string {
	return "Memory load latency in ns per load, by chasing a random cyclic permutation of 64-byte nodes (one " +
		"cache line each, Sattolo's algorithm, so the chain visits every node of the working set once per lap and " +
		"hardware prefetchers cannot guess the next line): each load's address is the value of the previous " +
		"load. Working sets are the powers of two from `min` to `max`; plotted, the curve steps at the L1, L2, " +
		"LLC and DRAM sizes. All chains share one buffer: node i holds, in slot k, the next node of size class " +
		"k's chain, so the buffer is built once in Setup. With hugepages=true (default) the buffer is " +
		"MADV_HUGEPAGE'd so TLB misses do not inflate the large sizes; compare with hugepages=false to see the " +
		"page-walk cost. Single thread, pinned."
}

func (*MemLatency) Defaults(quick bool) probe.Params {
	p := probe.Params{"min": "16KiB", "max": "512MiB", "duration": "50ms", "hugepages": "true"}
	if quick {
		p["max"], p["duration"] = "128MiB", "25ms"
	}
	return p
}

func (m *MemLatency) parse(p probe.Params) (memlatConfig, error) {
	const name = "memory.latency"
	var cfg memlatConfig
	if err := checkKnown(name, p, m.Defaults(false)); err != nil {
		return cfg, err
	}
	lo, err := sizeParam(name, p, "min", 16<<10, 4<<10, memlatMax, 1)
	if err != nil {
		return cfg, err
	}
	hi, err := sizeParam(name, p, "max", 512<<20, 4<<10, memlatMax, 1)
	if err != nil {
		return cfg, err
	}
	for _, kv := range []struct {
		k string
		v int64
	}{{"min", lo}, {"max", hi}} {
		if bits.OnesCount64(uint64(kv.v)) != 1 {
			return cfg, paramError(name, kv.k, "%s is not a power of two", fmtBytes(kv.v))
		}
	}
	if hi < lo {
		return cfg, paramError(name, "max", "%s is below min %s", fmtBytes(hi), fmtBytes(lo))
	}
	for s := lo; s <= hi; s *= 2 {
		cfg.sizes = append(cfg.sizes, s)
	}
	if len(cfg.sizes) > slotsPerNode {
		return cfg, paramError(name, "max", "min..max spans %d sizes, at most %d are supported", len(cfg.sizes), slotsPerNode)
	}
	if cfg.duration, err = durationParam(name, p, "duration", 50*time.Millisecond, time.Millisecond, time.Minute); err != nil {
		return cfg, err
	}
	if cfg.huge, err = boolParam(name, p, "hugepages", true); err != nil {
		return cfg, err
	}
	return cfg, nil
}

func (m *MemLatency) Metrics(p probe.Params) ([]run.Metric, error) {
	cfg, err := m.parse(p)
	if err != nil {
		return nil, err
	}
	var ms []run.Metric
	for _, s := range cfg.sizes {
		ms = append(ms, run.Metric{
			Name: "latency." + fmtBytes(s), Unit: "ns", Better: run.Lower,
			Series: "latency", X: float64(s), XUnit: "B",
		})
	}
	return ms, nil
}

func (m *MemLatency) Setup(_ context.Context, env *probe.Env) error {
	cfg, err := m.parse(env.Params)
	if err != nil {
		return err
	}
	m.cfg = cfg
	maxSize := cfg.sizes[len(cfg.sizes)-1]
	advice := "nohuge"
	if cfg.huge {
		advice = "huge"
	}
	before, _ := anonHugeBytes()
	if m.mem, err = mapAnon(maxSize, true, advice); err != nil {
		return fmt.Errorf("memory.latency: %w", err)
	}
	m.chains = unsafeUint32s(m.mem.buf)
	buildChains(m.chains, cfg.sizes, rand.New(rand.NewPCG(1, 2)))
	if after, err := anonHugeBytes(); err == nil {
		pct := 100 * float64(max(after-before, 0)) / float64(maxSize)
		note := fmt.Sprintf("memory.latency: %.0f%% of the %s buffer is in transparent huge pages (hugepages=%v, THP mode %q)",
			min(pct, 100), fmtBytes(maxSize), cfg.huge, thpMode())
		env.Notes = append(env.Notes, note)
	}
	return nil
}

// buildChains writes, for each size class k, a random single-cycle
// permutation of the nodes [0, size_k/64) into slot k. The stored value is
// the uint32 index of the successor's slot k, so the chase is a bare
// dependent load: p = b[p].
func buildChains(b []uint32, sizes []int64, rng *rand.Rand) {
	succ := make([]uint32, sizes[len(sizes)-1]/nodeBytes)
	for k, s := range sizes {
		n := int(s / nodeBytes)
		a := succ[:n]
		for i := range a {
			a[i] = uint32(i)
		}
		// Sattolo: swapping only with strictly lower indices yields one
		// cycle through all n nodes when read as i -> a[i].
		for i := n - 1; i > 0; i-- {
			j := rng.IntN(i)
			a[i], a[j] = a[j], a[i]
		}
		for i, next := range a {
			b[i*slotsPerNode+k] = next*slotsPerNode + uint32(k)
		}
	}
}

func (m *MemLatency) Iterate(ctx context.Context, env *probe.Env) (map[string]float64, error) {
	if m.mem == nil {
		return nil, fmt.Errorf("memory.latency: Iterate before Setup")
	}
	defer pauseGC()()
	stop, release := stopFlag(ctx)
	defer release()
	cpus := allowedCPUs(env)
	out := map[string]float64{}
	for k, s := range m.cfg.sizes {
		res := runPinned(cpus[:1], 1, func(int) workerResult {
			p := uint32(k)
			// One lap brings a cache-sized set into the cache; beyond
			// 16 MiB a lap costs more than it warms, so it is capped.
			p = chase(m.chains, p, min(int(s/nodeBytes), 1<<18))
			var loads float64
			start := time.Now()
			for {
				p = chase(m.chains, p, chaseBatch)
				loads += chaseBatch
				if el := time.Since(start); el >= m.cfg.duration || stop.Load() {
					resultSink.Add(uint64(p))
					return workerResult{units: loads, elapsed: el}
				}
			}
		})
		if stop.Load() {
			return nil, ctx.Err()
		}
		if res[0].err != nil {
			return nil, fmt.Errorf("memory.latency: %w", res[0].err)
		}
		out["latency."+fmtBytes(s)] = float64(res[0].elapsed.Nanoseconds()) / res[0].units
	}
	return out, nil
}

// chase follows the chain n loads (rounded up to 16) from p.
func chase(b []uint32, p uint32, n int) uint32 {
	for i := 0; i < n; i += 16 {
		p = b[p]
		p = b[p]
		p = b[p]
		p = b[p]
		p = b[p]
		p = b[p]
		p = b[p]
		p = b[p]
		p = b[p]
		p = b[p]
		p = b[p]
		p = b[p]
		p = b[p]
		p = b[p]
		p = b[p]
		p = b[p]
	}
	return p
}

func (m *MemLatency) Teardown(*probe.Env) error {
	m.chains = nil
	err := m.mem.unmap()
	m.mem = nil
	return err
}
