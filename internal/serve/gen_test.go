package serve

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/run"
	"github.com/perflab/perflab/internal/snapshot"
	"github.com/perflab/perflab/internal/stats"
	"github.com/perflab/perflab/internal/store"
)

// The test stores are generated from real runs of this machine
// (testdata/real-runs.json: 'perflab bench probe:cpu probe:syscall
// --no-noise-check' three times, then 'perflab runs export'), varied: each
// host runs slower or faster by a fixed factor, every run's samples move by
// a per-run offset (host drift) and their own noise, and on the hosts with
// a step one sysctl changes half-way with the probe's results moving by
// 15%, which the history view must find and annotate.

type genSpec struct {
	Hosts       int
	RunsPerHost int // per probe
	Steps       int // hosts (the first ones) with a step change
	Start       time.Time
	Every       time.Duration // between runs of a probe on a host
	SnapEvery   int           // a new snapshot every this many runs
}

// stepSysctl is the setting that changes at the step.
const stepSysctl = "kernel.sched_migration_cost_ns"

func readReal(t testing.TB) *run.Export {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "real-runs.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ex, err := run.ReadExport(f)
	if err != nil {
		t.Fatal(err)
	}
	return ex
}

func hostName(i int) string { return fmt.Sprintf("node%02d", i+1) }

// genStore writes a store at path from the real runs per spec and returns
// the labels it used for the first host's first and last snapshot period.
func genStore(t testing.TB, path string, sp genSpec) {
	t.Helper()
	ex := readReal(t)
	st, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(1, 2))
	// The export's first snapshot by id: the first a range over the map
	// gave was any of its three, so the store changed from run to run.
	baseSnap := ex.Snapshots[slices.Min(slices.Collect(maps.Keys(ex.Snapshots)))]
	byProbe := map[string][]*run.Run{}
	var probes []string
	for _, r := range ex.Runs {
		if byProbe[r.Probe] == nil {
			probes = append(probes, r.Probe)
		}
		byProbe[r.Probe] = append(byProbe[r.Probe], r)
	}
	n := 0
	for h := 0; h < sp.Hosts; h++ {
		host := hostName(h)
		factor := 1 + 0.1*float64(h%5-2) // hosts differ by up to ±20%
		var snap *snapshot.Snapshot
		for i := 0; i < sp.RunsPerHost; i++ {
			stepped := h < sp.Steps && i >= sp.RunsPerHost/2
			if i%sp.SnapEvery == 0 || (h < sp.Steps && i == sp.RunsPerHost/2) {
				snap = cloneSnap(t, baseSnap, fmt.Sprintf("%s-s%05d", host, i), host, sp.Start.Add(time.Duration(i)*sp.Every))
				if stepped {
					snap.Sysctl[stepSysctl] = "50000"
				} else {
					snap.Sysctl[stepSysctl] = "500000"
				}
			}
			drift := 1 + rng.NormFloat64()*0.01
			for pi, probe := range probes {
				src := byProbe[probe][i%len(byProbe[probe])]
				r := cloneRun(t, src)
				r.ID = fmt.Sprintf("%s%04d%02d%06d", "r", h, pi, i)
				r.Host, r.SnapshotID = host, snap.ID
				r.Label = fmt.Sprintf("%s-w%03d", host, i/sp.SnapEvery)
				r.Started = sp.Start.Add(time.Duration(i)*sp.Every + time.Duration(pi)*time.Minute)
				r.Ended = r.Started.Add(10 * time.Second)
				scale := factor * drift
				if stepped {
					scale *= 0.85
				}
				// Each real run's samples keep their shape but are
				// centred on the first real run's median per metric: the
				// real runs were seconds apart yet differ by up to 40% on
				// this VM, which would drown the step.
				ref := byProbe[probe][0]
				for k := range r.Samples {
					m := r.Samples[k].Metric
					c := stats.Median(ref.Values(m)) / stats.Median(src.Values(m))
					r.Samples[k].Value *= c * scale * (1 + rng.NormFloat64()*0.003)
				}
				var save *snapshot.Snapshot
				if i%sp.SnapEvery == 0 || (h < sp.Steps && i == sp.RunsPerHost/2) {
					save = snap
				}
				if err := st.SaveRun(ctx, r, save); err != nil {
					t.Fatal(err)
				}
				n++
			}
		}
	}
	// The real runs themselves, under their labels, for comparisons that
	// must equal 'perflab compare'.
	for _, r := range ex.Runs {
		if err := st.SaveRun(ctx, r, ex.Snapshots[r.SnapshotID]); err != nil {
			t.Fatal(err)
		}
	}
}

func cloneRun(t testing.TB, r *run.Run) *run.Run {
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var out run.Run
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return &out
}

func cloneSnap(t testing.TB, s *snapshot.Snapshot, id, host string, at time.Time) *snapshot.Snapshot {
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	out, err := snapshot.Unmarshal(b)
	if err != nil {
		t.Fatal(err)
	}
	out.ID, out.Host.Hostname, out.TakenAt = id, host, at.UTC()
	if out.Sysctl == nil {
		out.Sysctl = map[string]string{}
	}
	return out
}

// smallStore is the store most tests use: 3 hosts, 24 runs of each probe
// per host, a step on the first host.
func smallStore(t testing.TB) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "perflab.db")
	genStore(t, path, genSpec{Hosts: 3, RunsPerHost: 24, Steps: 1,
		Start: time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC), Every: 12 * time.Hour, SnapEvery: 6})
	return path
}

func openRO(t testing.TB, path string) *store.Store {
	t.Helper()
	st, err := store.OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}
