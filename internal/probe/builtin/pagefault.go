package builtin

import (
	"context"
	"fmt"
	"time"

	"github.com/perflab/perflab/internal/probe"
	"github.com/perflab/perflab/internal/run"
)

// PageFault measures the cost of first-touching fresh anonymous memory with
// 4 KiB pages versus transparent huge pages: the lever behind seed 000's
// kernel-upgrade regression (THP switched from always to madvise).
type PageFault struct {
	cfg      pfConfig
	cur      *region // the mapping being touched, so Teardown can free it after a cancel
	noted    bool
	thpModeS string
}

type pfConfig struct {
	size     int64
	duration time.Duration
}

// readTHPMode is thpMode; tests replace it to play a kernel with THP off.
var readTHPMode = thpMode

// pfModes maps metric suffix to madvise advice.
var pfModes = []struct{ name, advice string }{{"4KiB", "nohuge"}, {"thp", "huge"}}

func (*PageFault) Name() string { return "memory.pagefault" }

func (*PageFault) Doc() string {
	return "Cost of first-touching fresh anonymous memory: mmap `size` bytes (2 MiB aligned), madvise it " +
		"MADV_NOHUGEPAGE (4KiB) or MADV_HUGEPAGE (thp), write one byte per 4 KiB page and munmap, repeated for " +
		"`duration` per mode. Reports ns per 4 KiB page touched (a page fault plus zeroing the page, or 1/512 of a " +
		"huge-page fault plus zeroing 2 MiB) and the resulting GB/s (1 GB = 1e9 bytes); only the touching is timed. " +
		"Before each munmap AnonHugePages of /proc/self/smaps_rollup says whether THP really applied; it is " +
		"recorded as a note, and when THP is 'never' (or absent) both modes fault 4 KiB pages and come out equal."
}

func (*PageFault) Defaults(quick bool) probe.Params {
	p := probe.Params{"size": "256MiB", "duration": "300ms"}
	if quick {
		p["size"], p["duration"] = "64MiB", "100ms"
	}
	return p
}

func (f *PageFault) parse(p probe.Params) (pfConfig, error) {
	const name = "memory.pagefault"
	var cfg pfConfig
	var err error
	if err = checkKnown(name, p, f.Defaults(false)); err != nil {
		return cfg, err
	}
	if cfg.size, err = sizeParam(name, p, "size", 256<<20, hugePageSize, 1<<40, hugePageSize); err != nil {
		return cfg, err
	}
	if cfg.duration, err = durationParam(name, p, "duration", 300*time.Millisecond, time.Millisecond, time.Minute); err != nil {
		return cfg, err
	}
	return cfg, nil
}

func (f *PageFault) Metrics(p probe.Params) ([]run.Metric, error) {
	if _, err := f.parse(p); err != nil {
		return nil, err
	}
	var ms []run.Metric
	for _, m := range pfModes {
		ms = append(ms,
			run.Metric{Name: "ns_per_page." + m.name, Unit: "ns", Better: run.Lower},
			run.Metric{Name: "touch_bw." + m.name, Unit: "GB/s", Better: run.Higher})
	}
	return ms, nil
}

func (f *PageFault) Setup(_ context.Context, env *probe.Env) error {
	cfg, err := f.parse(env.Params)
	if err != nil {
		return err
	}
	f.cfg = cfg
	f.noted = false
	f.thpModeS = readTHPMode()
	switch f.thpModeS {
	case "never":
		env.Notes = append(env.Notes, "memory.pagefault: transparent_hugepage is 'never', so MADV_HUGEPAGE does nothing and the 4KiB and thp results are equal by design")
	case "":
		env.Notes = append(env.Notes, "memory.pagefault: this kernel has no transparent huge pages, so the 4KiB and thp results are equal by design")
	}
	return nil
}

func (f *PageFault) Iterate(ctx context.Context, env *probe.Env) (map[string]float64, error) {
	defer pauseGC()()
	stop, release := stopFlag(ctx)
	defer release()
	cpus := allowedCPUs(env)
	out := map[string]float64{}
	for _, m := range pfModes {
		res := runPinned(cpus[:1], 1, func(int) workerResult {
			var touched time.Duration
			var bytes, hugeFrac float64
			for rounds := 0; touched < f.cfg.duration && !stop.Load(); rounds++ {
				base, _ := anonHugeBytes()
				r, err := mapAnon(f.cfg.size, true, m.advice)
				if err != nil {
					return workerResult{err: err}
				}
				f.cur = r
				t0 := time.Now()
				touchPages(r.buf)
				touched += time.Since(t0)
				bytes += float64(f.cfg.size)
				if rounds == 0 {
					if h, err := anonHugeBytes(); err == nil {
						hugeFrac = float64(max(h-base, 0)) / float64(f.cfg.size)
					}
				}
				f.cur = nil
				if err := r.unmap(); err != nil {
					return workerResult{err: err}
				}
			}
			if !f.noted && m.advice == "huge" {
				env.Notes = append(env.Notes, fmt.Sprintf(
					"memory.pagefault: %.0f%% of the thp mapping was backed by huge pages (THP mode %q)",
					100*min(hugeFrac, 1), f.thpModeS))
				f.noted = true
			}
			return workerResult{units: bytes, elapsed: touched}
		})
		if stop.Load() {
			return nil, ctx.Err()
		}
		r := res[0]
		if r.err != nil {
			return nil, fmt.Errorf("memory.pagefault: %w", r.err)
		}
		pages := r.units / 4096
		out["ns_per_page."+m.name] = float64(r.elapsed.Nanoseconds()) / pages
		out["touch_bw."+m.name] = r.units / r.elapsed.Seconds() / 1e9
	}
	return out, nil
}

func (f *PageFault) Teardown(*probe.Env) error {
	err := f.cur.unmap()
	f.cur = nil
	return err
}
