package builtin

import (
	"context"
	"fmt"
	"time"
	"unsafe"

	"github.com/perflab/perflab/internal/hostfs"
	"github.com/perflab/perflab/internal/probe"
	"github.com/perflab/perflab/internal/run"
	"golang.org/x/sys/unix"
)

// Syscall measures the price of entering the kernel, and of reading the
// clock with and without entering it.
type Syscall struct {
	cfg syscallConfig
}

type syscallConfig struct {
	duration time.Duration
}

// syscallBatch is how many calls run between looks at the clock.
const syscallBatch = 4096

func (*Syscall) Name() string { return "syscall" }

func (*Syscall) Doc() string {
	return "Cost of a cheap system call in ns: getppid via unix.RawSyscall (the bare kernel entry/exit, " +
		"including whatever speculation mitigations the kernel applies on that path) and via unix.Syscall (plus " +
		"the Go runtime's entersyscall/exitsyscall bookkeeping); and clock_gettime(CLOCK_MONOTONIC) both " +
		"through the vDSO (as Go's time.Since does: no kernel entry while the clocksource is tsc or kvm-clock) " +
		"and as a real syscall. When the clocksource cannot be read from user space (hpet, acpi_pm, some VMs) " +
		"the vDSO falls back to the syscall and the two clock numbers meet: that is the clocksource effect. " +
		"Each runs for `duration` in batches of 4096 calls on one pinned thread."
}

func (*Syscall) Defaults(quick bool) probe.Params {
	p := probe.Params{"duration": "200ms"}
	if quick {
		p["duration"] = "50ms"
	}
	return p
}

func (s *Syscall) parse(p probe.Params) (syscallConfig, error) {
	const name = "syscall"
	var cfg syscallConfig
	var err error
	if err = checkKnown(name, p, s.Defaults(false)); err != nil {
		return cfg, err
	}
	cfg.duration, err = durationParam(name, p, "duration", 200*time.Millisecond, time.Millisecond, time.Minute)
	return cfg, err
}

var syscallOps = []struct {
	name string
	fn   func(n int) uint64
}{
	{"getppid", rawGetppid},
	{"getppid.go", goGetppid},
	{"clock_gettime.vdso", vdsoClock},
	{"clock_gettime.syscall", syscallClock},
}

func (s *Syscall) Metrics(p probe.Params) ([]run.Metric, error) {
	if _, err := s.parse(p); err != nil {
		return nil, err
	}
	var ms []run.Metric
	for _, op := range syscallOps {
		ms = append(ms, run.Metric{Name: op.name, Unit: "ns", Better: run.Lower})
	}
	return ms, nil
}

func (s *Syscall) Setup(_ context.Context, env *probe.Env) error {
	cfg, err := s.parse(env.Params)
	if err != nil {
		return err
	}
	s.cfg = cfg
	if fs, err := hostfs.New("/"); err == nil {
		if cs, err := fs.ReadString("/sys/devices/system/clocksource/clocksource0/current_clocksource"); err == nil {
			env.Notes = append(env.Notes, "syscall: clocksource is "+cs)
		}
	}
	return nil
}

func (s *Syscall) Iterate(ctx context.Context, env *probe.Env) (map[string]float64, error) {
	defer pauseGC()()
	stop, release := stopFlag(ctx)
	defer release()
	cpus := allowedCPUs(env)
	out := map[string]float64{}
	for _, op := range syscallOps {
		res := runPinned(cpus[:1], 1, func(int) workerResult {
			var calls float64
			var sink uint64
			start := time.Now()
			for {
				sink += op.fn(syscallBatch)
				calls += syscallBatch
				if el := time.Since(start); el >= s.cfg.duration || stop.Load() {
					resultSink.Add(sink)
					return workerResult{units: calls, elapsed: el}
				}
			}
		})
		if stop.Load() {
			return nil, ctx.Err()
		}
		if res[0].err != nil {
			return nil, fmt.Errorf("syscall: %w", res[0].err)
		}
		out[op.name] = float64(res[0].elapsed.Nanoseconds()) / res[0].units
	}
	return out, nil
}

func (s *Syscall) Teardown(*probe.Env) error { return nil }

func rawGetppid(n int) uint64 {
	var s uint64
	for range n {
		r, _, _ := unix.RawSyscall(unix.SYS_GETPPID, 0, 0, 0)
		s += uint64(r)
	}
	return s
}

func goGetppid(n int) uint64 {
	var s uint64
	for range n {
		r, _, _ := unix.Syscall(unix.SYS_GETPPID, 0, 0, 0)
		s += uint64(r)
	}
	return s
}

var vdsoEpoch = time.Now()

// vdsoClock reads the monotonic clock the way the Go runtime does, through
// the vDSO; time.Since of a monotonic time makes exactly one such read.
func vdsoClock(n int) uint64 {
	var s uint64
	for range n {
		s += uint64(time.Since(vdsoEpoch))
	}
	return s
}

// syscallClock enters the kernel for clock_gettime (x/sys/unix does not use
// the vDSO).
func syscallClock(n int) uint64 {
	var s uint64
	var ts unix.Timespec
	for range n {
		_, _, _ = unix.RawSyscall(unix.SYS_CLOCK_GETTIME, unix.CLOCK_MONOTONIC, uintptr(unsafe.Pointer(&ts)), 0)
		s += uint64(ts.Nsec)
	}
	return s
}
