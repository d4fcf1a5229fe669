package e2e

import (
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/bench"
	"github.com/perflab/perflab/internal/compare"
	"github.com/perflab/perflab/internal/probe"
	"github.com/perflab/perflab/internal/probe/builtin"
	"github.com/perflab/perflab/internal/run"
	"github.com/perflab/perflab/internal/stats"
	"github.com/perflab/perflab/internal/testenv"
	"golang.org/x/sys/unix"
)

// dutyEnv makes the test binary a duty-cycled neighbour: pinned to the CPU
// named in it, it spins dutyOn and sleeps dutyOff, about 20% of one CPU:
// an effect a session resolves also beside a build (5% was lost in the
// noise of a loaded machine: 1.04 [0.80, 1.35] at load 9).
const dutyEnv = "PERFLAB_E2E_DUTY_CPU"

const (
	dutyOn  = 4 * time.Millisecond
	dutyOff = 16 * time.Millisecond
	// dutyLife: a neighbour ends itself after this long, so that a
	// crashed test cannot leave it behind for long. Its share is
	// accounted over at most this much of its life.
	dutyLife = 2 * time.Minute
)

func init() {
	if s := os.Getenv(dutyEnv); s != "" {
		duty(s)
		os.Exit(0)
	}
}

func duty(cpuArg string) {
	cpu, _ := strconv.Atoi(cpuArg)
	runtime.GOMAXPROCS(1)
	runtime.LockOSThread()
	var set unix.CPUSet
	set.Set(cpu)
	_ = unix.SchedSetaffinity(0, &set)
	deadline := time.Now().Add(dutyLife)
	x := uint64(1)
	for time.Now().Before(deadline) {
		end := time.Now().Add(dutyOn)
		for time.Now().Before(end) {
			x = x*6364136223846793005 + 1442695040888963407
		}
		time.Sleep(dutyOff)
	}
	_ = x
}

// neighbour runs the duty-cycled process while its state is measured and
// accounts the CPU time it took, so the test knows the true effect.
type neighbour struct {
	t       *testing.T
	cpu     int
	cmd     *exec.Cmd
	started time.Time
	cpuTime time.Duration // consumed by the neighbour, over all its lives
	wall    time.Duration // the neighbour lived this long, in total
}

func (n *neighbour) start(context.Context) error {
	n.stop(context.Background())
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), dutyEnv+"="+strconv.Itoa(n.cpu))
	// No Pdeathsig: it fires when the forking thread exits, and the
	// harness exits its pinned threads. The neighbour ends itself after
	// dutyLife, and the test's cleanup kills it.
	if err := cmd.Start(); err != nil {
		return err
	}
	n.cmd, n.started = cmd, time.Now()
	return nil
}

func (n *neighbour) stop(context.Context) error {
	if n.cmd == nil {
		return nil
	}
	n.cpuTime += procCPUTime(n.t, n.cmd.Process.Pid)
	// On a loaded host one state can outlast the neighbour's own limit;
	// it took no CPU after that, so its life, not the state, is the wall.
	n.wall += min(time.Since(n.started), dutyLife)
	_ = n.cmd.Process.Kill()
	_ = n.cmd.Wait()
	n.cmd = nil
	return nil
}

// procCPUTime is the time a live process has run on a CPU, in
// nanoseconds, from the scheduler's own accounting (/proc/PID/schedstat,
// first field): exact, where utime+stime in /proc/PID/stat is sampled at
// the 10 ms tick and overstates a process that runs 1 ms in 20 by up to a
// tick per wake-up.
func procCPUTime(t *testing.T, pid int) time.Duration {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/schedstat")
	if err != nil {
		t.Fatalf("reading the neighbour's CPU time: %v", err)
	}
	f := strings.Fields(string(data))
	ns, err := strconv.ParseInt(f[0], 10, 64)
	if err != nil {
		t.Fatalf("schedstat %q: %v", data, err)
	}
	return time.Duration(ns)
}

func interleaveCPU(t *testing.T, states []bench.State, blocks int) (*bench.Interleaved, []*run.Run) {
	t.Helper()
	return interleaveCPUWith(t, bench.InterleaveOptions{States: states, Blocks: blocks, MinBlocks: blocks})
}

func interleaveCPUWith(t *testing.T, io bench.InterleaveOptions) (*bench.Interleaved, []*run.Run) {
	t.Helper()
	p, ok := bench.NewCatalog(builtin.All()...).Probe("cpu")
	if !ok {
		t.Fatal("no cpu probe")
	}
	params := p.Defaults(true).Merge(probe.Params{"duration": "100ms", "max_prime": "5000", "threads": "1"})
	item := bench.Item{Probe: p, Params: params, Budget: 10 * time.Second, MaxRuns: 12}
	opt := bench.Options{Precision: 0, MinRuns: bench.DefaultMinRuns, MaxRuns: 12, Budget: 10 * time.Second,
		Warmup: 1, Label: "e2e", Version: "e2e", CPUs: []int{runtime.NumCPU() - 1}, Host: bench.Host{Name: "e2e"}}
	runs, res, err := bench.Interleave(context.Background(), []bench.Item{item}, io, opt)
	if err != nil {
		t.Fatal(err)
	}
	return res, runs
}

// TestInterleavedNeighbour: a neighbour pinned next to the probe and taking
// about 20% of its CPU is found by interleaved states, with an interval that
// covers the CPU share the neighbour really took; the same command with
// both states equal reads equivalent. This is 'perflab bench cpu --state
// alone=… --state neighbour=…' through the engine the CLI uses.
func TestInterleavedNeighbour(t *testing.T) {
	testenv.Short(t)
	cpu := runtime.NumCPU() - 1
	n := &neighbour{t: t, cpu: cpu}
	t.Cleanup(func() { n.stop(context.Background()) })
	// The engine of 'bench --until-verdict': at least 16 blocks (on a
	// quiet VM they find the neighbour: 0.947 [0.910, 0.985] for the
	// earlier 6% one), then a look after every block at its Pocock share
	// of alpha until the effect has a verdict, for up to 4 minutes. Beside
	// a from-scratch build 16 blocks were not always enough (0.953 [0.812,
	// 1.117], an A/A pair ±45% at 99.9%); the sequential stop buys the
	// blocks the noise needs without a fixed count tuned to one load.
	res, runs := interleaveCPUWith(t, bench.InterleaveOptions{
		States: []bench.State{{Name: "alone", Apply: n.stop}, {Name: "neighbour", Apply: n.start}},
		Blocks: 96, MinBlocks: 16, UntilVerdict: true, MaxTime: 4 * time.Minute})
	n.stop(context.Background())
	t.Logf("stopped after %d blocks (%s), %.0f s, at alpha %.4f", res.Blocks, res.Stopped, res.Seconds, res.Alpha)
	share := n.cpuTime.Seconds() / n.wall.Seconds()
	t.Logf("the neighbour took %.1f%% of CPU %d (%s of %s)", 100*share, cpu, n.cpuTime, n.wall.Round(time.Millisecond))
	if share < 0.10 || share > 0.35 {
		t.Fatalf("the neighbour took %.1f%% of a CPU, want about 20%%", 100*share)
	}
	found := false
	verdicts := map[string]compare.Verdict{}
	for _, e := range res.Effects {
		verdicts[e.Metric] = e.Verdict
		if !strings.HasPrefix(e.Metric, "events_per_sec") {
			continue
		}
		found = true
		t.Logf("%s: neighbour/alone %.4f [%.4f, %.4f] over %d blocks; CPU-share model %.4f", e.Metric, e.Ratio, e.Lo, e.Hi, e.Blocks, 1-share)
		// Detected: the 95% interval excludes no effect. The loss is
		// dozens of its standard errors (0.2 against a standard
		// error near 0.001 in quiet recorded runs), so chance alone does not
		// fail it.
		if e.Hi >= 1 {
			t.Errorf("%s: interval [%.4f, %.4f] does not exclude no effect", e.Metric, e.Lo, e.Hi)
		}
		if err := agreesWithShare(e, level(res), share); err != nil {
			t.Errorf("%s: %v", e.Metric, err)
		}
	}
	if !found {
		t.Fatal("no events_per_sec effect")
	}
	// compare on the stored runs pairs the blocks and says worse.
	var a, b []*run.Run
	for _, r := range runs {
		if r.State == "alone" {
			a = append(a, r)
		} else {
			b = append(b, r)
		}
	}
	c, err := compare.Compare([]compare.Side{side("alone", a), side("neighbour", b)}, compare.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// One verdict: compare of the stored blocks pairs them as the
	// engine did and says what the engine's effect says. (Whether that is
	// "worse" depends on the interval clearing the ±1% margin, which 16
	// blocks of a 6% effect do in some sessions on this VM and not in
	// others — 0.933 [0.875, 0.995] read "same" on a quiet machine — so
	// the detection above, not the margin, is this proof's claim.)
	for _, d := range c.Pairs[0].Deltas {
		row := c.Metrics[d.Row]
		if !strings.HasPrefix(row.Metric, "events_per_sec") {
			continue
		}
		if d.Drift.Source != "blocks" || d.Verdict != verdicts[row.Metric] || d.Verdict == compare.Better {
			t.Errorf("compare of the stored blocks: %s %s from %s, the engine said %s", row.Metric, d.Verdict, d.Drift.Source, verdicts[row.Metric])
		}
	}

	// A/A: both states leave the CPU alone.
	nop := func(context.Context) error { return nil }
	aa, _ := interleaveCPU(t, []bench.State{{Name: "A", Apply: nop}, {Name: "B", Apply: nop}}, 8)
	for _, e := range aa.Effects {
		lo, hi := widen(e, level(aa), aaConfidence)
		t.Logf("A/A %s: %.4f, 95%% [%.4f, %.4f], %.1f%% [%.4f, %.4f]", e.Metric, e.Ratio, e.Lo, e.Hi, 100*aaConfidence, lo, hi)
		if lo > 1 || hi < 1 {
			t.Errorf("A/A %s: the %.1f%% interval [%.4f, %.4f] excludes 1", e.Metric, 100*aaConfidence, lo, hi)
		}
	}
}

// aaConfidence is the interval an A/A session must cover 1 with. A 95%
// interval misses 1 in one A/A session in twenty by construction, so
// asserting it would fail CI one run in twenty; the 99.9% interval fails
// one in a thousand (per metric), which is what a proof run on every
// landing can afford.
const aaConfidence = 0.999

// level is the confidence of a session's intervals: 95%, or with
// UntilVerdict the stopping look's 1 − alpha.
func level(res *bench.Interleaved) float64 {
	if res.Alpha > 0 {
		return 1 - res.Alpha
	}
	return stats.DefaultConfidence
}

// widen turns an effect's interval at confidence from into the conf
// interval of the same paired t estimate: the interval is exp(d̄ ± q·SE)
// with q the t quantile for the effect's Blocks−1 degrees of freedom, so
// the half-width in log space scales by the ratio of the quantiles.
func widen(e bench.Effect, from, conf float64) (lo, hi float64) {
	if e.Blocks < 2 || !(e.Lo > 0) || !(e.Ratio > 0) {
		return math.Inf(-1), math.Inf(1)
	}
	df := float64(e.Blocks - 1)
	k := stats.TQuantile((1+conf)/2, df) / stats.TQuantile((1+from)/2, df)
	d := math.Log(e.Ratio)
	return math.Exp(d - k*(d-math.Log(e.Lo))), math.Exp(d + k*(math.Log(e.Hi)-d))
}

// agreesWithShare checks the measured loss 1−ratio against the CPU-share
// model: the neighbour took share of the CPU over its whole life. The model
// is not the truth to the third decimal: the share is measured over the
// neighbour's life, the probe's loss over the measurement; while the CPU
// is contended the neighbour's 1 ms spins (timed on the wall clock) are
// preempted and take less CPU than when the probe is idle; sharing a CPU
// also costs switches and cache; and on a shared VM steal time lands on
// both. The loss is a fraction of the share (0.87 in the CI run that failed the old ±0.3-point check:
// loss 0.0506, share 0.0583). So the measurement agrees with the model when the loss is
// within modelSlack of the share plus the measurement's own uncertainty —
// the 99.9% half-width of its interval — and nothing tighter: the
// session measures the effect to a fraction of a point, but the model
// only knows it to within a fraction of itself.
func agreesWithShare(e bench.Effect, from, share float64) error {
	const modelSlack = 0.35 // of the share: the model's own error, see above
	lo, hi := widen(e, from, max(from, aaConfidence))
	loss, lossLo, lossHi := 1-e.Ratio, 1-hi, 1-lo
	tol := modelSlack * share
	if lossHi < share-tol || lossLo > share+tol {
		return fmt.Errorf("loss %.4f (99.9%% [%.4f, %.4f]) disagrees with the neighbour's CPU share %.4f ± %.4f (%.0f%% model slack)",
			loss, lossLo, lossHi, share, tol, 100*modelSlack)
	}
	return nil
}
