package metrics

import (
	"fmt"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/changepoint"
	"github.com/perflab/perflab/internal/run"
	"github.com/prometheus/client_golang/prometheus"
)

func cpRuns(step bool) []*run.Run {
	t0 := time.Unix(1700000000, 0)
	var runs []*run.Run
	for i := 0; i < 12; i++ {
		centre := 50.0
		if step && i >= 6 {
			centre = 60
		}
		r := &run.Run{ID: fmt.Sprintf("r%v%02d", step, i), Probe: "memory.latency", Host: "db1", Complete: true,
			Started: t0.Add(time.Duration(i) * time.Hour), Metrics: []run.Metric{{Name: "latency.64MiB", Unit: "ns", Better: run.Lower}}}
		for k := 0; k < 3; k++ {
			r.Samples = append(r.Samples, run.Sample{Metric: "latency.64MiB", Value: centre + 0.1*float64((i+k)%5)})
		}
		runs = append(runs, r)
	}
	return runs
}

// A new run set is searched again: the cache never serves a stale answer.
func TestChangePointsFollowTheRuns(t *testing.T) {
	c := NewChangePoints(changepoint.Options{})
	reg := prometheus.NewRegistry()
	reg.MustRegister(c)
	for i, step := range []bool{false, true, true, false} {
		c.Update(cpRuns(step))
		want := 0
		if step {
			want = 3 // time, shift, p-value
		}
		mfs, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, mf := range mfs {
			n += len(mf.GetMetric())
		}
		if n != want {
			t.Errorf("update %d (step %v): %d series, want %d", i, step, n, want)
		}
	}
}
