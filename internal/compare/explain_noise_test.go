package compare

import (
	"testing"

	"github.com/perflab/perflab/internal/run"
)

// runsAt makes one run per centre, five identical samples each, so every
// run is tight and the only variation is between runs.
func runsAt(prefix, host string, centres ...float64) []*run.Run {
	var out []*run.Run
	for i, c := range centres {
		out = append(out, mkRun(prefix+string(rune('0'+i)), "cpu", host, metricSpec{"m", "x/s", run.Higher, []float64{c, c * 1.001, c * 0.999, c, c * 1.0005}}))
	}
	return out
}

// The store's history holds the runs of every side; a side's noise floor
// must not count the other side's runs, or the difference under test
// would pass as run-to-run noise.
func TestNoiseFloorIgnoresOtherSides(t *testing.T) {
	a, b := runsAt("a", "h", 1000), runsAt("b", "h", 800)
	history := append(append([]*run.Run{}, a...), b...)
	c, err := Compare([]Side{side("A", a...), side("B", b...)}, Options{History: history})
	if err != nil {
		t.Fatal(err)
	}
	for si, s := range c.Metrics[0].Sides {
		if s.Noise != nil {
			t.Errorf("side %d has a noise floor %+v from the other side's run", si, s.Noise)
		}
	}
	d := c.Pairs[0].Deltas[0]
	if d.WithinNoise || d.Verdict != Worse {
		t.Errorf("a −20%% change is %s (within noise %v), want worse", d.Verdict, d.WithinNoise)
	}
}

// A significant shift smaller than the measured run-to-run spread is not a
// change (A/A); one larger than it is.
func TestVerdictWithinNoiseIsNotAChange(t *testing.T) {
	// Runs of A land at 1000 and once at 1040 (4% spread); B's at 1025.
	// Pooled, the samples differ significantly, but by less than the spread.
	a, b := runsAt("a", "h", 1000, 1000, 1040, 1000), runsAt("b", "h", 1025, 1025, 1025, 1025)
	c, err := Compare([]Side{side("A", a...), side("B", b...)}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	d := c.Pairs[0].Deltas[0]
	if d.PAdj >= c.Alpha {
		t.Fatalf("the pooled samples must differ significantly for this test to mean anything: p_adj %g", d.PAdj)
	}
	if !d.WithinNoise || d.Verdict == Better || d.Verdict == Worse {
		t.Errorf("Δ %+.1f%% within a 4%% A/A spread is %s (within noise %v), want same or equivalent", d.DeltaPct, d.Verdict, d.WithinNoise)
	}
	if n := c.Pairs[0].Counts[Better] + c.Pairs[0].Counts[Worse]; n != 0 {
		t.Errorf("%d changes counted", n)
	}

	// The same spread with B 10% higher: a change.
	b = runsAt("b", "h", 1120, 1130, 1125, 1135)
	c, err = Compare([]Side{side("A", a...), side("B", b...)}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if d := c.Pairs[0].Deltas[0]; d.WithinNoise || d.Verdict != Better {
		t.Errorf("+10%% beyond a 4%% spread is %s (within noise %v), want better", d.Verdict, d.WithinNoise)
	}
}

// A busier host explains metrics that got worse, not ones that got better:
// a monitor cause is supported only by metrics that moved its way.
func TestMonitorCauseDirection(t *testing.T) {
	mk := func(id string, centre float64, runq int64) *run.Run {
		r := mkRun(id, "cpu", "h", metricSpec{"events", "events/s", run.Higher, []float64{centre, centre * 1.001, centre * 0.999, centre * 1.002, centre * 0.998, centre}})
		for i := 0; i < 8; i++ {
			r.Monitor = append(r.Monitor, run.MonitorPoint{T: float64(i), RunQueue: runq + int64(i%2)})
		}
		return r
	}
	for _, tc := range []struct {
		name         string
		other        float64
		runqA, runqB int64
		supported    bool
	}{
		{"busier and slower", 500, 1, 4, true},
		{"idler and slower", 500, 4, 1, false},
		{"idler and faster", 1500, 4, 1, true},
		{"busier and faster", 1500, 1, 4, false},
	} {
		c, err := Compare([]Side{side("A", mk("a", 1000, tc.runqA)), side("B", mk("b", tc.other, tc.runqB))}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		p := c.Pairs[0]
		var cause *Cause
		for i := range p.Causes {
			if p.Causes[i].Knob == "ctxsw" {
				cause = &p.Causes[i]
			}
		}
		if cause == nil {
			t.Fatalf("%s: the run-queue difference is not a cause: %+v", tc.name, p.Causes)
		}
		if cause.Supported() != tc.supported {
			t.Errorf("%s: run queue %d → %d with %s supported=%v, want %v", tc.name, tc.runqA, tc.runqB, p.Deltas[0].Verdict, cause.Supported(), tc.supported)
		}
	}
}
