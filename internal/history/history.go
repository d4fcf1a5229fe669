// Package history turns stored runs into a metric over time per host and
// finds where it changed (internal/changepoint), naming the settings that
// changed on the host between the two sides of each change point.
//
// One value per run: the median of the run's samples of the metric. The
// run, not the sample, is the unit: samples within a run say how steady the
// host was during it, not how it moves between runs, so the series that the
// change point search sees is the runs' medians.
//
// A series is one host and one set of probe parameters and placement: runs
// with different parameters or CPUs are different measurements (as in
// compare) and get series of their own. Failed, interrupted and otherwise
// incomplete runs, whose medians come from a cut-short measurement, and
// runs without the metric are left out.
package history

import (
	"context"
	"github.com/perflab/perflab/internal/effect"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/perflab/perflab/internal/changepoint"
	"github.com/perflab/perflab/internal/compare"
	"github.com/perflab/perflab/internal/run"
	"github.com/perflab/perflab/internal/snapshot"
	"github.com/perflab/perflab/internal/stats"
)

// Series is one metric over time on one host.
type Series struct {
	Probe   string     `json:"probe"`
	Metric  string     `json:"metric"`
	Host    string     `json:"host"`
	Params  string     `json:"params,omitempty"`
	Unit    string     `json:"unit"`
	Better  run.Better `json:"better"`
	Points  []Point    `json:"points"`
	Changes []Change   `json:"changes"`
	// Older counts the runs older than the MaxRuns newest, left out.
	Older int `json:"older,omitempty"`
}

// MaxRuns is how many of a series' newest runs are searched: the search
// costs O(runs²) per permutation, about 2 s at 1000 runs.
const MaxRuns = 1000

// Point is one run's value.
type Point struct {
	RunID   string    `json:"run_id"`
	Started time.Time `json:"started"`
	Label   string    `json:"label,omitempty"`
	Value   float64   `json:"value"`   // median of the run's samples
	Samples int       `json:"samples"` // how many
	// snapshotID is kept for Annotate; runs show it.
	snapshotID string
}

// Change is a change point with the runs on either side and the settings
// that differ between their snapshots.
type Change struct {
	At changepoint.Point `json:"change_point"`
	// Verdict is the change decided by the one rule (package effect):
	// better or worse at the change point's significance, by the metric's
	// better-is.
	Verdict   effect.Verdict `json:"verdict"`
	BeforeRun string         `json:"before_run"` // last run before the change
	AfterRun  string         `json:"after_run"`  // first run after it
	Settings  []compare.Diff `json:"settings"`
	// NoSnapshot names a side whose snapshot is not stored, so the
	// settings could not be compared.
	NoSnapshot string `json:"no_snapshot,omitempty"`
}

// Build groups runs of probe into series of metric, one per host and
// parameter set, oldest run first, and finds their change points.
func Build(runs []*run.Run, probe, metric string, o changepoint.Options) []*Series {
	groups := map[string]*Series{}
	for _, r := range runs {
		if r.Probe != probe || !r.Complete || r.Stop == run.StopFailed || r.Stop == run.StopInterrupted {
			continue
		}
		vs := r.Values(metric)
		if len(vs) == 0 {
			continue
		}
		s := groupOf(groups, r, metric)
		s.Points = append(s.Points, Point{RunID: r.ID, Started: r.Started, Label: r.Label,
			Value: stats.Median(vs), Samples: len(vs), snapshotID: r.SnapshotID})
	}
	out := make([]*Series, 0, len(groups))
	for _, s := range groups {
		sort.SliceStable(s.Points, func(i, j int) bool { return s.Points[i].Started.Before(s.Points[j].Started) })
		if len(s.Points) > MaxRuns {
			s.Older = len(s.Points) - MaxRuns
			s.Points = s.Points[s.Older:]
		}
		s.detect(o)
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Host != out[j].Host {
			return out[i].Host < out[j].Host
		}
		return out[i].Params < out[j].Params
	})
	return out
}

func groupOf(groups map[string]*Series, r *run.Run, metric string) *Series {
	ps := paramString(r)
	key := r.Host + "\x00" + ps
	s := groups[key]
	if s == nil {
		s = &Series{Probe: r.Probe, Metric: metric, Host: r.Host, Params: ps, Changes: []Change{}}
		if m, ok := r.Metric(metric); ok {
			s.Unit, s.Better = m.Unit, m.Better
		}
		groups[key] = s
	}
	return s
}

func (s *Series) detect(o changepoint.Options) {
	xs := make([]float64, 0, len(s.Points))
	for _, p := range s.Points {
		if math.IsNaN(p.Value) || math.IsInf(p.Value, 0) {
			continue
		}
		xs = append(xs, p.Value)
	}
	if len(xs) != len(s.Points) {
		return // a run without a finite median: not a series to search
	}
	for _, cp := range changepoint.Detect(xs, o) {
		v := effect.FromShift(cp.Change, cp.ChangeLo, cp.ChangeHi, cp.PValue, s.Better, effect.Options{Alpha: o.Alpha}).Verdict()
		s.Changes = append(s.Changes, Change{At: cp, Verdict: v,
			BeforeRun: s.Points[cp.Index-1].RunID, AfterRun: s.Points[cp.Index].RunID, Settings: []compare.Diff{}})
	}
}

// SnapshotFunc loads a stored snapshot by id.
type SnapshotFunc func(ctx context.Context, id string) (*snapshot.Snapshot, error)

// Annotate fills in each change point's Settings: the differences between
// the snapshots of the last run before it and the first run after it
// (compare.DiffSnapshots). A side whose snapshot is missing is named in
// NoSnapshot; any other error stops.
func (s *Series) Annotate(ctx context.Context, load SnapshotFunc, isMissing func(error) bool) error {
	for i := range s.Changes {
		c := &s.Changes[i]
		before, after := s.Points[c.At.Index-1], s.Points[c.At.Index]
		a, err := loadSnap(ctx, load, before.snapshotID, isMissing)
		if err != nil {
			return err
		}
		b, err := loadSnap(ctx, load, after.snapshotID, isMissing)
		if err != nil {
			return err
		}
		switch {
		case a == nil:
			c.NoSnapshot = before.RunID
		case b == nil:
			c.NoSnapshot = after.RunID
		default:
			c.Settings = append(c.Settings, compare.DiffSnapshots(a, b)...)
		}
	}
	return nil
}

func loadSnap(ctx context.Context, load SnapshotFunc, id string, isMissing func(error) bool) (*snapshot.Snapshot, error) {
	if id == "" {
		return nil, nil
	}
	snap, err := load(ctx, id)
	if err != nil && isMissing(err) {
		return nil, nil
	}
	return snap, err
}

// paramString is a run's parameters and placement in a canonical order,
// the rule compare uses to keep different measurements apart.
func paramString(r *run.Run) string {
	kv := make([]string, 0, len(r.Params)+1)
	for k, v := range r.Params {
		kv = append(kv, k+"="+v)
	}
	sort.Strings(kv)
	if r.CPUs != "" {
		kv = append(kv, "cpus="+r.CPUs)
	}
	return strings.Join(kv, " ")
}
