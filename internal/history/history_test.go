package history

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/changepoint"
	"github.com/perflab/perflab/internal/run"
	"github.com/perflab/perflab/internal/snapshot"
)

var errMissing = errors.New("missing")

// stepRuns is 24 runs of cpu on h1, one an hour; from run 12 on the host
// has vm.swappiness 10 instead of 60 and is 10% slower. Runs on h2 and with
// other parameters must stay out of h1's series.
func stepRuns() ([]*run.Run, map[string]*snapshot.Snapshot) {
	r := rand.New(rand.NewPCG(1, 1))
	snaps := map[string]*snapshot.Snapshot{}
	var runs []*run.Run
	t0 := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	for i := 0; i < 24; i++ {
		swappiness, centre := "60", 1000.0
		if i >= 12 {
			swappiness, centre = "10", 900.0
		}
		snapID := "snap-" + swappiness
		snaps[snapID] = &snapshot.Snapshot{Schema: snapshot.Schema, ID: snapID, Host: snapshot.Host{Hostname: "h1"},
			Sysctl: map[string]string{"vm.swappiness": swappiness}, Unavailable: map[string]string{}}
		runs = append(runs, mkRun(fmt.Sprintf("run%02d", i), "h1", snapID, t0.Add(time.Duration(i)*time.Hour), centre, r))
	}
	runs = append(runs, mkRun("other-host", "h2", "", t0, 500, r))
	odd := mkRun("other-params", "h1", "", t0, 10, r)
	odd.Params = map[string]string{"threads": "2"}
	runs = append(runs, odd)
	// Newest first, as the store returns them.
	for i, j := 0, len(runs)-1; i < j; i, j = i+1, j-1 {
		runs[i], runs[j] = runs[j], runs[i]
	}
	return runs, snaps
}

func mkRun(id, host, snap string, started time.Time, centre float64, r *rand.Rand) *run.Run {
	x := &run.Run{Schema: run.Schema, ID: id, Probe: "cpu", Host: host, SnapshotID: snap, Started: started,
		Params: map[string]string{"threads": "1"}, Complete: true, Stop: run.StopFixed,
		Metrics: []run.Metric{{Name: "events_per_sec.t1", Unit: "events/s", Better: run.Higher}}}
	for k := 0; k < 5; k++ {
		x.Samples = append(x.Samples, run.Sample{Metric: "events_per_sec.t1", Iteration: k, Value: centre * (1 + 0.01*r.NormFloat64())})
	}
	return x
}

func loader(snaps map[string]*snapshot.Snapshot) SnapshotFunc {
	return func(_ context.Context, id string) (*snapshot.Snapshot, error) {
		if s, ok := snaps[id]; ok {
			return s, nil
		}
		return nil, errMissing
	}
}

func isMissing(err error) bool { return errors.Is(err, errMissing) }

func TestStepNamedWithTheSetting(t *testing.T) {
	runs, snaps := stepRuns()
	series := Build(runs, "cpu", "events_per_sec.t1", changepoint.Options{})
	if len(series) != 3 {
		t.Fatalf("%d series, want 3 (h1 threads=1, h1 threads=2, h2)", len(series))
	}
	s := series[0]
	if s.Host != "h1" || s.Params != "threads=1" || len(s.Points) != 24 || s.Points[0].RunID != "run00" {
		t.Fatalf("first series: %s %q %d points from %s", s.Host, s.Params, len(s.Points), s.Points[0].RunID)
	}
	if err := s.Annotate(context.Background(), loader(snaps), isMissing); err != nil {
		t.Fatal(err)
	}
	if len(s.Changes) != 1 || s.Changes[0].At.Index != 12 || s.Changes[0].AfterRun != "run12" {
		t.Fatalf("changes %+v, want one at run12", s.Changes)
	}
	c := s.Changes[0]
	if len(c.Settings) != 1 || c.Settings[0].Path != "sysctl.vm.swappiness" || c.Settings[0].Before != "60" || c.Settings[0].After != "10" {
		t.Errorf("settings %+v, want vm.swappiness 60 → 10", c.Settings)
	}
	if c.At.Change > -0.08 || c.At.Change < -0.12 {
		t.Errorf("change %.3f, want about -10%%", c.At.Change)
	}
	for _, short := range series[1:] {
		if len(short.Changes) != 0 || len(short.Points) != 1 {
			t.Errorf("series %s %q: %+v", short.Host, short.Params, short)
		}
	}
}

func TestMissingSnapshotNamed(t *testing.T) {
	runs, snaps := stepRuns()
	delete(snaps, "snap-10")
	s := Build(runs, "cpu", "events_per_sec.t1", changepoint.Options{})[0]
	if err := s.Annotate(context.Background(), loader(snaps), isMissing); err != nil {
		t.Fatal(err)
	}
	if c := s.Changes[0]; c.NoSnapshot != "run12" || len(c.Settings) != 0 {
		t.Errorf("change %+v, want no snapshot of run12", c)
	}
	boom := func(context.Context, string) (*snapshot.Snapshot, error) { return nil, errors.New("disk on fire") }
	if err := s.Annotate(context.Background(), boom, isMissing); err == nil {
		t.Error("a store error was swallowed")
	}
}

func TestSkipsFailedAndOtherMetrics(t *testing.T) {
	runs, _ := stepRuns()
	runs[0].Stop = run.StopFailed // other-params, newest-first order
	runs[1].Stop = run.StopInterrupted
	runs[1].Complete = false // other-host
	if got := Build(runs, "cpu", "events_per_sec.t1", changepoint.Options{}); len(got) != 1 || len(got[0].Points) != 24 {
		t.Errorf("failed or interrupted run kept: %d series", len(got))
	}
	runs[2].Complete = false // the newest run of h1
	if got := Build(runs, "cpu", "events_per_sec.t1", changepoint.Options{}); len(got[0].Points) != 23 {
		t.Errorf("incomplete run kept: %d points", len(got[0].Points))
	}
	if got := Build(runs, "cpu", "nope", changepoint.Options{}); len(got) != 0 {
		t.Errorf("unknown metric: %d series", len(got))
	}
	if got := Build(runs, "memory", "events_per_sec.t1", changepoint.Options{}); len(got) != 0 {
		t.Errorf("other probe: %d series", len(got))
	}
}

func TestNewestRunsOnly(t *testing.T) {
	r := rand.New(rand.NewPCG(2, 2))
	var runs []*run.Run
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := 0; i < MaxRuns+5; i++ {
		runs = append(runs, mkRun(fmt.Sprintf("r%04d", i), "h1", "", t0.Add(time.Duration(i)*time.Minute), 100, r))
	}
	s := Build(runs, "cpu", "events_per_sec.t1", changepoint.Options{})[0]
	if len(s.Points) != MaxRuns || s.Older != 5 || s.Points[0].RunID != "r0005" {
		t.Errorf("%d points, %d older, first %s", len(s.Points), s.Older, s.Points[0].RunID)
	}
}
