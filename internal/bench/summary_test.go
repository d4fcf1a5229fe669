package bench

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/run"
)

func TestMeasured(t *testing.T) {
	f := func(x float64) *float64 { return &x }
	for _, c := range []struct {
		m    MetricSummary
		want string
	}{
		{MetricSummary{N: 10, Median: 12345.678, HalfWidth: f(23.4), Unit: "events/s"}, "12346 ± 23 events/s"},
		{MetricSummary{N: 10, Median: 81.2345, HalfWidth: f(0.456), Unit: "ns"}, "81.23 ± 0.46 ns"},
		{MetricSummary{N: 10, Median: 0.0123456, HalfWidth: f(0.0000123), Unit: "s"}, "0.012346 ± 0.000012 s"},
		{MetricSummary{N: 7, Median: 5, HalfWidth: f(0), Unit: "µs"}, "5 ± 0 µs"},
		{MetricSummary{N: 3, Median: 1234.5678, Unit: "MB/s"}, "1235 MB/s (n=3, too few for a CI)"},
		{MetricSummary{N: 0}, "no samples"},
	} {
		if got := c.m.Measured(); got != c.want {
			t.Errorf("Measured(%+v) = %q, want %q", c.m, got, c.want)
		}
	}
}

func TestSummarize(t *testing.T) {
	r := &run.Run{Metrics: []run.Metric{{Name: "a", Unit: "ns", Better: run.Lower}, {Name: "b", Unit: "x", Better: run.Higher}}}
	for i, v := range []float64{10, 11, 9, 10, 10.5, 9.5, 10} {
		r.Samples = append(r.Samples, run.Sample{Metric: "a", Value: v, Iteration: i})
	}
	r.Samples = append(r.Samples, run.Sample{Metric: "b", Value: 3})
	s := Summarize(r)
	if len(s) != 2 || s[0].Name != "a" || s[0].N != 7 || s[0].Median != 10 {
		t.Fatalf("summary %+v", s)
	}
	if s[0].HalfWidth == nil || *s[0].Lo > 10 || *s[0].Hi < 10 || *s[0].Rel != *s[0].HalfWidth/10 || s[0].CV == nil {
		t.Errorf("a: CI %v..%v half %v rel %v", s[0].Lo, s[0].Hi, s[0].HalfWidth, s[0].Rel)
	}
	if s[1].N != 1 || s[1].HalfWidth != nil || s[1].CV != nil {
		t.Errorf("b (one sample) should have no CI and no CV: %+v", s[1])
	}
	r.Stop, r.Precision = run.StopTimeBudget, 0.01
	if !strings.Contains(StopText(r), "±1%") {
		t.Errorf("stop text %q", StopText(r))
	}
}

func noted(id string, notes ...string) *run.Run {
	return &run.Run{ID: id, Probe: "cpu", Notes: notes}
}

// A note every run of the session carries is a fact about the host: it is
// returned once and taken out of each run's own; the runs keep theirs.
func TestSessionNotesSharedOnce(t *testing.T) {
	host := "monitor: cpufreq is unavailable (no scaling_cur_freq); cpu_mhz is not recorded"
	runs := []*run.Run{
		noted("a", "builtin probe used: sysbench not installed", host),
		noted("b", host, "host noise: 1.6%"),
		noted("c", host),
	}
	common, own := SessionNotes(runs)
	if !slices.Equal(common, []string{host}) {
		t.Errorf("common %q, want the cpufreq note once", common)
	}
	want := [][]string{{"builtin probe used: sysbench not installed"}, {"host noise: 1.6%"}, nil}
	for i := range runs {
		if !slices.Equal(own[i], want[i]) {
			t.Errorf("run %d keeps %q, want %q", i, own[i], want[i])
		}
	}
	if len(runs[0].Notes) != 2 || len(runs[2].Notes) != 1 {
		t.Errorf("the runs' notes were changed: %q %q", runs[0].Notes, runs[2].Notes)
	}
}

// A note on only some runs stays with them, even when it is on all but
// one; the order of a run's notes is kept.
func TestSessionNotesPartialStaysPerRun(t *testing.T) {
	runs := []*run.Run{noted("a", "x", "y"), noted("b", "y", "x"), noted("c", "y")}
	common, own := SessionNotes(runs)
	if !slices.Equal(common, []string{"y"}) {
		t.Errorf("common %q, want [y]", common)
	}
	if !slices.Equal(own[0], []string{"x"}) || !slices.Equal(own[1], []string{"x"}) || own[2] != nil {
		t.Errorf("own %q, want x on a and b only", own)
	}
}

// One run is no session: "for every run" would only move its notes away
// from it.
func TestSessionNotesSingleRun(t *testing.T) {
	common, own := SessionNotes([]*run.Run{noted("a", "x", "y")})
	if common != nil || !slices.Equal(own[0], []string{"x", "y"}) {
		t.Errorf("common %q own %q, want every note with the run", common, own)
	}
	if common, own := SessionNotes(nil); common != nil || len(own) != 0 {
		t.Errorf("no runs: %q %q", common, own)
	}
}

// The JSON object of a run carries the noise readings as stored (before
// and after: lost_pct, max_gap_us, interruptions_per_s), and none when
// the check was off.
func TestReportJSONNoise(t *testing.T) {
	r := noted("a", "n")
	r.Noise = &run.Noise{CPUs: "0-1", ThresholdUs: 200,
		Before: &run.NoiseReading{Seconds: 0.1, LostPct: 0.4, InterruptionsPerS: 15, MaxGapUs: 310},
		After:  &run.NoiseReading{Seconds: 0.1, LostPct: 2.1, InterruptionsPerS: 40, MaxGapUs: 4200}}
	b, err := json.Marshal(Report(r))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Noise *struct {
			CPUs   string `json:"cpus"`
			Before map[string]float64
			After  map[string]float64
		}
		Notes []string
	}
	if err := json.Unmarshal(b, &doc); err != nil || doc.Noise == nil {
		t.Fatalf("%v: no noise in %s", err, b)
	}
	if doc.Noise.CPUs != "0-1" || doc.Noise.Before["lost_pct"] != 0.4 || doc.Noise.After["max_gap_us"] != 4200 || doc.Noise.After["interruptions_per_s"] != 40 {
		t.Errorf("noise %+v", doc.Noise)
	}
	if !slices.Equal(doc.Notes, []string{"n"}) {
		t.Errorf("notes %q", doc.Notes)
	}
	r.Noise = nil
	if b, _ := json.Marshal(Report(r)); strings.Contains(string(b), "noise") {
		t.Errorf("no readings, yet: %s", b)
	}
}

func TestNoiseText(t *testing.T) {
	n := &run.Noise{CPUs: "0-1",
		Before: &run.NoiseReading{LostPct: 0.42, MaxGapUs: 310},
		After:  &run.NoiseReading{LostPct: 2.06, MaxGapUs: 4200}}
	if got, want := NoiseText(n), "before 0.4% (longest gap 310 µs), after 2.1% (longest gap 4.2 ms) on cpus 0-1"; got != want {
		t.Errorf("NoiseText = %q, want %q", got, want)
	}
	n.After = nil
	if got := NoiseText(n); !strings.Contains(got, "after not taken") {
		t.Errorf("no closing reading: %q", got)
	}
	if got := NoiseText(nil); got != "not recorded" {
		t.Errorf("nil: %q", got)
	}
}

// A metric without samples has no median, min or max in JSON, not zeros.
func TestMetricSummaryJSONWithoutSamples(t *testing.T) {
	b, err := json.Marshal([]MetricSummary{{Name: "events", Unit: "events/s", Better: run.Higher}, {Name: "x", Unit: "s", Better: run.Lower, N: 1, Median: 2, Min: 2, Max: 2}})
	if err != nil {
		t.Fatal(err)
	}
	var got []map[string]any
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"median", "min", "max"} {
		if _, ok := got[0][k]; ok {
			t.Errorf("empty metric has %q: %s", k, b)
		}
		if _, ok := got[1][k]; !ok {
			t.Errorf("measured metric lacks %q: %s", k, b)
		}
	}
	if got[0]["n"] != float64(0) || got[0]["unit"] != "events/s" {
		t.Errorf("empty metric: %s", b)
	}
}
