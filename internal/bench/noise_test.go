package bench

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/cpuset"
	"github.com/perflab/perflab/internal/hostnoise"
	"github.com/perflab/perflab/internal/probe"
	"github.com/perflab/perflab/internal/run"
)

func noiseRun(t *testing.T, fn *fakeNoise, mod func(*Options)) *run.Run {
	t.Helper()
	clk := newClock()
	f := &fake{name: "n", metrics: oneMetric, value: constant(1), clk: clk, step: time.Second}
	o := opts(clk)
	o.NoiseCheck = fn.Measure
	if mod != nil {
		mod(&o)
	}
	return one(t, f, o)
}

// A run carries a reading from before its first and after its last
// iteration, taken for noiseDuration on the placement's CPUs (every
// allowed CPU when unpinned).
func TestNoiseRecordedBeforeAndAfter(t *testing.T) {
	fn := &fakeNoise{lost: []float64{0.2, 0.4}, maxGap: 300 * time.Microsecond}
	r := noiseRun(t, fn, nil)
	all, err := Affinity()
	if err != nil {
		t.Fatal(err)
	}
	if len(fn.calls) != 2 || fmt.Sprint(fn.calls[0]) != fmt.Sprint(all) || fn.durs[0] != noiseDuration {
		t.Fatalf("sentinel calls %v for %v, want 2 on %v for %s", fn.calls, fn.durs, all, noiseDuration)
	}
	n := r.Noise
	if n == nil || n.Before == nil || n.After == nil {
		t.Fatalf("noise record %+v, want before and after", n)
	}
	if n.CPUs != cpuset.FormatList(all) || n.ThresholdUs != 200 {
		t.Errorf("cpus %q threshold %gµs", n.CPUs, n.ThresholdUs)
	}
	if n.Before.LostPct != 0.2 || n.After.LostPct != 0.4 || n.After.MaxGapUs != 300 || n.After.InterruptionsPerS != 10 || n.After.Seconds != 0.1 {
		t.Errorf("readings %+v / %+v", *n.Before, *n.After)
	}
	if len(n.After.PerCPU) != len(all) || n.After.PerCPU[0].CPU != all[0] || n.After.PerCPU[0].MaxGapUs != 300 {
		t.Errorf("per CPU %+v", n.After.PerCPU)
	}
	if strings.Contains(strings.Join(r.Notes, " "), "host noise") {
		t.Errorf("a quiet host got a note: %v", r.Notes)
	}
}

func TestNoiseFollowsPlacement(t *testing.T) {
	all, _ := Affinity()
	target := all[len(all)-1]
	fn := &fakeNoise{}
	r := noiseRun(t, fn, func(o *Options) { o.CPUs = []int{target} })
	if len(fn.calls) != 2 || fmt.Sprint(fn.calls[1]) != fmt.Sprint([]int{target}) || r.Noise.CPUs != fmt.Sprint(target) {
		t.Errorf("sentinel calls %v, record %q; want both on CPU %d", fn.calls, r.Noise.CPUs, target)
	}
}

func TestNoNoiseCheck(t *testing.T) {
	fn := &fakeNoise{lost: []float64{50}}
	r := noiseRun(t, fn, func(o *Options) { o.NoNoiseCheck = true })
	if len(fn.calls) != 0 || r.Noise != nil {
		t.Errorf("disabled check: %d sentinel calls, record %+v", len(fn.calls), r.Noise)
	}
	if strings.Contains(strings.Join(r.Notes, " "), "noise") {
		t.Errorf("disabled check left a note: %v", r.Notes)
	}
}

// Above 1% over both readings the run says the spread is the host's, with
// the numbers; the threshold itself is still quiet.
func TestNoiseNote(t *testing.T) {
	r := noiseRun(t, &fakeNoise{lost: []float64{3, 2}, maxGap: 4 * time.Millisecond}, nil)
	want := "host noise: the hypervisor or other tasks took 2.5% of an otherwise idle CPU's time (before 3.0%, after 2.0%; longest gap 4.0 ms) — spreads of that order are the host's, not the probe's"
	if got := strings.Join(r.Notes, "\n"); got != want {
		t.Errorf("notes:\n%s\nwant:\n%s", got, want)
	}
	r = noiseRun(t, &fakeNoise{lost: []float64{1.5, 0.5}, maxGap: 900 * time.Microsecond}, nil)
	if len(r.Notes) != 0 {
		t.Errorf("1.0%% over both readings is not above the threshold: %v", r.Notes)
	}
	r = noiseRun(t, &fakeNoise{lost: []float64{1.5, 0.6}, maxGap: 900 * time.Microsecond}, nil)
	if len(r.Notes) != 1 || !strings.Contains(r.Notes[0], "took 1.1%") || !strings.Contains(r.Notes[0], "longest gap 900 µs") {
		t.Errorf("1.05%%: notes %v", r.Notes)
	}
}

func TestNoiseNoteOneReading(t *testing.T) {
	n := &run.Noise{Before: &run.NoiseReading{Seconds: 0.1, LostPct: 4, MaxGapUs: 2500}}
	if got := noiseNote(n); !strings.Contains(got, "took 4.0%") || !strings.Contains(got, "(before 4.0%; longest gap 2.5 ms)") {
		t.Errorf("note %q", got)
	}
	if noiseNote(nil) != "" || noiseNote(&run.Noise{}) != "" {
		t.Error("a note without readings")
	}
}

// A sentinel that fails is one note, not a failed run; the run is measured.
func TestNoiseCheckFailure(t *testing.T) {
	r := noiseRun(t, &fakeNoise{err: errors.New("pinning a thread to CPU 1: invalid argument")}, nil)
	if r.Stop != run.StopPrecision || r.Noise != nil {
		t.Errorf("stop %s noise %+v", r.Stop, r.Noise)
	}
	if got := strings.Join(r.Notes, "|"); got != "noise check failed: pinning a thread to CPU 1: invalid argument" {
		t.Errorf("notes %q", got)
	}
}

// Failed and interrupted runs have no closing reading: nothing was
// measured to its end to compare it with.
func TestNoiseAfterOnlyForCompleteRuns(t *testing.T) {
	clk := newClock()
	fn := &fakeNoise{}
	bad := &fake{name: "bad", metrics: oneMetric, value: constant(1), clk: clk, step: time.Second,
		iterErr: func(_ context.Context, i int) error {
			if i == 2 {
				return errors.New("server died")
			}
			return nil
		}}
	o := opts(clk)
	o.NoiseCheck = fn.Measure
	runs, _ := Run(context.Background(), []Item{{Probe: bad, Params: probe.Params{}}}, o)
	if n := runs[0].Noise; n == nil || n.Before == nil || n.After != nil || len(fn.calls) != 1 {
		t.Errorf("failed run: noise %+v after %d calls", n, len(fn.calls))
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	fn = &fakeNoise{}
	stopped := &fake{name: "stopped", metrics: oneMetric, value: alternating(1, 2), clk: clk, step: time.Second,
		onIter: func(_ *probe.Env, i int) {
			if i == 3 {
				cancel()
			}
		}}
	o.NoiseCheck = fn.Measure
	runs, err := Run(ctx, []Item{{Probe: stopped, Params: probe.Params{}}}, o)
	if !errors.Is(err, ErrInterrupted) {
		t.Fatalf("err %v", err)
	}
	if n := runs[0].Noise; n == nil || n.Before == nil || n.After != nil || len(fn.calls) != 1 {
		t.Errorf("interrupted run: noise %+v after %d calls", n, len(fn.calls))
	}
}

// Ctrl-C during the opening reading ends the run there, as interrupted.
func TestNoiseCheckInterrupted(t *testing.T) {
	clk := newClock()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f := &fake{name: "f", metrics: oneMetric, value: constant(1), clk: clk, step: time.Second}
	o := opts(clk)
	o.NoiseCheck = func(ctx context.Context, cpus []int, d time.Duration) (hostnoise.Result, error) {
		cancel()
		return hostnoise.Result{}, ctx.Err()
	}
	runs, err := Run(ctx, []Item{{Probe: f, Params: probe.Params{}}}, o)
	if !errors.Is(err, ErrInterrupted) || len(runs) != 1 || runs[0].Stop != run.StopInterrupted || f.calls != 0 {
		t.Errorf("err %v, stop %s after %d iterations", err, runs[0].Stop, f.calls)
	}
	if runs[0].Noise != nil || len(runs[0].Notes) != 0 {
		t.Errorf("noise %+v notes %v; a cancelled reading is neither a record nor a failure", runs[0].Noise, runs[0].Notes)
	}
}

// Each noise reading carries a host-drift reference taken on the first of
// the run's CPUs; a failing reference leaves the reading and adds a note.
func TestReferenceWithNoiseReadings(t *testing.T) {
	fn := &fakeNoise{lost: []float64{0.1, 0.1}}
	var cpus []int
	speed := 1.0
	r := noiseRun(t, fn, func(o *Options) {
		o.Reference = func(_ context.Context, cpu int) (hostnoise.Reference, error) {
			cpus = append(cpus, cpu)
			speed *= 1.1
			return hostnoise.Reference{CPU: cpu, CPUNsPerOp: speed, MemGBps: 10 * speed, SyscallNs: 200 * speed}, nil
		}
	})
	all, _ := Affinity()
	if len(cpus) != 2 || cpus[0] != all[0] {
		t.Fatalf("reference calls on %v, want 2 on CPU %d", cpus, all[0])
	}
	b, a := r.Noise.Before.Reference, r.Noise.After.Reference
	if b == nil || a == nil || b.CPUNsPerOp != 1.1 || a.MemGBps != 12.1 || a.SyscallNs != 242 {
		t.Fatalf("references %+v / %+v", b, a)
	}
	r = noiseRun(t, &fakeNoise{lost: []float64{0.1, 0.1}}, func(o *Options) {
		o.Reference = func(context.Context, int) (hostnoise.Reference, error) {
			return hostnoise.Reference{}, errors.New("boom")
		}
	})
	if r.Noise.Before == nil || r.Noise.Before.Reference != nil || !strings.Contains(strings.Join(r.Notes, " "), "host-drift reference failed: boom") {
		t.Errorf("failed reference: %+v notes %v", r.Noise.Before, r.Notes)
	}
}
