package hostnoise

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/testenv"
	"golang.org/x/sys/unix"
)

func allowed(t *testing.T) []int {
	t.Helper()
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		t.Fatal(err)
	}
	var out []int
	for c := 0; c < len(set)*64; c++ {
		if set.IsSet(c) {
			out = append(out, c)
		}
	}
	return out
}

func TestMeasureShort(t *testing.T) {
	cpus := allowed(t)
	runtime.LockOSThread() // so the affinity read afterwards is this thread's
	defer runtime.UnlockOSThread()
	before := fmt.Sprint(allowed(t))
	procs := runtime.GOMAXPROCS(0)

	const d = 5 * time.Millisecond
	r, err := Measure(context.Background(), cpus, d)
	if err != nil {
		t.Fatal(err)
	}
	if r.Threshold != Threshold || len(r.CPUs) != len(cpus) {
		t.Fatalf("threshold %s, %d CPUs; want %s, %d", r.Threshold, len(r.CPUs), Threshold, len(cpus))
	}
	for i, c := range r.CPUs {
		if c.CPU != cpus[i] {
			t.Errorf("CPU %d reported as %d", cpus[i], c.CPU)
		}
		if c.Spun < d || c.Reads < 2 {
			t.Errorf("CPU %d spun %s in %d reads, want ≥ %s", c.CPU, c.Spun, c.Reads, d)
		}
		if c.Lost < 0 || c.Lost > c.Spun || c.LostPct < 0 || c.LostPct > 100 {
			t.Errorf("CPU %d lost %s = %.2f%% of %s", c.CPU, c.Lost, c.LostPct, c.Spun)
		}
		if c.MaxGap <= 0 || c.MaxGap > c.Spun || (c.Interruptions > 0) != (c.MaxGap > Threshold) {
			t.Errorf("CPU %d max gap %s with %d interruptions", c.CPU, c.MaxGap, c.Interruptions)
		}
	}
	if r.LostPct < 0 || r.LostPct > 100 || r.MaxGap <= 0 {
		t.Errorf("overall %.2f%% max %s", r.LostPct, r.MaxGap)
	}
	// The global settings Measure changes are put back, and the spinners'
	// pinning did not leak into this thread.
	if after := fmt.Sprint(allowed(t)); after != before {
		t.Errorf("affinity %s after, %s before", after, before)
	}
	if runtime.GOMAXPROCS(0) != procs {
		t.Errorf("GOMAXPROCS %d after, %d before", runtime.GOMAXPROCS(0), procs)
	}
	if gc := debug.SetGCPercent(100); gc < 0 {
		debug.SetGCPercent(gc)
		t.Errorf("GC left off (GOGC %d)", gc)
	} else {
		debug.SetGCPercent(gc)
	}
}

// With fewer Ps than spinners the Go scheduler would time-share them;
// Measure raises GOMAXPROCS for its duration and restores it.
func TestMeasureMoreCPUsThanProcs(t *testing.T) {
	cpus := allowed(t)
	if len(cpus) < 2 {
		testenv.Unavailable(t, "needs two CPUs to have more spinners than Ps")
	}
	prev := runtime.GOMAXPROCS(1)
	defer runtime.GOMAXPROCS(prev)
	r, err := Measure(context.Background(), cpus[:2], 5*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range r.CPUs {
		if c.Spun < 5*time.Millisecond {
			t.Errorf("CPU %d spun %s", c.CPU, c.Spun)
		}
	}
	if got := runtime.GOMAXPROCS(0); got != 1 {
		t.Errorf("GOMAXPROCS %d after, want 1 restored", got)
	}
}

// Cancellation ends an hour-long spin: Measure returns the context's error
// and no reading. The guard only turns a hang into a failure.
func TestMeasureCancel(t *testing.T) {
	cpus := allowed(t)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		time.Sleep(20 * time.Millisecond)
		cancel()
	}()
	done := make(chan error, 1)
	go func() {
		r, err := Measure(ctx, cpus, time.Hour)
		if len(r.CPUs) != 0 {
			err = fmt.Errorf("cancelled Measure returned a reading of %d CPUs", len(r.CPUs))
		}
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("err %v, want context.Canceled", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("Measure did not return after cancellation")
	}

	pre, cancel2 := context.WithCancel(context.Background())
	cancel2()
	if _, err := Measure(pre, cpus, time.Hour); !errors.Is(err, context.Canceled) {
		t.Errorf("pre-cancelled: err %v", err)
	}
}

func TestMeasureBadInput(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		cpus []int
		d    time.Duration
		want string
	}{
		{nil, time.Millisecond, "no CPUs"},
		{[]int{0}, 0, "not positive"},
		{[]int{0, 0}, time.Millisecond, "repeated"},
		{[]int{-1}, time.Millisecond, "negative"},
		{[]int{4095}, time.Millisecond, "CPU 4095"},
	} {
		if _, err := Measure(ctx, c.cpus, c.d); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Measure(%v, %s): err %v, want %q", c.cpus, c.d, err, c.want)
		}
	}
}
