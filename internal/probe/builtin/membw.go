package builtin

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/perflab/perflab/internal/probe"
	"github.com/perflab/perflab/internal/run"
)

// MemBandwidth measures sequential memory read, write and copy bandwidth on
// a buffer far larger than the last-level cache.
type MemBandwidth struct {
	cfg membwConfig
	mem *region
}

type membwConfig struct {
	size     int64
	threads  []int
	ops      []string
	duration time.Duration
}

var membwOps = []string{"read", "write", "copy"}

// membwChunk is how much a worker streams between looks at the clock.
const membwChunk = 4 << 20

func (*MemBandwidth) Name() string { return "memory.bandwidth" }

func (*MemBandwidth) Doc() string {
	return "Sequential memory bandwidth in GB/s (1 GB = 1e9 bytes) on an mmap'd buffer of `size` (default 256 MiB, " +
		"far beyond any LLC), pre-faulted in Setup. read sums the buffer as uint64 words with 8 independent " +
		"accumulators; write stores uint64 words; copy copies the first half of the buffer onto the second with " +
		"Go's copy() (memmove: AVX, non-temporal stores for blocks of 1 MiB and more on amd64) and counts the bytes " +
		"copied once, as mbw does (STREAM's Copy counts them twice). Go does not vectorise loops, so read and write " +
		"issue 8-byte scalar loads and stores; writes also pay the read-for-ownership that non-temporal stores " +
		"avoid. Each op runs for `duration` at each thread count, each thread pinned and streaming its own slice; " +
		"the result is the sum of the threads' bandwidths."
}

func (*MemBandwidth) Defaults(quick bool) probe.Params {
	p := probe.Params{"size": "256MiB", "threads": joinInts(oneAndAll()), "ops": "read,write,copy", "duration": "250ms"}
	if quick {
		p["size"], p["duration"] = "128MiB", "100ms"
	}
	return p
}

func (m *MemBandwidth) parse(p probe.Params) (membwConfig, error) {
	const name = "memory.bandwidth"
	var cfg membwConfig
	var err error
	if err = checkKnown(name, p, m.Defaults(false)); err != nil {
		return cfg, err
	}
	if cfg.size, err = sizeParam(name, p, "size", 256<<20, 1<<20, 1<<40, 1<<20); err != nil {
		return cfg, err
	}
	if cfg.threads, err = intsParam(name, p, "threads", oneAndAll(), 1, 4096); err != nil {
		return cfg, err
	}
	if cfg.ops, err = choicesParam(name, p, "ops", membwOps, membwOps); err != nil {
		return cfg, err
	}
	if cfg.duration, err = durationParam(name, p, "duration", 250*time.Millisecond, time.Millisecond, time.Minute); err != nil {
		return cfg, err
	}
	// Each thread's slice (of each half, for copy) must hold whole words.
	if per := cfg.size / 2 / int64(cfg.threads[len(cfg.threads)-1]); per < 4096 {
		return cfg, paramError(name, "size", "%s is too small for %d threads", fmtBytes(cfg.size), cfg.threads[len(cfg.threads)-1])
	}
	return cfg, nil
}

func (m *MemBandwidth) Metrics(p probe.Params) ([]run.Metric, error) {
	cfg, err := m.parse(p)
	if err != nil {
		return nil, err
	}
	var ms []run.Metric
	for _, op := range cfg.ops {
		for _, t := range cfg.threads {
			ms = append(ms, run.Metric{
				Name: op + ".t" + strconv.Itoa(t), Unit: "GB/s", Better: run.Higher,
				Series: op, X: float64(t), XUnit: "threads",
			})
		}
	}
	return ms, nil
}

func (m *MemBandwidth) Setup(_ context.Context, env *probe.Env) error {
	cfg, err := m.parse(env.Params)
	if err != nil {
		return err
	}
	m.cfg = cfg
	if m.mem, err = mapAnon(cfg.size, true, ""); err != nil {
		return fmt.Errorf("memory.bandwidth: %w", err)
	}
	// Fault every page in now: first-touch cost belongs to memory.pagefault.
	touchPages(m.mem.buf)
	return nil
}

func (m *MemBandwidth) Iterate(ctx context.Context, env *probe.Env) (map[string]float64, error) {
	if m.mem == nil {
		return nil, fmt.Errorf("memory.bandwidth: Iterate before Setup")
	}
	defer pauseGC()()
	stop, release := stopFlag(ctx)
	defer release()
	cpus := allowedCPUs(env)
	out := map[string]float64{}
	buf := m.mem.buf
	half := int64(len(buf) / 2)
	for _, op := range m.cfg.ops {
		for _, t := range m.cfg.threads {
			res := runPinned(cpus, t, func(i int) workerResult {
				switch op {
				case "read":
					return streamWorker(sliceOf(buf, int64(len(buf)), t, i), m.cfg.duration, stop.Load, readWords)
				case "write":
					return streamWorker(sliceOf(buf, int64(len(buf)), t, i), m.cfg.duration, stop.Load, writeWords)
				default:
					return copyWorker(sliceOf(buf[:half], half, t, i), sliceOf(buf[half:], half, t, i), m.cfg.duration, stop.Load)
				}
			})
			if stop.Load() {
				return nil, ctx.Err()
			}
			rate, err := sumRates(res)
			if err != nil {
				return nil, fmt.Errorf("memory.bandwidth: %w", err)
			}
			out[op+".t"+strconv.Itoa(t)] = rate / 1e9
		}
	}
	return out, nil
}

func (m *MemBandwidth) Teardown(*probe.Env) error {
	err := m.mem.unmap()
	m.mem = nil
	return err
}

// sliceOf is worker i's share of b (of length n) among t workers, 64-byte
// aligned so no two workers share a cache line.
func sliceOf(b []byte, n int64, t, i int) []byte {
	per := n / int64(t) &^ 63
	return b[int64(i)*per : int64(i+1)*per]
}

// streamWorker applies fn to b chunk by chunk, wrapping around, until d has
// passed or stopped reports true.
func streamWorker(b []byte, d time.Duration, stopped func() bool, fn func([]uint64) uint64) workerResult {
	w := words(b)
	chunk := membwChunk / 8
	var sink uint64
	var bytes float64
	pos := 0
	start := time.Now()
	for {
		end := min(pos+chunk, len(w))
		sink += fn(w[pos:end])
		bytes += float64(end-pos) * 8
		pos = end
		if pos == len(w) {
			pos = 0
		}
		if el := time.Since(start); el >= d || stopped() {
			resultSink.Add(sink)
			return workerResult{units: bytes, elapsed: el}
		}
	}
}

// copyWorker copies src onto dst chunk by chunk until d has passed.
func copyWorker(src, dst []byte, d time.Duration, stopped func() bool) workerResult {
	var bytes float64
	pos := 0
	start := time.Now()
	for {
		end := min(pos+membwChunk, len(src))
		copy(dst[pos:end], src[pos:end])
		bytes += float64(end - pos)
		pos = end
		if pos == len(src) {
			pos = 0
		}
		if el := time.Since(start); el >= d || stopped() {
			return workerResult{units: bytes, elapsed: el}
		}
	}
}

// readWords sums w with eight independent accumulators, so that the loads
// are not serialised behind one dependency chain of adds.
func readWords(w []uint64) uint64 {
	var s0, s1, s2, s3, s4, s5, s6, s7 uint64
	for len(w) >= 8 {
		s0 += w[0]
		s1 += w[1]
		s2 += w[2]
		s3 += w[3]
		s4 += w[4]
		s5 += w[5]
		s6 += w[6]
		s7 += w[7]
		w = w[8:]
	}
	for _, v := range w {
		s0 += v
	}
	return s0 + s1 + s2 + s3 + s4 + s5 + s6 + s7
}

// writeWords stores into every word of w. The value depends on the buffer
// length so the compiler cannot turn the loop into a memclr.
func writeWords(w []uint64) uint64 {
	v := uint64(len(w)) | 1
	for len(w) >= 8 {
		w[0] = v
		w[1] = v
		w[2] = v
		w[3] = v
		w[4] = v
		w[5] = v
		w[6] = v
		w[7] = v
		w = w[8:]
	}
	for i := range w {
		w[i] = v
	}
	return v
}
