package fleet

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/audit"
	"github.com/perflab/perflab/internal/run"
	"github.com/perflab/perflab/internal/snapshot"
	"github.com/perflab/perflab/internal/store"
	"github.com/perflab/perflab/internal/store/fleetgen"
	"github.com/perflab/perflab/internal/testenv"
)

func reportJSON(t *testing.T, r *Report) string {
	t.Helper()
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// fromStore is the report 'perflab fleet report' makes from dsn.
func fromStore(t *testing.T, dsn string, f store.FleetFilter) *Report {
	t.Helper()
	s, err := store.OpenReadOnly(dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	w, err := audit.LookupWorkload("general")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := FromStore(context.Background(), s, f, w)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// generated is a fleetgen fleet of n hosts in memory, as Build's input.
func generated(t *testing.T, hosts, runsPerHost int) (*fleetgen.Generator, Input, []fleetgen.Host) {
	t.Helper()
	g, err := fleetgen.New(fleetgen.Options{Hosts: hosts, RunsPerHost: runsPerHost, Samples: 3, Seed: 7, Repo: filepath.Join("..", "..")})
	if err != nil {
		t.Fatal(err)
	}
	w, err := audit.LookupWorkload("general")
	if err != nil {
		t.Fatal(err)
	}
	in := Input{Snapshots: map[string]*snapshot.Snapshot{}, Workload: w}
	var all []fleetgen.Host
	for i := range hosts {
		h := g.Host(i)
		all = append(all, h)
		in.Runs = append(in.Runs, h.Runs...)
		for _, s := range h.Snapshots {
			in.Snapshots[s.ID] = s
		}
	}
	return g, in, all
}

// The streaming path (per-run medians in SQL, snapshots reduced one by
// one) gives exactly the in-memory report over the same runs, on the
// hand-made fleets of the other tests and on a generated one, with and
// without filters.
func TestFromStoreEqualsBuild(t *testing.T) {
	for name, fleet := range map[string][]hostSpec{"quota": quotaFleet(), "lottery": lotteryFleet()} {
		dsn := filepath.Join(t.TempDir(), "runs.db")
		in := buildStoreAt(t, dsn, fleet)
		if got, want := reportJSON(t, fromStore(t, dsn, store.FleetFilter{})), reportJSON(t, Build(in)); got != want {
			t.Errorf("%s: streamed report differs from the in-memory one:\n%s\n---\n%s", name, got, want)
		}
	}
	dsn := filepath.Join(t.TempDir(), "gen.db")
	checkGeneratedEqual(t, dsn)
}

func checkGeneratedEqual(t *testing.T, dsn string) {
	t.Helper()
	_, in, hosts := generated(t, 40, 20)
	s, err := store.Open(dsn)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hosts {
		if err := s.CopyRuns(context.Background(), h.Runs, h.Snapshots); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	if got, want := reportJSON(t, fromStore(t, dsn, store.FleetFilter{})), reportJSON(t, Build(in)); got != want {
		t.Errorf("generated fleet: streamed report differs from the in-memory one")
	}
	// --since half-way and a label no run has.
	since := in.Runs[len(in.Runs)/2].Started
	var later []*run.Run
	for _, r := range in.Runs {
		if !r.Started.Before(since) {
			later = append(later, r)
		}
	}
	half := in
	half.Runs = later
	if got, want := reportJSON(t, fromStore(t, dsn, store.FleetFilter{Since: since})), reportJSON(t, Build(half)); got != want {
		t.Errorf("generated fleet since %s: streamed report differs from the in-memory one", since)
	}
	if r := fromStore(t, dsn, store.FleetFilter{Label: "nope", Since: time.Time{}}); len(r.Hosts) != 0 {
		t.Errorf("label nope: %d hosts, want none", len(r.Hosts))
	}
	// The report of all runs is made from the hosts' lists of medians
	// (host_medians) alone: without a single run_metrics row it is the same.
	execSQL(t, dsn, `DELETE FROM run_metrics`)
	if got, want := reportJSON(t, fromStore(t, dsn, store.FleetFilter{})), reportJSON(t, Build(in)); got != want {
		t.Errorf("generated fleet without run_metrics: the report of all runs differs from the in-memory one")
	}
	if r := fromStore(t, dsn, store.FleetFilter{Since: since}); len(r.Metrics) != 0 {
		t.Errorf("without run_metrics a report since %s still has %d metrics: not read from run_metrics", since, len(r.Metrics))
	}
}

// The same on PostgreSQL, where the medians come through COPY (and the
// hosts' lists are appended to by CopyRuns' upsert).
func TestFromStoreEqualsBuildPostgres(t *testing.T) {
	testenv.Short(t)
	checkGeneratedEqual(t, testenv.Postgres(t))
}

// The done-when of issue 25.1 on a scaled-down generated store: the fleet
// report names every planted outlier group, exactly its hosts, and the
// planted fact as the first separating fact; nothing else is an outlier.
func TestGeneratedFleetNamesPlantedOutliers(t *testing.T) {
	g, in, _ := generated(t, 200, 20)
	p := g.Plan()
	rep := Build(in)
	want := map[string]struct {
		hosts       []string
		fact, value string
	}{
		"cpu":              {p.Quota, "cgroup.cpu_quota_us", "50000"},
		"memory.pagefault": {p.THPAlways, "memory.thp.enabled", "always"},
		"memory.latency":   {p.ModelB, "cpu.model", fleetgen.ModelB},
	}
	seen := map[string]int{}
	for _, m := range rep.Metrics {
		for _, og := range m.Outliers {
			w, ok := want[m.Probe]
			if !ok {
				t.Errorf("%s %s: unplanted outliers %v", m.Probe, m.Metric, og.Hosts)
				continue
			}
			seen[m.Probe]++
			if !slices.Equal(og.Hosts, w.hosts) || !og.Worse {
				t.Errorf("%s %s: outliers %v (worse %v), planted %v", m.Probe, m.Metric, og.Hosts, og.Worse, w.hosts)
			}
			if len(og.Facts) == 0 || og.Facts[0].Fact != w.fact || og.Facts[0].Value != w.value || len(og.Facts[0].Inliers) != 0 {
				t.Errorf("%s %s: separating facts %+v, planted %s=%s", m.Probe, m.Metric, og.Facts, w.fact, w.value)
			}
		}
	}
	for probe := range want {
		if seen[probe] == 0 {
			t.Errorf("%s: the planted outliers %v are not named", probe, want[probe].hosts)
		}
	}
}
