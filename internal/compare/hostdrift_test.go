package compare

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/run"
)

// withReference gives r before/after reference readings of a host whose
// speed is speed × (1 ± 0.3% noise).
func withReference(r *run.Run, rng *rand.Rand, speed float64) *run.Run {
	rd := func() *run.NoiseReading {
		f := speed * (1 + 0.003*rng.NormFloat64())
		return &run.NoiseReading{Reference: &run.Reference{CPUNsPerOp: 1.5 / f, MemGBps: 12 * f, SyscallNs: 200 / f}}
	}
	r.Noise = &run.Noise{Before: rd(), After: rd()}
	return r
}

// The whole host ran 6% slower on B (its reference says so): a cpu metric
// 6% lower is host drift, not a change; a cpu metric 25% lower is a change
// beyond the drift; the likely cause is host drift.
func TestHostDriftExplainsMatchingDeltas(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 6))
	mk := func(prefix string, speed float64, n int, tput, hot float64) []*run.Run {
		var out []*run.Run
		for i := range n {
			f := speed * (1 + 0.003*rng.NormFloat64())
			r := mkRun(prefix+string(rune('0'+i)), "cpu", "h",
				metricSpec{"events", "events/s", run.Higher, noisy(rng, 8, tput*f, 0.002)},
				metricSpec{"hot.events", "events/s", run.Higher, noisy(rng, 8, hot*f, 0.002)})
			out = append(out, withReference(r, rng, speed))
		}
		return out
	}
	a := mk("a", 1, 3, 1000, 1000)
	b := mk("b", 0.94, 3, 1000, 800/0.94) // hot: −20% on top of the host's −6%
	c, err := Compare([]Side{side("A", a...), side("B", b...)}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	p := c.Pairs[0]
	var cpu *HostDrift
	for i := range p.HostDrift {
		if p.HostDrift[i].Kind == RefCPU {
			cpu = &p.HostDrift[i]
		}
	}
	if cpu == nil || !cpu.Significant || math.Abs(cpu.SpeedPct+6) > 1 || cpu.Readings != [2]int{6, 6} {
		t.Fatalf("cpu host drift %+v, want −6%% from 6 readings a side", cpu)
	}
	ev, hot := findDelta(t, c, p, "events"), findDelta(t, c, p, "hot.events")
	if ev.Verdict != Worse || !ev.HostDrift {
		t.Errorf("events −6%% with the host −6%%: %s host_drift=%v, want worse explained by drift", ev.Verdict, ev.HostDrift)
	}
	if hot.Verdict != Worse || hot.HostDrift {
		t.Errorf("hot −25%% with the host −6%%: %s host_drift=%v, want worse beyond drift", hot.Verdict, hot.HostDrift)
	}
	if p.Changed != 1 {
		t.Errorf("changed = %d, want 1 (hot.events)", p.Changed)
	}
	if len(p.Causes) == 0 || p.Causes[0].Knob != "host-drift-cpu" || !p.Causes[0].Supported() {
		t.Errorf("causes %+v, want host-drift-cpu first", p.Causes)
	}
	// Without readings there is no host drift and nothing is excused.
	for _, r := range append(a, b...) {
		r.Noise = nil
	}
	c, _ = Compare([]Side{side("A", a...), side("B", b...)}, Options{})
	if len(c.Pairs[0].HostDrift) != 0 || findDelta(t, c, c.Pairs[0], "events").HostDrift || c.Pairs[0].Changed != 2 {
		t.Errorf("no readings: drift %+v changed %d", c.Pairs[0].HostDrift, c.Pairs[0].Changed)
	}
}

func TestRefKindOf(t *testing.T) {
	for _, c := range []struct {
		probe, metric, unit string
		want                RefKind
	}{
		{"cpu", "events.t1", "events/s", RefCPU},
		{"memory.bandwidth", "read.t1", "GB/s", RefMemory},
		{"memory.latency", "latency.64KiB", "ns", RefMemory},
		{"syscall", "getppid", "ns", RefSyscall},
		{"net.tcp", "latency", "us", RefSyscall},
		{"disk", "rand_write", "IOPS", ""},
	} {
		if got := refKindOf(c.probe, c.metric, c.unit); got != c.want {
			t.Errorf("%s %s %s: %q, want %q", c.probe, c.metric, c.unit, got, c.want)
		}
	}
}

func TestHeadline(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 6))
	mk := func(prefix string, speed float64, hot float64) []*run.Run {
		var out []*run.Run
		for i := range 3 {
			f := speed * (1 + 0.003*rng.NormFloat64())
			r := mkRun(prefix+string(rune('0'+i)), "cpu", "h",
				metricSpec{"events", "events/s", run.Higher, noisy(rng, 8, 1000*f, 0.002)},
				metricSpec{"hot.events", "events/s", run.Higher, noisy(rng, 8, hot*f, 0.002)})
			out = append(out, withReference(r, rng, speed))
		}
		return out
	}
	c, err := Compare([]Side{side("A", mk("a", 1, 1000)...), side("B", mk("b", 0.94, 800/0.94)...)}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	h := Headline(c, c.Pairs[0])
	for _, want := range []string{"no setting changed", "the host ran 6.", "% slower (", " reference)", "1 metric changed beyond drift (1 worse)", "1 moved with the host"} {
		if !strings.Contains(h, want) {
			t.Errorf("headline %q lacks %q", h, want)
		}
	}
	// One run a side: inconclusive, and the headline says why.
	c, _ = Compare([]Side{side("A", mk("a", 1, 1000)[0]), side("B", mk("b", 1, 1000)[0])}, Options{})
	if h := Headline(c, c.Pairs[0]); !strings.Contains(h, "2 inconclusive: one run a side") || !strings.Contains(h, "no metric changed") {
		t.Errorf("headline %q", h)
	}
}
