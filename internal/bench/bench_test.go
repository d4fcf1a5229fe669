package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"github.com/perflab/perflab/internal/testenv"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/clierr"
	"github.com/perflab/perflab/internal/cpuset"
	"github.com/perflab/perflab/internal/hostfs"
	"github.com/perflab/perflab/internal/monitor"
	"github.com/perflab/perflab/internal/probe"
	"github.com/perflab/perflab/internal/run"
	"github.com/perflab/perflab/internal/stats"
)

// opts are the harness options of the deterministic tests: a fake clock
// and a quiet fake host-noise sentinel.
func opts(clk *clock) Options {
	return Options{
		Precision: 0.01, MinRuns: 6, MaxRuns: 50, Budget: time.Hour, Warmup: 1,
		Now: clk.Now, Label: "t", Version: "test", Host: Host{Name: "h", SnapshotID: "s1"},
		NoiseCheck: (&fakeNoise{lost: []float64{0.1}, maxGap: 150 * time.Microsecond}).Measure,
	}
}

func one(t *testing.T, f *fake, o Options) *run.Run {
	t.Helper()
	runs, err := Run(context.Background(), []Item{{Probe: f, Params: f.Defaults(false)}}, o)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 1 {
		t.Fatalf("%d runs, want 1", len(runs))
	}
	if err := runs[0].Validate(); err != nil {
		t.Fatalf("harness produced an invalid run: %v", err)
	}
	return runs[0]
}

func TestConstantProbeStopsAtMinRuns(t *testing.T) {
	clk := newClock()
	f := &fake{name: "c", metrics: oneMetric, value: constant(100), clk: clk, step: time.Second}
	r := one(t, f, opts(clk))
	if r.Stop != run.StopPrecision || !r.Complete {
		t.Errorf("stop %s complete %v, want precision, complete", r.Stop, r.Complete)
	}
	if n := len(r.Values("ops")); n != 6 {
		t.Errorf("%d samples, want the minimum 6", n)
	}
	if f.calls != 7 {
		t.Errorf("%d calls, want 1 warm-up + 6", f.calls)
	}
}

// A probe that is noisy for its first samples and then settles must stop
// at the first sample count where every metric's CI is within precision,
// not before and not after.
func TestConvergingProbeStopsWhenCIIsNarrowEnough(t *testing.T) {
	clk := newClock()
	noisy := 12
	value := func(i int) map[string]float64 {
		i-- // call 0 is the warm-up
		a, b := 100.0, 5.0
		if i >= 0 && i < noisy {
			a += float64((i%3)-1) * 30 // 70, 100, 130, …
			b += float64(i%2) * 2
		}
		return map[string]float64{"a": a, "b": b}
	}
	ms := []run.Metric{{Name: "a", Unit: "ns", Better: run.Lower}, {Name: "b", Unit: "GB/s", Better: run.Higher}}
	f := &fake{name: "conv", metrics: ms, value: value, clk: clk, step: time.Second}
	r := one(t, f, opts(clk))

	want := -1
	var xa, xb []float64
	for n := 1; n <= 50; n++ {
		v := value(n)
		xa, xb = append(xa, v["a"]), append(xb, v["b"])
		if n >= 6 && stats.RelCIHalfWidth(xa, 0.95) <= 0.01 && stats.RelCIHalfWidth(xb, 0.95) <= 0.01 {
			want = n
			break
		}
	}
	if want <= noisy/2 || want > 50 {
		t.Fatalf("test is wrong: convergence at %d", want)
	}
	if got := len(r.Values("a")); got != want || r.Stop != run.StopPrecision {
		t.Errorf("stopped after %d samples (%s), want %d (precision)", got, r.Stop, want)
	}
	if len(r.Values("b")) != len(r.Values("a")) {
		t.Error("metrics have different sample counts")
	}
}

func TestMaxRunsCap(t *testing.T) {
	clk := newClock()
	f := &fake{name: "noisy", metrics: oneMetric, value: alternating(50, 150), clk: clk, step: time.Second}
	o := opts(clk)
	o.MaxRuns = 17
	r := one(t, f, o)
	if r.Stop != run.StopMaxRuns || len(r.Values("ops")) != 17 || !r.Complete {
		t.Errorf("stop %s after %d samples, want max-runs after 17", r.Stop, len(r.Values("ops")))
	}
	// An item's own cap wins over the session's.
	f2 := &fake{name: "noisy", metrics: oneMetric, value: alternating(50, 150), clk: clk, step: time.Second}
	runs, err := Run(context.Background(), []Item{{Probe: f2, Params: f2.Defaults(false), MaxRuns: 9}}, o)
	if err != nil || len(runs[0].Values("ops")) != 9 {
		t.Errorf("item MaxRuns 9: %d samples, %v", len(runs[0].Values("ops")), err)
	}
}

func TestFixedCount(t *testing.T) {
	clk := newClock()
	f := &fake{name: "n", metrics: oneMetric, value: alternating(50, 150), clk: clk, step: time.Second}
	o := opts(clk)
	o.Precision, o.MinRuns, o.MaxRuns = 0, 8, 8
	if r := one(t, f, o); r.Stop != run.StopFixed || len(r.Values("ops")) != 8 {
		t.Errorf("fixed count: stop %s after %d", r.Stop, len(r.Values("ops")))
	}
}

func TestTimeBudget(t *testing.T) {
	for _, c := range []struct{ setup, step, budget time.Duration }{
		{0, time.Second, 10 * time.Second},
		{3 * time.Second, 700 * time.Millisecond, 12 * time.Second},
	} {
		clk := newClock()
		f := &fake{name: "slow", metrics: oneMetric, value: alternating(50, 150), clk: clk, step: c.step, setup: c.setup}
		o := opts(clk)
		o.Budget = c.budget
		r := one(t, f, o)
		took := r.Ended.Sub(r.Started)
		if r.Stop != run.StopTimeBudget || !r.Complete {
			t.Errorf("%+v: stop %s, want time-budget", c, r.Stop)
		}
		// Within budget, and another iteration would not have fitted.
		if took > c.budget || took+c.step <= c.budget {
			t.Errorf("%+v: ran %s with budget %s and %s per iteration", c, took, c.budget, c.step)
		}
	}
}

// One iteration slowed by interference must not end the run early: the
// next iteration is predicted from the median duration, not the last.
func TestBudgetIgnoresOneSlowIteration(t *testing.T) {
	clk := newClock()
	f := &fake{name: "hiccup", metrics: oneMetric, value: alternating(50, 150), clk: clk,
		stepFn: func(i int) time.Duration {
			if i == 3 {
				return 8 * time.Second
			}
			return time.Second
		}}
	o := opts(clk)
	o.Budget = 20 * time.Second
	r := one(t, f, o)
	took := r.Ended.Sub(r.Started)
	if r.Stop != run.StopTimeBudget || took > o.Budget || took+time.Second <= o.Budget {
		t.Errorf("stop %s after %s (%d samples); want the budget used up to the last whole second", r.Stop, took, len(r.Values("ops")))
	}
}

// The time budget must not cut the run before a first measured value.
func TestBudgetSmallerThanOneIteration(t *testing.T) {
	clk := newClock()
	f := &fake{name: "slow", metrics: oneMetric, value: constant(1), clk: clk, step: 5 * time.Second}
	o := opts(clk)
	o.Budget = time.Second
	r := one(t, f, o)
	if len(r.Values("ops")) != 1 || r.Stop != run.StopTimeBudget {
		t.Errorf("%d samples, stop %s; want 1, time-budget", len(r.Values("ops")), r.Stop)
	}
}

func TestCancellationSavesPartialRunAndCleansUp(t *testing.T) {
	clk := newClock()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var scratchFile string
	f := &fake{name: "interrupted", metrics: oneMetric, value: alternating(1, 2), clk: clk, step: time.Second,
		onIter: func(env *probe.Env, i int) {
			if i == 0 {
				scratchFile = filepath.Join(env.Dir, "data")
				if err := os.WriteFile(scratchFile, []byte("x"), 0o644); err != nil {
					t.Error(err)
				}
			}
			if i == 9 { // Ctrl-C arrives during the 9th measured iteration
				cancel()
			}
		},
		iterErr: func(ctx context.Context, i int) error { return ctx.Err() },
	}
	second := &fake{name: "never", metrics: oneMetric, value: constant(1), clk: clk, step: time.Second}
	var saved []*run.Run
	o := opts(clk)
	o.OnRun = func(r *run.Run) error { saved = append(saved, r); return nil }
	o.Dir = t.TempDir()
	runs, err := Run(ctx, []Item{{Probe: f, Params: f.Defaults(false)}, {Probe: second, Params: second.Defaults(false)}}, o)
	if !errors.Is(err, ErrInterrupted) {
		t.Fatalf("err %v, want ErrInterrupted", err)
	}
	if len(runs) != 1 || len(saved) != 1 || saved[0] != runs[0] {
		t.Fatalf("runs %d saved %d; want the partial run returned and handed to OnRun", len(runs), len(saved))
	}
	r := runs[0]
	if r.Complete || r.Stop != run.StopInterrupted {
		t.Errorf("complete %v stop %s, want incomplete, interrupted", r.Complete, r.Stop)
	}
	if n := len(r.Values("ops")); n != 8 {
		t.Errorf("%d samples kept, want the 8 finished before the interruption", n)
	}
	if err := r.Validate(); err != nil {
		t.Errorf("partial run is invalid: %v", err)
	}
	if f.teardowns != 1 {
		t.Errorf("teardown called %d times", f.teardowns)
	}
	if _, err := os.Stat(f.dir); !os.IsNotExist(err) {
		t.Errorf("scratch dir %s left behind (%v)", f.dir, err)
	}
	if !strings.HasPrefix(f.dir, o.Dir) {
		t.Errorf("scratch dir %s not under --dir %s", f.dir, o.Dir)
	}
	if second.setups != 0 {
		t.Error("the next probe started after the interruption")
	}
}

func TestCancellationDuringSetup(t *testing.T) {
	clk := newClock()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	f := &fake{name: "s", metrics: oneMetric, value: constant(1), clk: clk, setupErr: context.Canceled}
	// A context cancelled before Run starts runs nothing at all.
	runs, err := Run(ctx, []Item{{Probe: f, Params: f.Defaults(false)}}, opts(clk))
	if !errors.Is(err, ErrInterrupted) || len(runs) != 0 || f.setups != 0 {
		t.Errorf("pre-cancelled: runs %d setups %d err %v", len(runs), f.setups, err)
	}
}

func TestProbeFailureIsRecordedAndSessionContinues(t *testing.T) {
	clk := newClock()
	bad := &fake{name: "bad", metrics: oneMetric, value: constant(1), clk: clk, step: time.Second,
		iterErr: func(_ context.Context, i int) error {
			if i == 3 {
				return errors.New("server died")
			}
			return nil
		}}
	noSetup := &fake{name: "nosetup", metrics: oneMetric, value: constant(1), setupErr: errors.New("fio not installed")}
	dropper := &fake{name: "dropper", metrics: []run.Metric{{Name: "a", Better: run.Lower}, {Name: "b", Better: run.Lower}},
		value: func(int) map[string]float64 { return map[string]float64{"a": 1} }}
	inf := &fake{name: "inf", metrics: oneMetric, value: constant(math.Inf(1))}
	good := &fake{name: "good", metrics: oneMetric, value: constant(1), clk: clk, step: time.Second}
	items := []Item{{Probe: bad, Params: probe.Params{}}, {Probe: noSetup, Params: probe.Params{}}, {Probe: dropper, Params: probe.Params{}}, {Probe: inf, Params: probe.Params{}}, {Probe: good, Params: probe.Params{}}}
	runs, err := Run(context.Background(), items, opts(clk))
	if err == nil || clierr.Code(err) != clierr.Runtime || !strings.Contains(err.Error(), "4 probe(s) failed") {
		t.Fatalf("err %v, want a runtime error naming 4 failures", err)
	}
	if len(runs) != 5 {
		t.Fatalf("%d runs, want 5", len(runs))
	}
	for i, want := range []string{"server died", "fio not installed", "no value for metric b", "+Inf"} {
		r := runs[i]
		if r.Stop != run.StopFailed || r.Complete || !strings.Contains(r.Error, want) {
			t.Errorf("%s: stop %s complete %v error %q; want failed with %q", r.Probe, r.Stop, r.Complete, r.Error, want)
		}
	}
	if n := len(runs[0].Values("ops")); n != 2 {
		t.Errorf("failed run kept %d samples, want the 2 before the failure", n)
	}
	if noSetup.teardowns != 1 {
		t.Error("teardown not called after a failed setup")
	}
	if runs[4].Stop != run.StopPrecision {
		t.Errorf("the probe after the failures: %s", runs[4].Stop)
	}
}

func TestBadInputRefusedBeforeRunning(t *testing.T) {
	clk := newClock()
	f := &fake{name: "f", metrics: oneMetric, value: constant(1), clk: clk}
	file := filepath.Join(t.TempDir(), "file")
	os.WriteFile(file, nil, 0o644)
	for _, c := range []struct {
		name  string
		items []Item
		mod   func(*Options)
		want  string
	}{
		{"bad param", []Item{{Probe: f, Params: probe.Params{"k": "bad"}}}, nil, "bad value"},
		{"nothing", nil, nil, "nothing to run"},
		{"dir missing", []Item{{Probe: f, Params: f.Defaults(false)}}, func(o *Options) { o.Dir = "/nonexistent/x" }, "Dir"},
		{"dir is a file", []Item{{Probe: f, Params: f.Defaults(false)}}, func(o *Options) { o.Dir = file }, "Dir"},
		{"dir on a pseudo filesystem", []Item{{Probe: f, Params: f.Defaults(false)}}, func(o *Options) { o.Dir = "/proc/self" }, "Dir"},
		{"precision", []Item{{Probe: f, Params: f.Defaults(false)}}, func(o *Options) { o.Precision = 2 }, "Precision"},
		{"cpus", []Item{{Probe: f, Params: f.Defaults(false)}}, func(o *Options) { o.CPUs = []int{4095} }, "CPUs"},
	} {
		o := opts(clk)
		if c.mod != nil {
			c.mod(&o)
		}
		_, err := Run(context.Background(), c.items, o)
		// A bad option is a typed error naming the field, never a flag:
		// the CLI words it.
		var oe *OptionError
		if errors.As(err, &oe) {
			if oe.Field != c.want || strings.Contains(err.Error(), "--") {
				t.Errorf("%s: option error %+v, want field %s and no flag name", c.name, oe, c.want)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.want) || clierr.Code(err) != clierr.Usage {
			t.Errorf("%s: err %v (code %d), want usage error with %q", c.name, err, clierr.Code(err), c.want)
		}
	}
	if f.setups != 0 {
		t.Error("a probe was set up despite bad input")
	}
}

func TestRunRecord(t *testing.T) {
	clk := newClock()
	f := &fake{name: "tool.x", metrics: oneMetric, value: constant(3), clk: clk, step: time.Second,
		onIter: func(env *probe.Env, i int) {
			if i == 0 {
				env.ToolVersion, env.Command, env.Notes = "x 1.2", []string{"/usr/bin/x", "--fast"}, []string{"x used direct I/O"}
			}
		}}
	o := opts(clk)
	o.Suite = "quick"
	runs, err := Run(context.Background(), []Item{{Probe: f, Params: probe.Params{"k": "v2"}, Notes: []string{"fallback note"}}}, o)
	if err != nil {
		t.Fatal(err)
	}
	r := runs[0]
	checks := map[string][2]string{
		"label":    {r.Label, "t"},
		"suite":    {r.Suite, "quick"},
		"probe":    {r.Probe, "tool.x"},
		"tool":     {r.Tool, "x"},
		"version":  {r.ToolVersion, "x 1.2"},
		"command":  {strings.Join(r.Command, " "), "/usr/bin/x --fast"},
		"param":    {r.Params["k"], "v2"},
		"host":     {r.Host, "h"},
		"snapshot": {r.SnapshotID, "s1"},
		"notes":    {strings.Join(r.Notes, "|"), "fallback note|x used direct I/O"},
		"id len":   {fmt.Sprint(len(r.ID)), "16"},
	}
	for k, v := range checks {
		if v[0] != v[1] {
			t.Errorf("%s = %q, want %q", k, v[0], v[1])
		}
	}
	if r.Precision != 0.01 || r.Schema != run.Schema {
		t.Errorf("precision %v schema %d", r.Precision, r.Schema)
	}
	for i, s := range r.Samples {
		if s.Iteration != i {
			t.Errorf("sample %d has iteration %d", i, s.Iteration)
		}
	}
}

func TestMonitorSeriesRecorded(t *testing.T) {
	root := t.TempDir()
	writeStat := func(ctxt, user int) {
		stat := fmt.Sprintf("cpu  %d 0 10 1000 0 0 0 0 0 0\ncpu0 %d 0 10 1000 0 0 0 0 0 0\nintr 5 0\nctxt %d\nbtime 1\nprocesses 1\nprocs_running 2\nprocs_blocked 0\nsoftirq 1 0 0 0 0 0 0 0 0 0 0\n", user, user, ctxt)
		// Replace atomically: the monitor reads concurrently.
		os.MkdirAll(filepath.Join(root, "proc"), 0o755)
		tmp := filepath.Join(root, "proc", ".stat")
		if err := os.WriteFile(tmp, []byte(stat), 0o644); err != nil {
			t.Error(err)
		}
		if err := os.Rename(tmp, filepath.Join(root, "proc", "stat")); err != nil {
			t.Error(err)
		}
	}
	writeStat(0, 0)
	os.WriteFile(filepath.Join(root, "proc", "meminfo"), []byte("MemAvailable: 123456 kB\n"), 0o644)
	fs, err := hostfs.New(root)
	if err != nil {
		t.Fatal(err)
	}
	sm, err := monitor.New(fs)
	if err != nil {
		t.Fatal(err)
	}
	f := &fake{name: "m", metrics: oneMetric, value: alternating(1, 2), onIter: func(_ *probe.Env, i int) {
		time.Sleep(4 * time.Millisecond)
		writeStat(1000*(i+1), 10*(i+1))
	}}
	o := Options{MinRuns: 6, MaxRuns: 20, Budget: time.Minute, Monitor: sm, MonitorInterval: 10 * time.Millisecond}
	runs, err := Run(context.Background(), []Item{{Probe: f, Params: probe.Params{}}}, o)
	if err != nil {
		t.Fatal(err)
	}
	r := runs[0]
	if len(r.Monitor) < 3 {
		t.Fatalf("%d monitor points over ~80ms at 10ms", len(r.Monitor))
	}
	var sawCtxt, sawUser bool
	for i, p := range r.Monitor {
		if p.MemAvailKiB != 123456 || p.RunQueue != 2 {
			t.Errorf("point %d: memavail %d runqueue %d", i, p.MemAvailKiB, p.RunQueue)
		}
		if i > 0 && p.T <= r.Monitor[i-1].T {
			t.Errorf("T not increasing at %d", i)
		}
		sawCtxt = sawCtxt || p.CtxSwitches > 0
		sawUser = sawUser || p.UserPct > 0
	}
	if !sawCtxt || !sawUser {
		t.Errorf("series missed the activity: ctxt %v user %v", sawCtxt, sawUser)
	}
	if !strings.Contains(strings.Join(r.Notes, " "), "PSI") {
		t.Errorf("notes do not say PSI is missing: %v", r.Notes)
	}
}

func TestPinning(t *testing.T) {
	orig, err := Affinity()
	if err != nil {
		t.Fatal(err)
	}
	if len(orig) < 2 {
		testenv.Unavailable(t, "needs two CPUs to tell pinned from unpinned")
	}
	target := orig[len(orig)-1]
	seen := make(chan []int, 1)
	f := &fake{name: "pin", metrics: oneMetric, value: constant(1), onIter: func(env *probe.Env, i int) {
		if i != 0 {
			return
		}
		// A fresh goroutine locked to its own (possibly new) OS thread
		// must be pinned too, not only the thread that called Pin.
		done := make(chan struct{})
		go func() {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			a, _ := Affinity()
			seen <- a
			close(done)
		}()
		<-done
	}}
	o := Options{CPUs: []int{target}, MinRuns: 6, Precision: 0.01}
	runs, err := Run(context.Background(), []Item{{Probe: f, Params: probe.Params{}}}, o)
	if err != nil {
		t.Fatal(err)
	}
	if got := <-seen; len(got) != 1 || got[0] != target {
		t.Errorf("probe thread affinity %v, want [%d]", got, target)
	}
	if runs[0].CPUs != cpuset.FormatList([]int{target}) || f.env.NCPU != 1 || len(f.env.CPUs) != 1 {
		t.Errorf("run CPUs %q env %v/%d", runs[0].CPUs, f.env.CPUs, f.env.NCPU)
	}
	// The real host-noise sentinel ran on the placement, around the run.
	if n := runs[0].Noise; n == nil || n.CPUs != runs[0].CPUs || n.Before == nil || n.After == nil ||
		n.Before.Seconds < noiseDuration.Seconds() || len(n.After.PerCPU) != 1 || n.After.PerCPU[0].CPU != target {
		t.Errorf("noise record %+v, want readings on CPU %d", n, target)
	}
	after, _ := Affinity()
	if fmt.Sprint(after) != fmt.Sprint(orig) {
		t.Errorf("affinity after the run %v, want restored %v", after, orig)
	}
}

func TestETA(t *testing.T) {
	o := Options{Precision: 0.01, MinRuns: 6}
	st := Status{N: 10, MaxRuns: 100, CIRel: 0.02, LastIter: time.Second, Budget: time.Hour}
	// Twice the target width needs about 4× the samples: 30 more.
	if got := eta(st, o); got != 30*time.Second {
		t.Errorf("eta = %s, want 30s", got)
	}
	st.Elapsed = time.Hour - 5*time.Second
	if got := eta(st, o); got != 5*time.Second {
		t.Errorf("eta near the budget = %s, want 5s", got)
	}
	st = Status{N: 2, MaxRuns: 4, CIRel: math.Inf(1), LastIter: time.Second, Budget: time.Hour}
	if got := eta(st, o); got != 2*time.Second {
		t.Errorf("eta before a CI, capped by max runs = %s, want 2s", got)
	}
}

func TestProgressOutput(t *testing.T) {
	var plain, tty bytes.Buffer
	for _, c := range []struct {
		buf *bytes.Buffer
		tty bool
	}{{&plain, false}, {&tty, true}} {
		clk := newClock()
		f := &fake{name: "prog", metrics: oneMetric, value: constant(1), clk: clk, step: time.Second}
		o := opts(clk)
		o.Progress = NewProgress(c.buf, c.tty)
		if _, err := Run(context.Background(), []Item{{Probe: f, Params: probe.Params{}}}, o); err != nil {
			t.Fatal(err)
		}
	}
	if strings.Contains(plain.String(), "\r") || strings.Contains(plain.String(), "\x1b") {
		t.Errorf("plain progress has terminal control codes: %q", plain.String())
	}
	if !strings.Contains(plain.String(), "[1/1] prog: starting") || !strings.Contains(plain.String(), "prog: 6 samples") {
		t.Errorf("plain progress: %q", plain.String())
	}
	if !strings.Contains(tty.String(), "\r\x1b[K[1/1] prog") {
		t.Errorf("tty progress does not redraw a line: %q", tty.String())
	}
}

// Options.Validate judges the limits as given and names the field.
func TestOptionsValidate(t *testing.T) {
	good := Options{Precision: DefaultPrecision, MinRuns: DefaultMinRuns, Budget: DefaultBudget}
	if err := good.Validate(); err != nil {
		t.Fatalf("defaults rejected: %v", err)
	}
	for _, c := range []struct {
		field string
		mod   func(*Options)
	}{
		{"Precision", func(o *Options) { o.Precision = -0.1 }},
		{"MinRuns", func(o *Options) { o.MinRuns = 0 }},
		{"MaxRuns", func(o *Options) { o.MinRuns, o.MaxRuns = 8, 7 }},
		{"MaxRuns", func(o *Options) { o.MaxRuns = -1 }},
		{"Warmup", func(o *Options) { o.Warmup = -1 }},
		{"Budget", func(o *Options) { o.Budget = 0 }},
	} {
		o := good
		c.mod(&o)
		var oe *OptionError
		if err := o.Validate(); !errors.As(err, &oe) || oe.Field != c.field {
			t.Errorf("%+v: err %v, want an OptionError on %s", o, err, c.field)
		}
	}
	o := good
	o.MaxRuns = 0 // the default, raised to MinRuns by the harness
	o.MinRuns = 200
	if err := o.Validate(); err != nil {
		t.Errorf("MaxRuns 0 with MinRuns 200: %v", err)
	}
}
