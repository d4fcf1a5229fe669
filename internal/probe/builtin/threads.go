package builtin

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/perflab/perflab/internal/probe"
	"golang.org/x/sys/unix"
)

// allowedCPUs is the CPU list workers are spread over: the harness's
// placement when it gave one, else every CPU this process may run on.
func allowedCPUs(env *probe.Env) []int {
	if env != nil && len(env.CPUs) > 0 {
		return env.CPUs
	}
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err == nil {
		var out []int
		for c := 0; c < len(set)*64 && len(out) < set.Count(); c++ {
			if set.IsSet(c) {
				out = append(out, c)
			}
		}
		if len(out) > 0 {
			return out
		}
	}
	out := make([]int, runtime.NumCPU())
	for i := range out {
		out[i] = i
	}
	return out
}

// lockAndPin locks the calling goroutine to its OS thread and binds that
// thread to cpu (cpu < 0 leaves placement to the kernel). The caller must
// not unlock: when the goroutine exits still locked, the runtime destroys the
// thread, so the affinity never leaks into unrelated goroutines.
func lockAndPin(cpu int) error {
	runtime.LockOSThread()
	if cpu < 0 {
		return nil
	}
	var set unix.CPUSet
	set.Set(cpu)
	if err := unix.SchedSetaffinity(0, &set); err != nil {
		return fmt.Errorf("pin thread to CPU %d: %w", cpu, err)
	}
	return nil
}

// stopFlag turns ctx cancellation into an atomic flag that tight loops can
// poll for the price of a load. release must be called when done.
func stopFlag(ctx context.Context) (flag *atomic.Bool, release func()) {
	flag = new(atomic.Bool)
	if ctx.Err() != nil {
		flag.Store(true)
	}
	stop := context.AfterFunc(ctx, func() { flag.Store(true) })
	return flag, func() { stop() }
}

// workerResult is what one timed worker reports.
type workerResult struct {
	units   float64 // events, bytes, loads … done
	elapsed time.Duration
	err     error
}

// runPinned starts n workers, worker i locked to a thread pinned on
// cpus[i%len(cpus)], releases them together, and waits for all. Each worker
// times itself, so thread start-up is not part of any measurement.
func runPinned(cpus []int, n int, work func(i int) workerResult) []workerResult {
	res := make([]workerResult, n)
	var ready, done sync.WaitGroup
	start := make(chan struct{})
	ready.Add(n)
	done.Add(n)
	for i := 0; i < n; i++ {
		go func() {
			defer done.Done()
			cpu := -1
			if len(cpus) > 0 {
				cpu = cpus[i%len(cpus)]
			}
			err := lockAndPin(cpu)
			ready.Done()
			<-start
			if err != nil {
				res[i] = workerResult{err: err}
				return
			}
			res[i] = work(i)
		}()
	}
	ready.Wait()
	close(start)
	done.Wait()
	return res
}

// sumRates adds up each worker's units per second; the first worker error
// wins.
func sumRates(res []workerResult) (float64, error) {
	var total float64
	for _, r := range res {
		if r.err != nil {
			return 0, r.err
		}
		if r.elapsed <= 0 {
			return 0, fmt.Errorf("worker measured no time")
		}
		total += r.units / r.elapsed.Seconds()
	}
	return total, nil
}

// pauseGC stops the garbage collector for a measurement, so a collection
// triggered by someone else's allocation cannot land inside a timed loop.
// The returned function restores the previous setting.
func pauseGC() (restore func()) {
	old := debug.SetGCPercent(-1)
	return func() { debug.SetGCPercent(old) }
}

// procsGuard raises GOMAXPROCS for probes whose threads block in syscalls
// and wake each other. A thread returning from a syscall re-takes its own P
// if it is still free; with fewer Ps than hot threads it would instead wait
// for sysmon to retake one (20 µs–10 ms), and that wait, not the kernel, is
// what would be measured.
type procsGuard struct{ old int }

func (g *procsGuard) raise(n int) {
	cur := runtime.GOMAXPROCS(0)
	if g.old == 0 {
		g.old = cur
	}
	if n > cur {
		runtime.GOMAXPROCS(n)
	}
}

func (g *procsGuard) restore() {
	if g.old != 0 {
		runtime.GOMAXPROCS(g.old)
		g.old = 0
	}
}

// resultSink receives the results of measured loops so the compiler cannot
// prove them unused and drop the work.
var resultSink atomic.Uint64
