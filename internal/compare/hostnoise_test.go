package compare

import (
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/run"
)

// noisyRuns makes one run per pair of readings (before, after lost_pct),
// each with six tight samples around centre events/s.
func noisyRuns(prefix string, centre float64, readings ...[2]float64) []*run.Run {
	var out []*run.Run
	for i, rd := range readings {
		c := centre
		r := mkRun(prefix+string(rune('0'+i)), "cpu", "h", metricSpec{"events", "events/s", run.Higher,
			[]float64{c, c * 1.001, c * 0.999, c * 1.002, c * 0.998, c}})
		r.Noise = &run.Noise{CPUs: "0-1", ThresholdUs: 200,
			Before: &run.NoiseReading{Seconds: 0.1, LostPct: rd[0], MaxGapUs: 1500},
			After:  &run.NoiseReading{Seconds: 0.1, LostPct: rd[1], MaxGapUs: 2500}}
		out = append(out, r)
	}
	return out
}

func noiseCause(p Pair) *Cause {
	for i := range p.Causes {
		if p.Causes[i].Knob == "host-noise" {
			return &p.Causes[i]
		}
	}
	return nil
}

// Side B's host took 3–5% of a spinning thread's time where A's took
// under 0.5%, and B is 10% slower: host noise is a likely cause, supported
// by the metric that got worse, with both means in its difference.
func TestHostNoiseIsALikelyCause(t *testing.T) {
	a := noisyRuns("a", 1000, [2]float64{0.1, 0.3}, [2]float64{0, 0.4}, [2]float64{0.2, 0.2})
	b := noisyRuns("b", 900, [2]float64{3.1, 4.6}, [2]float64{3.8, 5.0}, [2]float64{4.2, 3.9})
	c, err := Compare([]Side{side("A", a...), side("B", b...)}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	p := c.Pairs[0]
	if v := p.Deltas[0].Verdict; v != Worse {
		t.Fatalf("−10%% is %s, want worse for this test to mean anything", v)
	}
	cause := noiseCause(p)
	if cause == nil {
		t.Fatalf("host noise 0.2%% → 4.1%% is not among the likely causes: %+v", p.Causes)
	}
	if !cause.Supported() || cause.Source != "hostnoise" || len(cause.Diffs) != 1 {
		t.Errorf("cause %+v: want supported, source hostnoise, one difference", cause)
	}
	d := cause.Diffs[0]
	if d.Path != "hostnoise.lost_pct" || d.Before != "0.2% (6 readings)" || d.After != "4.1% (6 readings)" {
		t.Errorf("difference %+v, want hostnoise.lost_pct 0.2%% (6 readings) → 4.1%% (6 readings)", d)
	}
	if !strings.Contains(cause.Why, "spinning thread") {
		t.Errorf("why %q does not say what the figure is", cause.Why)
	}

	// The other way round B is the quieter host and faster: the noise
	// explains the improvement. A quieter host does not explain a slowdown.
	c, _ = Compare([]Side{side("B", b...), side("A", a...)}, Options{})
	if cause := noiseCause(c.Pairs[0]); cause == nil || !cause.Supported() {
		t.Errorf("a quieter, faster side: cause %+v, want a supported host-noise cause", cause)
	}
	slowQuiet := noisyRuns("q", 800, [2]float64{0.1, 0.3}, [2]float64{0, 0.4}, [2]float64{0.2, 0.2})
	c, _ = Compare([]Side{side("B", b...), side("Q", slowQuiet...)}, Options{})
	if cause := noiseCause(c.Pairs[0]); cause == nil || cause.Supported() {
		t.Errorf("a quieter but slower side: cause %+v, want listed but unsupported", cause)
	}
}

// Differences that are not evidence stay out of the causes: equally noisy
// sides, a difference under a point, two hosts neither above the note
// threshold, one run a side (two spot readings cannot be told apart), and
// a side without readings.
func TestHostNoiseNotACause(t *testing.T) {
	quiet := [][2]float64{{0.1, 0.3}, {0, 0.4}, {0.2, 0.2}}
	noisy := [][2]float64{{3.1, 4.6}, {3.8, 5.0}, {4.2, 3.9}}
	for _, tc := range []struct {
		name string
		a, b [][2]float64
	}{
		{"both noisy alike", noisy, [][2]float64{{4.0, 3.5}, {4.4, 3.2}, {4.8, 4.1}}},
		{"under a point apart", [][2]float64{{1.2, 1.3}, {1.1, 1.4}, {1.2, 1.2}}, [][2]float64{{1.9, 2.0}, {2.1, 1.8}, {2.0, 1.9}}},
		// A point apart, but bench would note neither: 1% is not above 1%.
		{"neither above the note threshold", [][2]float64{{0, 0}, {0, 0}, {0, 0}}, [][2]float64{{1, 1}, {1, 1}, {1, 1}}},
		{"one run a side", quiet[:1], noisy[:1]},
	} {
		a, b := noisyRuns("a", 1000, tc.a...), noisyRuns("b", 900, tc.b...)
		c, err := Compare([]Side{side("A", a...), side("B", b...)}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if cause := noiseCause(c.Pairs[0]); cause != nil {
			t.Errorf("%s: host noise listed as a cause: %+v", tc.name, cause.Diffs)
		}
	}

	a, b := noisyRuns("a", 1000, quiet...), noisyRuns("b", 900, noisy...)
	for _, r := range a {
		r.Noise = nil // --no-noise-check, or runs from before the check
	}
	c, err := Compare([]Side{side("A", a...), side("B", b...)}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if cause := noiseCause(c.Pairs[0]); cause != nil {
		t.Errorf("no readings on A: host noise listed as a cause: %+v", cause.Diffs)
	}
}
