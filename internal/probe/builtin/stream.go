package builtin

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"github.com/perflab/perflab/internal/hostfs"
	"github.com/perflab/perflab/internal/probe"
	"github.com/perflab/perflab/internal/run"
)

// Stream is John McCalpin's STREAM benchmark written in Go: the four
// kernels Copy, Scale, Add and Triad on three float64 arrays, sized by
// STREAM's rule and counted by its convention, so that its GB/s are the
// numbers seed 004's baseline table (and every STREAM result published)
// speaks in. It sits next to memory.bandwidth, whose read/write/copy count
// bytes as mbw does; the two conventions differ (STREAM's Copy counts each
// byte copied twice, once read and once written), and so they are separate
// metrics of separate probes rather than one probe with two meanings of
// "copy".
type Stream struct {
	cfg  streamConfig
	mems [3]*region
	a    []float64
	b    []float64
	c    []float64
	n    int
	ran  []int // passes run at each thread count by the last Iterate
}

type streamConfig struct {
	arrayBytes int64 // 0: by STREAM's rule from the host's caches
	threads    []int
	kernels    []string
	passes     int
	// duration > 0 bounds an iteration's time per thread count: no pass
	// starts after it (at least two run, at most passes).
	duration time.Duration
}

var streamKernels = []string{"copy", "scale", "add", "triad"}

// streamScalar is STREAM's scalar.
const streamScalar = 3.0

// streamMinArray is STREAM 5.10's default array (10 million doubles, 76
// MiB), the floor when the host's caches cannot be read or are small.
const streamMinArray = 10_000_000 * 8

func (*Stream) Name() string { return "memory.stream" }

func (*Stream) Doc() string {
	return "STREAM's four kernels in GB/s (1 GB = 1e9 bytes), as McCalpin's stream.c 5.10 defines them: " +
		"Copy c=a, Scale b=3·c, Add c=a+b, Triad a=b+3·c on three float64 arrays; Copy and Scale count 2 arrays " +
		"of bytes per pass, Add and Triad 3 (reads plus writes; write-allocate traffic is not counted). Each " +
		"array is at least 4× the sum of the host's last-level caches (read from sysfs) and at least STREAM's " +
		"default 10 million elements, unless `array_size` fixes it. Each iteration runs `passes` rounds of the " +
		"four kernels in STREAM's order and reports each kernel's best pass after the first (STREAM's \"Best " +
		"Rate\"); `duration`, when set, stops starting passes once that much time has gone at a thread count " +
		"(at least two passes still run), so an iteration keeps its time on a busy host; with several threads the index range is split into contiguous slices, one per pinned thread, " +
		"and a pass lasts until the slowest thread ends, as an OpenMP `parallel for` does. All four kernels are " +
		"unrolled scalar loops with ordinary stores (Copy too: Go's copy() would use non-temporal stores and " +
		"report up to 1.6× STREAM's Copy)."
}

func (*Stream) Defaults(quick bool) probe.Params {
	p := probe.Params{"array_size": "auto", "threads": joinInts(oneAndAll()), "kernels": "copy,scale,add,triad", "passes": "10", "duration": "0s"}
	if quick {
		// Bounded by time, not passes: on a loaded 2-CPU VM four fixed
		// passes took seconds an iteration and quick's 7 s budget kept one
		// sample (docs/bench.md, "memory.stream in quick").
		p["passes"], p["duration"] = "10", "200ms"
	}
	return p
}

func (s *Stream) parse(p probe.Params) (streamConfig, error) {
	const name = "memory.stream"
	var cfg streamConfig
	var err error
	if err = checkKnown(name, p, s.Defaults(false)); err != nil {
		return cfg, err
	}
	if v := p["array_size"]; v != "" && v != "auto" {
		if cfg.arrayBytes, err = sizeParam(name, p, "array_size", 0, 1<<20, 1<<40, 4096); err != nil {
			return cfg, err
		}
	}
	if cfg.threads, err = intsParam(name, p, "threads", oneAndAll(), 1, 4096); err != nil {
		return cfg, err
	}
	if cfg.kernels, err = choicesParam(name, p, "kernels", streamKernels, streamKernels); err != nil {
		return cfg, err
	}
	// STREAM discards the first pass, so two is the least that measures.
	if cfg.passes, err = intParam(name, p, "passes", 10, 2, 1000); err != nil {
		return cfg, err
	}
	if cfg.duration, err = durationParam(name, p, "duration", 0, 0, time.Hour); err != nil {
		return cfg, err
	}
	return cfg, nil
}

func (s *Stream) Metrics(p probe.Params) ([]run.Metric, error) {
	cfg, err := s.parse(p)
	if err != nil {
		return nil, err
	}
	var ms []run.Metric
	for _, k := range cfg.kernels {
		for _, t := range cfg.threads {
			ms = append(ms, run.Metric{
				Name: k + ".t" + strconv.Itoa(t), Unit: "GB/s", Better: run.Higher,
				Series: k, X: float64(t), XUnit: "threads",
			})
		}
	}
	return ms, nil
}

// streamArrayBytes applies STREAM's sizing rule: each array at least four
// times the last-level cache (llc, the sum over all its instances; 0 when
// unknown) and at least STREAM's default array, rounded up to whole pages.
func streamArrayBytes(llc int64) int64 {
	n := max(4*llc, streamMinArray)
	return (n + 4095) &^ 4095
}

// lastLevelCache is the total size of the host's last-level caches: the
// highest-level data or unified cache of every CPU, each distinct instance
// (CPUs listed in its shared_cpu_list) counted once, as STREAM's rule means
// "the available cache" (two sockets of 20 MB are 40 MB). It reads sysfs
// through fs, so fixture trees of other hosts work.
func lastLevelCache(fs hostfs.FS) (int64, error) {
	dirs, err := fs.Glob("/sys/devices/system/cpu/cpu[0-9]*/cache/index[0-9]*")
	if err != nil {
		return 0, err
	}
	type inst struct {
		level  int64
		shared string
	}
	sizes := map[inst]int64{}
	var top int64
	for _, d := range dirs {
		lvl, err := fs.ReadInt(d + "/level")
		if err != nil {
			continue
		}
		if typ, _ := fs.ReadString(d + "/type"); typ == "Instruction" {
			continue
		}
		sz, err := fs.ReadString(d + "/size")
		if err != nil {
			continue
		}
		b, err := parseCacheSize(sz)
		if err != nil {
			return 0, fmt.Errorf("%s/size: %w", d, err)
		}
		shared, _ := fs.ReadString(d + "/shared_cpu_list")
		if shared == "" {
			// Without the sharing list each CPU's copy counts as its own.
			shared = d
		}
		sizes[inst{lvl, shared}] = b
		top = max(top, lvl)
	}
	if top == 0 {
		return 0, fmt.Errorf("no caches listed under /sys/devices/system/cpu/cpu*/cache")
	}
	var total int64
	for k, v := range sizes {
		if k.level == top {
			total += v
		}
	}
	return total, nil
}

// parseCacheSize reads sysfs cache sizes: "32K", "32768K", "32M", or bytes.
func parseCacheSize(s string) (int64, error) {
	s = strings.TrimSpace(s)
	mult := int64(1)
	switch {
	case strings.HasSuffix(s, "K"):
		s, mult = s[:len(s)-1], 1<<10
	case strings.HasSuffix(s, "M"):
		s, mult = s[:len(s)-1], 1<<20
	case strings.HasSuffix(s, "G"):
		s, mult = s[:len(s)-1], 1<<30
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v < 0 || v > math.MaxInt64/mult {
		return 0, fmt.Errorf("cache size %q not understood", s)
	}
	return v * mult, nil
}

func (s *Stream) Setup(_ context.Context, env *probe.Env) error {
	cfg, err := s.parse(env.Params)
	if err != nil {
		return err
	}
	s.cfg = cfg
	size := cfg.arrayBytes
	if size == 0 {
		fs, err := hostfs.New("/")
		if err != nil {
			return fmt.Errorf("memory.stream: %w", err)
		}
		llc, lerr := lastLevelCache(fs)
		size = streamArrayBytes(llc)
		if lerr != nil {
			env.Notes = append(env.Notes, fmt.Sprintf("last-level cache unknown (%v): arrays of STREAM's default %s", lerr, mib(size)))
		} else {
			env.Notes = append(env.Notes, fmt.Sprintf("last-level cache %s in total: arrays of %s each (≥ 4× LLC, STREAM's rule)", mib(llc), mib(size)))
		}
		if avail, ok := memAvailable(fs); ok && 3*size > avail/2 {
			return paramError("memory.stream", "array_size",
				"three arrays of %s need more than half of the %s available; set array_size smaller (e.g. array_size=%s)",
				mib(size), mib(avail), fmtBytes(max(avail/8, 1<<20)&^(1<<20-1)))
		}
	}
	s.n = int(size / 8)
	if s.n < 8*cfg.threads[len(cfg.threads)-1] {
		return paramError("memory.stream", "array_size", "%s is too small for %d threads", fmtBytes(size), cfg.threads[len(cfg.threads)-1])
	}
	for i := range s.mems {
		if s.mems[i], err = mapAnon(size, true, ""); err != nil {
			return fmt.Errorf("memory.stream: %w", err)
		}
	}
	s.a, s.b, s.c = floats(s.mems[0].buf, s.n), floats(s.mems[1].buf, s.n), floats(s.mems[2].buf, s.n)
	// STREAM's initialisation, which also faults every page in.
	for j := range s.a {
		s.a[j], s.b[j], s.c[j] = 1, 2, 0
	}
	return nil
}

// memAvailable is MemAvailable from /proc/meminfo, in bytes.
func memAvailable(fs hostfs.FS) (int64, bool) {
	pfs, err := fs.Proc()
	if err != nil {
		return 0, false
	}
	mi, err := pfs.Meminfo()
	if err != nil || mi.MemAvailable == nil {
		return 0, false
	}
	return int64(*mi.MemAvailable) << 10, true
}

func floats(b []byte, n int) []float64 {
	return unsafe.Slice((*float64)(unsafe.Pointer(&b[0])), n)
}

func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

// streamBytes is STREAM's byte count for one pass of kernel k over n
// elements: Copy and Scale move two arrays, Add and Triad three.
func streamBytes(k string, n int) float64 {
	if k == "copy" || k == "scale" {
		return 2 * 8 * float64(n)
	}
	return 3 * 8 * float64(n)
}

func (s *Stream) Iterate(ctx context.Context, env *probe.Env) (map[string]float64, error) {
	if s.a == nil {
		return nil, fmt.Errorf("memory.stream: Iterate before Setup")
	}
	defer pauseGC()()
	stop, release := stopFlag(ctx)
	defer release()
	cpus := allowedCPUs(env)
	out := map[string]float64{}
	s.ran = s.ran[:0]
	for _, t := range s.cfg.threads {
		best := map[string]time.Duration{}
		began := time.Now()
		s.ran = append(s.ran, 0)
		for pass := 0; pass < s.cfg.passes; pass++ {
			if pass >= 2 && s.cfg.duration > 0 && time.Since(began) >= s.cfg.duration {
				break
			}
			s.ran[len(s.ran)-1]++
			// STREAM runs all four kernels in each pass, in order, even
			// when only some are reported: each kernel's input is the
			// previous one's output.
			for _, k := range streamKernels {
				// A pass lasts from the first thread's start to the last
				// one's end: a thread that starts late (its CPU was busy)
				// lengthens the pass, as it does OpenMP's.
				starts, ends := make([]time.Time, t), make([]time.Time, t)
				res := runPinned(cpus, t, func(i int) workerResult {
					lo, hi := i*s.n/t, (i+1)*s.n/t
					starts[i] = time.Now()
					streamKernel(k, s.a[lo:hi], s.b[lo:hi], s.c[lo:hi])
					ends[i] = time.Now()
					return workerResult{elapsed: ends[i].Sub(starts[i])}
				})
				if stop.Load() {
					return nil, ctx.Err()
				}
				for _, r := range res {
					if r.err != nil {
						return nil, fmt.Errorf("memory.stream: %w", r.err)
					}
				}
				el := slices.MaxFunc(ends, time.Time.Compare).Sub(slices.MinFunc(starts, time.Time.Compare))
				if pass == 0 {
					continue
				}
				if b, ok := best[k]; !ok || el < b {
					best[k] = el
				}
			}
		}
		for _, k := range s.cfg.kernels {
			if best[k] <= 0 {
				return nil, fmt.Errorf("memory.stream: %s measured no time", k)
			}
			out[k+".t"+strconv.Itoa(t)] = streamBytes(k, s.n) / best[k].Seconds() / 1e9
		}
	}
	return out, nil
}

// streamKernel runs one kernel on (slices of) the three arrays.
func streamKernel(k string, a, b, c []float64) {
	switch k {
	case "copy":
		streamCopy(c, a)
	case "scale":
		streamScale(b, c)
	case "add":
		streamAdd(c, a, b)
	case "triad":
		streamTriad(a, b, c)
	}
}

// streamCopy is c = a, element by element with ordinary stores, as
// stream.c's loop (not Go's copy(), whose memmove switches to non-temporal
// stores on large blocks and so skips the read-for-ownership that STREAM's
// Copy pays: measured 1.6× stream.c's Copy here).
func streamCopy(c, a []float64) {
	a = a[:len(c)]
	for len(c) >= 4 {
		c[0], c[1], c[2], c[3] = a[0], a[1], a[2], a[3]
		a, c = a[4:], c[4:]
	}
	for i := range c {
		c[i] = a[i]
	}
}

// streamScale is b = scalar*c.
func streamScale(b, c []float64) {
	b = b[:len(c)]
	for len(c) >= 4 {
		b[0], b[1], b[2], b[3] = streamScalar*c[0], streamScalar*c[1], streamScalar*c[2], streamScalar*c[3]
		b, c = b[4:], c[4:]
	}
	for i := range c {
		b[i] = streamScalar * c[i]
	}
}

// streamAdd is c = a+b.
func streamAdd(c, a, b []float64) {
	a, b = a[:len(c)], b[:len(c)]
	for len(c) >= 4 {
		c[0], c[1], c[2], c[3] = a[0]+b[0], a[1]+b[1], a[2]+b[2], a[3]+b[3]
		a, b, c = a[4:], b[4:], c[4:]
	}
	for i := range c {
		c[i] = a[i] + b[i]
	}
}

// streamTriad is a = b+scalar*c.
func streamTriad(a, b, c []float64) {
	b, c = b[:len(a)], c[:len(a)]
	for len(a) >= 4 {
		a[0], a[1], a[2], a[3] = b[0]+streamScalar*c[0], b[1]+streamScalar*c[1], b[2]+streamScalar*c[2], b[3]+streamScalar*c[3]
		a, b, c = a[4:], b[4:], c[4:]
	}
	for i := range a {
		a[i] = b[i] + streamScalar*c[i]
	}
}

func (s *Stream) Teardown(*probe.Env) error {
	var first error
	for i, m := range s.mems {
		if m == nil {
			continue
		}
		if err := m.unmap(); err != nil && first == nil {
			first = err
		}
		s.mems[i] = nil
	}
	s.a, s.b, s.c = nil, nil, nil
	return first
}
