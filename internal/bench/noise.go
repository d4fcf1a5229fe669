package bench

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/perflab/perflab/internal/cpuset"
	"github.com/perflab/perflab/internal/hostnoise"
	"github.com/perflab/perflab/internal/run"
)

// The host-noise check: before a probe's first iteration and after its
// last, the harness spins a thread on each of the probe's CPUs for
// noiseDuration (package hostnoise) and records how much of that time the
// threads did not run. On hypervisors that report no steal time this is
// the only evidence in the run that the machine, not the probe, varied.
const (
	noiseDuration = 100 * time.Millisecond
	// warnNoiseLostPct is the lost time above which a run gets a note. It
	// is the default precision target (±1%): a host that takes more than
	// that from a spinning thread, in descheduling events of 0.2 ms and
	// more, can by itself move an iteration by more than the harness tries
	// to resolve. Quiet readings on the development guest were under 0.5%
	// (package hostnoise has the numbers).
	warnNoiseLostPct = 1.0
)

// NoiseFunc takes one host-noise reading on cpus over d; Options.NoiseCheck
// replaces hostnoise.Measure in tests.
type NoiseFunc func(ctx context.Context, cpus []int, d time.Duration) (hostnoise.Result, error)

// noiseChecker takes a run's host-noise readings.
type noiseChecker struct {
	measure   NoiseFunc
	reference ReferenceFunc // nil: no host-drift reference
	cpus      []int
	failed    bool // a reading failed and the run has a note saying why
}

// newNoiseChecker returns nil when the check is off.
func newNoiseChecker(opt Options) (*noiseChecker, string) {
	if opt.NoNoiseCheck {
		return nil, ""
	}
	cpus := opt.CPUs
	if len(cpus) == 0 {
		var err error
		if cpus, err = Affinity(); err != nil || len(cpus) == 0 {
			return nil, fmt.Sprintf("noise check: cannot list this process's CPUs: %v", err)
		}
	}
	m, ref := opt.NoiseCheck, opt.Reference
	if m == nil {
		m = hostnoise.Measure
		if ref == nil {
			ref = hostnoise.MeasureReference
		}
	}
	return &noiseChecker{measure: m, reference: ref, cpus: cpus}, ""
}

// read takes one reading and makes sure the run has a Noise record to put
// it in. A cancelled context yields nil; another failure yields nil and a
// note (once per run).
func (c *noiseChecker) read(ctx context.Context, r *run.Run) *run.NoiseReading {
	res, err := c.measure(ctx, c.cpus, noiseDuration)
	if err != nil {
		if ctx.Err() == nil && !c.failed {
			c.failed = true
			r.Notes = append(r.Notes, "noise check failed: "+err.Error())
		}
		return nil
	}
	if r.Noise == nil {
		r.Noise = &run.Noise{CPUs: cpuset.FormatList(c.cpus), ThresholdUs: micros(res.Threshold)}
	}
	nr := noiseReading(res)
	if c.reference != nil {
		ref, err := c.reference(ctx, c.cpus[0])
		switch {
		case err == nil:
			nr.Reference = &run.Reference{CPUNsPerOp: round(ref.CPUNsPerOp, 4), MemGBps: round(ref.MemGBps, 3), SyscallNs: round(ref.SyscallNs, 1), MemSmallPages: ref.MemSmallPages}
		case ctx.Err() == nil && !c.failed:
			c.failed = true
			r.Notes = append(r.Notes, "host-drift reference failed: "+err.Error())
		}
	}
	return nr
}

// ReferenceFunc takes one host-drift reference reading on cpu;
// Options.Reference replaces hostnoise.MeasureReference in tests.
type ReferenceFunc func(ctx context.Context, cpu int) (hostnoise.Reference, error)

// noiseReading converts a sentinel result for the run record, rounded to
// what a 0.1 s reading resolves (0.001% of it is 1 µs).
func noiseReading(res hostnoise.Result) *run.NoiseReading {
	nr := &run.NoiseReading{LostPct: round(res.LostPct, 3), InterruptionsPerS: round(res.InterruptionsPerSec, 1),
		MaxGapUs: round(micros(res.MaxGap), 1)}
	var spun time.Duration
	for _, c := range res.CPUs {
		spun += c.Spun
		nr.PerCPU = append(nr.PerCPU, run.NoiseCPU{CPU: c.CPU, LostPct: round(c.LostPct, 3),
			InterruptionsPerS: round(c.InterruptionsPerSec, 1), MaxGapUs: round(micros(c.MaxGap), 1)})
	}
	if len(res.CPUs) > 0 {
		nr.Seconds = round(spun.Seconds()/float64(len(res.CPUs)), 4)
	}
	return nr
}

// noiseNote is the run's note when the host took more than
// warnNoiseLostPct of the spinning threads' time, over both readings.
func noiseNote(n *run.Noise) string {
	if n == nil {
		return ""
	}
	var lost, secs, maxGap float64
	var parts []string
	for _, x := range []struct {
		name string
		r    *run.NoiseReading
	}{{"before", n.Before}, {"after", n.After}} {
		if x.r == nil {
			continue
		}
		w := x.r.Seconds
		if w <= 0 {
			w = noiseDuration.Seconds()
		}
		lost += x.r.LostPct * w
		secs += w
		maxGap = math.Max(maxGap, x.r.MaxGapUs)
		parts = append(parts, fmt.Sprintf("%s %.1f%%", x.name, x.r.LostPct))
	}
	if secs == 0 || lost/secs <= warnNoiseLostPct {
		return ""
	}
	detail := parts[0]
	if len(parts) == 2 {
		detail += ", " + parts[1]
	}
	return fmt.Sprintf("host noise: the hypervisor or other tasks took %.1f%% of an otherwise idle CPU's time (%s; longest gap %s) — spreads of that order are the host's, not the probe's",
		lost/secs, detail, gapText(maxGap))
}

func gapText(us float64) string {
	if us >= 1000 {
		return fmt.Sprintf("%.1f ms", us/1000)
	}
	return fmt.Sprintf("%.0f µs", us)
}

func micros(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

func round(x float64, digits int) float64 {
	p := math.Pow10(digits)
	return math.Round(x*p) / p
}
