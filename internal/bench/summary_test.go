package bench

import (
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
