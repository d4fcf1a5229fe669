// Package bench is the harness that turns a probe's single measurements into
// a run whose numbers can be trusted: it warms the probe up, repeats it until
// the 95% confidence interval of every metric's median is within the asked
// precision (or a repetition cap or time budget is reached, and says which),
// pins it to CPUs, records host activity alongside and how much CPU time the
// host took from a spinning thread just before and after (noise.go), and on
// Ctrl-C keeps what was measured as a run marked incomplete.
//
// A probe (package probe) only knows how to measure once. Everything about
// repetition lives here so that builtin probes and tool adapters get the
// same statistics, the same stop rule and the same record.
//
// The stop rule: after each measured iteration, once there are at least
// MinRuns samples, the harness computes for every metric the exact
// distribution-free 95% CI of the median (stats.MedianCI) and its half-width
// relative to the median; when the widest is ≤ Precision it stops
// (run.StopPrecision). Otherwise it stops at MaxRuns (run.StopMaxRuns), or
// before an iteration that would end past the time budget, judging by the
// median duration of the iterations so far (run.StopTimeBudget). The median's CI, not
// the mean's, because benchmark samples are skewed by interference and a few
// slow outliers must not decide when we are done.
package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/perflab/perflab/internal/clierr"
	"github.com/perflab/perflab/internal/cpuset"
	"github.com/perflab/perflab/internal/monitor"
	"github.com/perflab/perflab/internal/probe"
	"github.com/perflab/perflab/internal/run"
	"github.com/perflab/perflab/internal/snapshot"
	"github.com/perflab/perflab/internal/stats"
)

// Defaults of the harness options, also the CLI's flag defaults.
const (
	DefaultPrecision = 0.01
	DefaultMinRuns   = 6 // the fewest samples with a 95% CI of the median
	DefaultMaxRuns   = 100
	DefaultBudget    = 30 * time.Second
	DefaultWarmup    = 1
	Confidence       = stats.DefaultConfidence
)

// Item is one probe to run with its parameters and limits (a suite entry or
// a probe named on the command line). Zero limits take the Options' values.
type Item struct {
	Probe   probe.Probe
	Params  probe.Params // complete parameters (defaults already merged)
	Budget  time.Duration
	MaxRuns int
	Notes   []string // recorded in the run, e.g. which fallback was used
}

// Host identifies where the runs are measured, for the run record.
type Host struct {
	Name, MachineID, BootID, SnapshotID string
}

// Options control a bench session.
type Options struct {
	Precision float64       // target relative CI half-width; 0 disables the precision stop
	MinRuns   int           // samples before the precision stop may apply
	MaxRuns   int           // cap on measured iterations (per item unless the item says)
	Budget    time.Duration // per-item time budget from Setup on (unless the item says)
	Warmup    int           // discarded iterations before measuring
	CPUs      []int         // pin to these CPUs; nil runs unpinned
	Dir       string        // parent of the per-probe scratch directories ("" = os.TempDir)

	Label, Suite string
	Host         Host
	Version      string // perflab version, recorded as the tool version of builtin probes

	// Monitor samples host activity during each run (nil: no series).
	Monitor         *monitor.Sampler
	MonitorInterval time.Duration // default 1 s

	// NoNoiseCheck skips the host-noise readings taken before and after
	// each probe (noise.go); NoiseCheck replaces hostnoise.Measure (tests).
	NoNoiseCheck bool
	NoiseCheck   NoiseFunc
	// Reference replaces hostnoise.MeasureReference, the host-drift
	// reference read with each noise reading; with NoiseCheck set and
	// Reference nil, no reference is taken (tests).
	Reference ReferenceFunc

	Progress Progress  // nil: silent
	Log      io.Writer // probe diagnostics (nil: discarded)
	// Now is the clock for budgets, ETAs and timestamps (nil: time.Now).
	// Tests pass a fake one that their fake probes advance.
	Now func() time.Time
	// Repeat measures every item this many times, round-robin over the
	// items (all items once, then all again …), so that the host's drift
	// over the session falls on every probe alike; each run records its
	// round as Block. 0 or 1: once.
	Repeat int

	// OnRun is called with each finished run, complete or not, before the
	// next item starts, so a caller can store it at once and a later
	// interruption loses nothing already measured.
	OnRun func(*run.Run) error
}

func (o *Options) fill() {
	if o.MinRuns <= 0 {
		o.MinRuns = DefaultMinRuns
	}
	if o.MaxRuns <= 0 {
		o.MaxRuns = DefaultMaxRuns
	}
	if o.MaxRuns < o.MinRuns {
		o.MaxRuns = o.MinRuns
	}
	if o.Budget <= 0 {
		o.Budget = DefaultBudget
	}
	if o.Warmup < 0 {
		o.Warmup = 0
	}
	if o.MonitorInterval <= 0 {
		o.MonitorInterval = time.Second
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	if o.Progress == nil {
		o.Progress = nopProgress{}
	}
}

// ErrInterrupted is returned by Run when the context was cancelled; the runs
// returned alongside include the partial one.
var ErrInterrupted = errors.New("interrupted")

// MaxRepeat bounds --repeat and --blocks.
const MaxRepeat = 1000

// Run measures every item in order and returns the runs. A probe that fails
// yields a run with Stop=failed and the session goes on with the next item;
// the returned error then names the failures. Cancellation of ctx ends the
// session after recording the partial run (ErrInterrupted).
func Run(ctx context.Context, items []Item, opt Options) ([]*run.Run, error) {
	opt.fill()
	if err := Validate(items, opt); err != nil {
		return nil, err
	}
	scratch, err := scratchParent(opt.Dir)
	if err != nil {
		return nil, err
	}
	if len(opt.CPUs) > 0 {
		restore, err := Pin(opt.CPUs)
		if err != nil {
			return nil, err
		}
		defer restore()
	}
	swept := sweepScratch(scratch)
	var runs []*run.Run
	var failed []string
	var usage error
	sched := schedule(items, opt.Repeat)
	for i, sl := range sched {
		if ctx.Err() != nil {
			break
		}
		r, cause := runItem(ctx, i, len(sched), sl.item, opt, scratch)
		r.Block = sl.block
		if i == 0 && len(swept) > 0 {
			r.Notes = append(r.Notes, "removed scratch directories left by a perflab that was killed: "+strings.Join(swept, ", "))
		}
		runs = append(runs, r)
		opt.Progress.Done(r)
		if opt.OnRun != nil {
			if err := opt.OnRun(r); err != nil {
				return runs, err
			}
		}
		if r.Stop == run.StopFailed {
			failed = append(failed, r.Probe+": "+r.Error)
			// A mistake in the probe's definition (a metric pattern
			// that matches nothing) is the user's to fix: exit 2.
			if clierr.Code(cause) == clierr.Usage && usage == nil {
				usage = clierr.Usagef("", "%s", r.Error)
			}
		}
	}
	if ctx.Err() != nil {
		return runs, ErrInterrupted
	}
	if usage != nil {
		return runs, usage
	}
	if len(failed) > 0 {
		return runs, clierr.Runtimef("the other probes' runs were recorded", "%d probe(s) failed: %s", len(failed), strings.Join(failed, "; "))
	}
	return runs, nil
}

type slot struct {
	item  Item
	block int // round, 1-based, when repeating; 0 otherwise
}

// schedule lays the items out in rounds: n rounds of every item, in order.
func schedule(items []Item, n int) []slot {
	if n <= 1 {
		out := make([]slot, len(items))
		for i, it := range items {
			out[i] = slot{item: it}
		}
		return out
	}
	var out []slot
	for b := 1; b <= n; b++ {
		for _, it := range items {
			out = append(out, slot{item: it, block: b})
		}
	}
	return out
}

// Validate checks every item's parameters and the options (with their
// defaults filled in) before anything runs, so a typo in the last probe's
// --param does not surface after minutes of measuring. A bad option is an
// *OptionError.
func Validate(items []Item, opt Options) error {
	if len(items) == 0 {
		return clierr.Usagef("name a suite or probe; see 'perflab bench list'", "nothing to run")
	}
	opt.fill()
	if err := opt.Validate(); err != nil {
		return err
	}
	for _, it := range items {
		ms, err := it.Probe.Metrics(it.Params)
		if err != nil {
			var ce *clierr.Error
			if errors.As(err, &ce) {
				return err
			}
			return clierr.Usagef("see 'perflab bench list'", "%s: %v", it.Probe.Name(), err)
		}
		if len(ms) == 0 {
			return clierr.Usagef("", "%s measures nothing with parameters %s", it.Probe.Name(), it.Params)
		}
	}
	return nil
}

// CheckDir checks that dir can hold the probes' scratch space (a Dir
// *OptionError when not), for callers that want to fail before measuring.
func CheckDir(dir string) error {
	_, err := scratchParent(dir)
	return err
}

// scratchParent checks that the directory for probe scratch space exists
// and is writable now, rather than when the disk probe reaches it.
func scratchParent(dir string) (string, error) {
	if dir == "" {
		return os.TempDir(), nil
	}
	st, err := os.Stat(dir)
	if err != nil || !st.IsDir() {
		return "", &OptionError{"Dir", dir, "is not a directory", "create it or pick another"}
	}
	f, err := os.CreateTemp(dir, ".perflab-probe-*")
	if errors.Is(err, fs.ErrNotExist) {
		// The directory exists but cannot hold new files: /proc, /sys.
		return "", &OptionError{"Dir", dir, "does not accept new files (a pseudo filesystem such as /proc or /sys?)", "pick a directory on the filesystem to test"}
	}
	if err != nil {
		return "", &OptionError{"Dir", dir, fmt.Sprintf("is not writable: %v", errors.Unwrap(err)), "pick a writable one"}
	}
	f.Close()
	os.Remove(f.Name())
	return dir, nil
}

// Redactor is implemented by probes whose parameters may hold secrets (an
// HTTP header with a token): the run stores Redact's copy, the probe gets
// the real one.
type Redactor interface {
	Redact(probe.Params) probe.Params
}

// runItem measures one item; it never returns a nil run, and the error is
// why it failed (nil unless r.Stop is failed).
func runItem(ctx context.Context, idx, total int, it Item, opt Options, scratch string) (r *run.Run, cause error) {
	p := it.Probe
	budget, maxRuns := opt.Budget, opt.MaxRuns
	if it.Budget > 0 {
		budget = it.Budget
	}
	if it.MaxRuns > 0 {
		maxRuns = it.MaxRuns
	}
	if maxRuns < opt.MinRuns {
		maxRuns = opt.MinRuns
	}
	metrics, _ := p.Metrics(it.Params) // checked by Validate
	start := opt.Now()
	stored := it.Params.Merge(nil)
	if rd, ok := p.(Redactor); ok {
		stored = rd.Redact(stored)
	}
	r = &run.Run{
		Schema: run.Schema, ID: snapshot.NewID(), Label: opt.Label, Suite: opt.Suite, Probe: p.Name(),
		Params: map[string]string(stored), Host: opt.Host.Name,
		MachineID: opt.Host.MachineID, BootID: opt.Host.BootID, SnapshotID: opt.Host.SnapshotID,
		Started: start.UTC(), Precision: opt.Precision, Metrics: metrics,
		Notes: append([]string(nil), it.Notes...), ToolVersion: opt.Version,
	}
	if len(opt.CPUs) > 0 {
		r.CPUs = cpuset.FormatList(opt.CPUs)
	}
	st := Status{Index: idx, Total: total, Probe: p.Name(), Phase: PhaseSetup, Budget: budget, MaxRuns: maxRuns, CIRel: math.Inf(1)}
	opt.Progress.Start(st)

	finish := func(stop run.Stop, err error) (*run.Run, error) {
		r.Stop = stop
		r.Complete = stop != run.StopInterrupted && stop != run.StopFailed
		if err != nil {
			r.Error = err.Error()
		}
		r.Ended = opt.Now().UTC()
		return r, err
	}

	dir, err := makeScratch(scratch, safeName(p.Name()))
	if err != nil {
		return finish(run.StopFailed, fmt.Errorf("scratch directory: %w", err))
	}
	defer os.RemoveAll(dir)
	env := &probe.Env{Params: it.Params, Dir: dir, CPUs: opt.CPUs, NCPU: ncpu(opt.CPUs), Log: opt.Log}

	setupErr := p.Setup(ctx, env)
	// Teardown also after a failed Setup: the contract says it must cope,
	// and a half-started server must not outlive the run.
	defer func() {
		if err := p.Teardown(env); err != nil {
			r.Notes = append(r.Notes, "teardown failed: "+err.Error())
		}
	}()
	defer func() { recordEnv(r, env) }()
	if setupErr != nil {
		if ctx.Err() != nil {
			return finish(run.StopInterrupted, nil)
		}
		return finish(run.StopFailed, fmt.Errorf("setup: %w", setupErr))
	}

	// The host-noise readings bracket the measurement. The closing one is
	// deferred before the monitor's stop is, so it runs after the series
	// has ended (the spinners would show in it as load) and before
	// Teardown, with the probe's servers still up, as they were measured.
	nc, note := newNoiseChecker(opt)
	if note != "" {
		r.Notes = append(r.Notes, note)
	}
	if nc != nil {
		if nr := nc.read(ctx, r); nr != nil {
			r.Noise.Before = nr
		}
		if ctx.Err() != nil {
			return finish(run.StopInterrupted, nil)
		}
		defer func() {
			if r.Complete && ctx.Err() == nil {
				if nr := nc.read(ctx, r); nr != nil {
					r.Noise.After = nr
				}
				r.Ended = opt.Now().UTC()
			}
			if note := noiseNote(r.Noise); note != "" {
				r.Notes = append(r.Notes, note)
			}
		}()
	}

	var rec *monitor.Recorder
	if opt.Monitor != nil {
		r.Notes = append(r.Notes, prefixed("monitor: ", opt.Monitor.Missing())...)
		rec = monitor.Start(opt.Monitor, opt.MonitorInterval, start, opt.Now)
		defer func() {
			pts, fails := rec.Stop()
			r.Monitor = pts
			r.Notes = append(r.Notes, monitor.Warnings(pts)...)
			if fails > 0 {
				r.Notes = append(r.Notes, fmt.Sprintf("monitor: %d samples could not be read", fails))
			}
		}()
	}

	// durs are the iteration times so far; their median predicts the next
	// one, so that one iteration slowed by interference does not end the
	// run early and the budget is still kept on average.
	var durs []float64
	next := func() time.Duration {
		if len(durs) == 0 {
			return 0
		}
		return time.Duration(stats.Median(durs))
	}
	// Warm-up: caches, page tables, CPU frequency and the probe's own
	// servers settle; the values are thrown away.
	for i := 0; i < opt.Warmup; i++ {
		st.Phase, st.Warmup, st.Elapsed = PhaseWarmup, i+1, opt.Now().Sub(start)
		opt.Progress.Update(st)
		t := opt.Now()
		if _, err := p.Iterate(ctx, env); err != nil {
			if ctx.Err() != nil {
				return finish(run.StopInterrupted, nil)
			}
			return finish(run.StopFailed, fmt.Errorf("warm-up: %w", err))
		}
		durs = append(durs, float64(opt.Now().Sub(t)))
	}

	values := make(map[string][]float64, len(metrics))
	st.Phase = PhaseMeasure
	for n := 0; ; n++ {
		elapsed := opt.Now().Sub(start)
		// Stop before an iteration that would overrun the budget; the
		// first measured iteration always runs so the run has a value.
		if n > 0 && elapsed+next() > budget {
			return finish(run.StopTimeBudget, nil)
		}
		if ctx.Err() != nil {
			return finish(run.StopInterrupted, nil)
		}
		t := opt.Now()
		got, err := p.Iterate(ctx, env)
		if err != nil {
			if ctx.Err() != nil {
				return finish(run.StopInterrupted, nil)
			}
			return finish(run.StopFailed, fmt.Errorf("iteration %d: %w", n, err))
		}
		durs = append(durs, float64(opt.Now().Sub(t)))
		if err := checkValues(got, metrics); err != nil {
			return finish(run.StopFailed, fmt.Errorf("iteration %d: %w", n, err))
		}
		for _, m := range metrics {
			values[m.Name] = append(values[m.Name], got[m.Name])
			r.Samples = append(r.Samples, run.Sample{Metric: m.Name, Value: got[m.Name], Iteration: n})
		}
		st.N, st.Elapsed, st.LastIter = n+1, opt.Now().Sub(start), next()
		st.Worst, st.CIRel = widest(metrics, values)
		st.ETA = eta(st, opt)
		opt.Progress.Update(st)
		if stop, done := decide(n+1, st.CIRel, opt, maxRuns); done {
			return finish(stop, nil)
		}
	}
}

// decide applies the stop rule after n measured iterations whose widest
// relative CI half-width is ciRel.
func decide(n int, ciRel float64, opt Options, maxRuns int) (run.Stop, bool) {
	if opt.Precision > 0 && n >= opt.MinRuns && ciRel <= opt.Precision {
		return run.StopPrecision, true
	}
	if n >= maxRuns {
		if maxRuns == opt.MinRuns && opt.Precision == 0 {
			return run.StopFixed, true
		}
		return run.StopMaxRuns, true
	}
	return "", false
}

// widest returns the metric whose median CI is relatively widest, and that
// width (+Inf while a metric has too few samples for an interval).
func widest(metrics []run.Metric, values map[string][]float64) (string, float64) {
	worst, w := "", -1.0
	for _, m := range metrics {
		rel := stats.RelCIHalfWidth(values[m.Name], Confidence)
		if rel > w {
			worst, w = m.Name, rel
		}
	}
	return worst, w
}

// checkValues insists on exactly one finite value per declared metric: a
// probe that silently drops a metric would otherwise bias its median.
func checkValues(got map[string]float64, metrics []run.Metric) error {
	for _, m := range metrics {
		v, ok := got[m.Name]
		if !ok {
			return fmt.Errorf("probe returned no value for metric %s", m.Name)
		}
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("probe returned %v for metric %s", v, m.Name)
		}
	}
	if len(got) != len(metrics) {
		var extra []string
		for k := range got {
			found := false
			for _, m := range metrics {
				found = found || m.Name == k
			}
			if !found {
				extra = append(extra, k)
			}
		}
		sort.Strings(extra)
		return fmt.Errorf("probe returned undeclared metrics %v", extra)
	}
	return nil
}

// recordEnv copies what a tool adapter reported back into the run.
func recordEnv(r *run.Run, env *probe.Env) {
	if env.ToolVersion != "" {
		r.ToolVersion = env.ToolVersion
	}
	if len(env.Command) > 0 {
		r.Command = append([]string(nil), env.Command...)
		r.Tool = filepath.Base(env.Command[0])
	}
	r.Notes = append(r.Notes, env.Notes...)
	r.Notes = append(r.Notes, CurveNotes(r)...)
}

func ncpu(cpus []int) int {
	if len(cpus) > 0 {
		return len(cpus)
	}
	return allowedCPUs()
}

func safeName(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '.' || c == '-') {
			b[i] = '_'
		}
	}
	return string(b)
}

func prefixed(p string, xs []string) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = p + x
	}
	return out
}
