package compare

import (
	"testing"

	"github.com/perflab/perflab/internal/run"
	"github.com/perflab/perflab/internal/stats"
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
	// Nor may the drift calibration: with only the sides' own runs in the
	// history there is none, and one run a side decides nothing.
	d := c.Pairs[0].Deltas[0]
	if d.Drift.CalibrationRuns != 0 || d.Verdict != Inconclusive {
		t.Errorf("a −20%% change calibrated by the sides' own runs: %s %+v, want inconclusive, no calibration", d.Verdict, d.Drift)
	}
	// Real A/A history of the host (±1%) calibrates it: −20% is worse.
	history = append(history, runsAt("h", "h", 1000, 1010, 990, 1005)...)
	c, _ = Compare([]Side{side("A", a...), side("B", b...)}, Options{History: history})
	if d = c.Pairs[0].Deltas[0]; d.Drift.CalibrationRuns != 4 || d.Verdict != Worse {
		t.Errorf("−20%% against a calibrated ±1%% drift: %s %+v, want worse from 4 calibration runs", d.Verdict, d.Drift)
	}
}

// A shift that pooled samples call significant, but that is smaller than
// the runs' own spread, is not a change: the run is the unit. One larger
// than the spread is.
func TestVerdictWithinNoiseIsNotAChange(t *testing.T) {
	// Runs of A land at 1000 and once at 1040 (4% spread); B's at 1025.
	a, b := runsAt("a", "h", 1000, 1000, 1040, 1000), runsAt("b", "h", 1025, 1025, 1025, 1025)
	c, err := Compare([]Side{side("A", a...), side("B", b...)}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	d := c.Pairs[0].Deltas[0]
	// The sample-level test that perflab used to decide on is fooled.
	row := c.Metrics[d.Row]
	if _, p := stats.MannWhitney(row.Sides[0].Samples, row.Sides[1].Samples); p >= c.Alpha {
		t.Fatalf("the pooled samples must differ significantly for this test to mean anything: p %g", p)
	}
	if d.Verdict == Better || d.Verdict == Worse {
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
	if d := c.Pairs[0].Deltas[0]; d.Verdict != Better {
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
		c, err := Compare([]Side{side("A", replicate(mk("a", 1000, tc.runqA), 3, 0.003, 1)...), side("B", replicate(mk("b", tc.other, tc.runqB), 3, 0.003, 2)...)}, Options{})
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
