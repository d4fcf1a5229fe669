package bench

import (
	"strconv"
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/run"
)

func sweepRun(levels []float64, values [][]float64) *run.Run {
	r := &run.Run{}
	for i, l := range levels {
		name := "tps.c" + strconv.FormatFloat(l, 'f', -1, 64)
		r.Metrics = append(r.Metrics, run.Metric{Name: name, Unit: "tx/s", Better: run.Higher, Series: "tps", X: l, XUnit: "threads"})
		for _, v := range values[i] {
			r.Samples = append(r.Samples, run.Sample{Metric: name, Value: v})
		}
	}
	// A latency curve (lower is better) is not a throughput curve.
	r.Metrics = append(r.Metrics, run.Metric{Name: "latency_p95.c1", Unit: "ms", Better: run.Lower, Series: "latency_p95", X: 1})
	return r
}

func rep(v float64, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = v * (1 + 0.001*float64(i%3))
	}
	return out
}

// Seed 000: 45k at 20 connections, 30k at 100.
func TestCurveNotesPeakAndFall(t *testing.T) {
	r := sweepRun([]float64{1, 20, 100}, [][]float64{rep(5000, 8), rep(45000, 8), rep(30000, 8)})
	n := CurveNotes(r)
	if len(n) != 1 || !strings.Contains(n[0], "peak 45") || !strings.Contains(n[0], "at 20 threads") ||
		!strings.Contains(n[0], "falls to 30") || !strings.Contains(n[0], "(−33%) at 100 threads") {
		t.Errorf("notes %q", n)
	}
}

func TestCurveNotesNoFall(t *testing.T) {
	n := CurveNotes(sweepRun([]float64{1, 20, 100}, [][]float64{rep(5000, 8), rep(40000, 8), rep(45000, 8)}))
	if len(n) != 1 || !strings.Contains(n[0], "at 100 threads (the highest level measured") {
		t.Errorf("notes %q", n)
	}
	// 8% lower after the peak: not a fall.
	n = CurveNotes(sweepRun([]float64{1, 20, 100}, [][]float64{rep(5000, 8), rep(45000, 8), rep(41400, 8)}))
	if len(n) != 1 || strings.Contains(n[0], "falls") || !strings.Contains(n[0], "no fall beyond 10% up to 100") {
		t.Errorf("notes %q", n)
	}
}

// A drop whose spread overlaps the peak's is noise, not a fall.
func TestCurveNotesOverlapIsNoFall(t *testing.T) {
	wide := []float64{20000, 25000, 30000, 35000, 40000, 46000, 47000, 48000}
	n := CurveNotes(sweepRun([]float64{20, 100}, [][]float64{rep(45000, 8), wide}))
	if len(n) != 1 || strings.Contains(n[0], "falls") || !strings.Contains(n[0], "within the runs' spread") {
		t.Errorf("notes %q", n)
	}
}

func TestCurveNotesIgnoresOtherCurves(t *testing.T) {
	r := &run.Run{Metrics: []run.Metric{{Name: "read.t1", Series: "read", X: 1, XUnit: "threads", Better: run.Higher},
		{Name: "read.t2", Series: "read", X: 2, XUnit: "threads", Better: run.Higher}},
		Samples: []run.Sample{{Metric: "read.t1", Value: 10}, {Metric: "read.t2", Value: 5}}}
	if n := CurveNotes(r); len(n) != 0 {
		t.Errorf("a thread curve is not a sweep: %q", n)
	}
}
