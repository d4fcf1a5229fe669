package hostnoise

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"runtime/debug"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// Threshold is the gap between two successive clock reads above which the
// thread is counted as descheduled: above what an interrupt or the Go
// runtime's own preemption costs, below a host scheduling slice (the
// package doc has the measurements behind it).
const Threshold = 200 * time.Microsecond

// mu serialises Measure: two sentinels on the same CPUs would steal from
// each other, and the GC and GOMAXPROCS settings they change are global.
var mu sync.Mutex

// Measure spins one locked OS thread pinned to each of cpus, all at once,
// for d, and reports how much of that time each thread did not run. It
// returns ctx's error, within microseconds of a spinner seeing it, when ctx
// is cancelled.
//
// For its duration it pauses the garbage collector (a collection would
// stop the spinners for perflab's own reasons) and raises GOMAXPROCS to
// len(cpus) if it is lower (otherwise the Go scheduler, not the host,
// would share the CPUs out between spinners).
func Measure(ctx context.Context, cpus []int, d time.Duration) (Result, error) {
	if len(cpus) == 0 {
		return Result{}, errors.New("no CPUs to measure")
	}
	if d <= 0 {
		return Result{}, fmt.Errorf("duration %s is not positive", d)
	}
	seen := make(map[int]bool, len(cpus))
	for _, c := range cpus {
		if c < 0 || seen[c] {
			return Result{}, fmt.Errorf("CPU list %v has a negative or repeated CPU", cpus)
		}
		seen[c] = true
	}
	if err := ctx.Err(); err != nil {
		return Result{}, err
	}
	mu.Lock()
	defer mu.Unlock()
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	if prev := runtime.GOMAXPROCS(0); prev < len(cpus) {
		runtime.GOMAXPROCS(len(cpus))
		defer runtime.GOMAXPROCS(prev)
	}

	accs := make([]accumulator, len(cpus))
	spun := make([]time.Duration, len(cpus))
	errs := make([]error, len(cpus))
	done := ctx.Done()
	var ready, finished sync.WaitGroup
	start := make(chan struct{})
	ready.Add(len(cpus))
	finished.Add(len(cpus))
	for i, cpu := range cpus {
		go func() {
			defer finished.Done()
			// Never unlocked: a goroutine that exits locked takes its
			// thread with it, so the affinity cannot leak to other
			// goroutines.
			runtime.LockOSThread()
			var set unix.CPUSet
			set.Set(cpu)
			err := unix.SchedSetaffinity(0, &set)
			ready.Done()
			<-start
			if err != nil {
				errs[i] = fmt.Errorf("pinning a thread to CPU %d: %w", cpu, err)
				return
			}
			accs[i].threshold = Threshold
			spun[i] = spin(&accs[i], d, done)
		}()
	}
	// Released together so that the CPUs are measured over the same
	// interval, not one after the other as the threads happen to start.
	ready.Wait()
	close(start)
	finished.Wait()
	if err := ctx.Err(); err != nil {
		return Result{}, err
	}
	if err := errors.Join(errs...); err != nil {
		return Result{}, err
	}
	return summarize(cpus, accs, spun), nil
}

// spin reads the monotonic clock in a tight loop until it has spun for d
// (or done is closed), feeding every gap between successive reads to acc,
// and returns the time spun. time.Since on a time with a monotonic reading
// is one vDSO clock read, no system call. The loop never yields: it must
// be descheduled as a CPU-bound probe is, and a yield would idle the CPU
// where a probe would not (the package doc says what not yielding costs).
func spin(acc *accumulator, d time.Duration, done <-chan struct{}) time.Duration {
	base := time.Now()
	var prev time.Duration
	for prev < d {
		now := time.Since(base)
		acc.observe(now - prev)
		prev = now
		select {
		case <-done:
			return prev
		default:
		}
	}
	return prev
}
