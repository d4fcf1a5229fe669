package check

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/run"
	"github.com/perflab/perflab/internal/snapshot"
	"github.com/perflab/perflab/internal/store"
)

func openStore(t *testing.T) *store.Store {
	t.Helper()
	st, err := store.Open(filepath.Join(t.TempDir(), "runs.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

var t0 = time.Date(2025, 5, 1, 12, 0, 0, 0, time.UTC)

// save stores a one-metric run of probe taken with snapshot snap.
func save(t *testing.T, st *store.Store, id, label, suite, probe string, snap *snapshot.Snapshot, at time.Duration) {
	t.Helper()
	r := &run.Run{Schema: run.Schema, ID: id, Label: label, Suite: suite, Probe: probe, Params: map[string]string{},
		Host: snap.Host.Hostname, MachineID: snap.Host.MachineID, SnapshotID: snap.ID,
		Started: t0.Add(at), Ended: t0.Add(at + time.Second), Complete: true, Stop: run.StopFixed,
		Metrics: []run.Metric{{Name: "m", Unit: "x/s", Better: run.Higher}},
		Samples: []run.Sample{{Metric: "m", Value: 1}}}
	if err := st.SaveRun(context.Background(), r, snap); err != nil {
		t.Fatal(err)
	}
}

func snap(id, host, machine string) *snapshot.Snapshot {
	return &snapshot.Snapshot{Schema: 1, ID: id, TakenAt: t0, Host: snapshot.Host{Hostname: host, MachineID: machine}}
}

func ids(p *Previous) []string {
	if p == nil {
		return nil
	}
	var out []string
	for _, r := range p.Runs {
		out = append(out, r.ID)
	}
	return out
}

// FindPrevious picks the newest earlier check of the same machine, label
// and suite, with all of that check's runs and none of another's.
func TestFindPrevious(t *testing.T) {
	st := openStore(t)
	ctx := context.Background()
	older, newer := snap("s1", "db-7", "m-1"), snap("s2", "db-7", "m-1")
	save(t, st, "old-cpu", "check", "quick", "cpu", older, 0)
	save(t, st, "old-mem", "check", "quick", "memory.latency", older, time.Second)
	save(t, st, "new-cpu", "check", "quick", "cpu", newer, time.Hour)
	save(t, st, "new-mem", "check", "quick", "memory.latency", newer, time.Hour+time.Second)
	// Later, but not a previous check of this machine, label or suite.
	save(t, st, "reinstalled", "check", "quick", "cpu", snap("s3", "db-7", "m-2"), 2*time.Hour)
	save(t, st, "nightly", "nightly", "quick", "cpu", snap("s4", "db-7", "m-1"), 3*time.Hour)
	save(t, st, "memsuite", "check", "memory", "memory.latency", snap("s5", "db-7", "m-1"), 4*time.Hour)

	now := snap("s9", "db-7", "m-1")
	p, err := FindPrevious(ctx, st, "check", "quick", now)
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(p); len(got) != 2 || got[0] != "new-cpu" || got[1] != "new-mem" || p.SnapshotID != "s2" || !p.At.Equal(t0.Add(time.Hour)) {
		t.Fatalf("previous check %v (snapshot %v), want new-cpu, new-mem of s2", got, p)
	}

	// This check's own runs (its snapshot) are never its previous check.
	save(t, st, "self", "check", "quick", "cpu", now, 5*time.Hour)
	if p, _ := FindPrevious(ctx, st, "check", "quick", now); len(ids(p)) != 2 || p.SnapshotID != "s2" {
		t.Errorf("own runs taken as the previous check: %v", ids(p))
	}

	// An interrupted check is not a baseline.
	cut := snap("s6", "db-7", "m-1")
	r := &run.Run{Schema: run.Schema, ID: "cut", Label: "check", Suite: "quick", Probe: "cpu", Params: map[string]string{},
		Host: "db-7", MachineID: "m-1", SnapshotID: cut.ID, Started: t0.Add(6 * time.Hour), Stop: run.StopInterrupted,
		Metrics: []run.Metric{{Name: "m", Unit: "x/s", Better: run.Higher}}}
	if err := st.SaveRun(ctx, r, cut); err != nil {
		t.Fatal(err)
	}
	if p, _ := FindPrevious(ctx, st, "check", "quick", snap("s13", "db-7", "m-1")); p == nil || p.SnapshotID != "s9" {
		t.Errorf("after an interrupted check the previous is %v, want the complete check s9", p)
	}

	// Another machine with the same hostname has no previous check.
	if p, _ := FindPrevious(ctx, st, "check", "quick", snap("s10", "db-7", "m-3")); p != nil {
		t.Errorf("another machine's runs taken as previous: %v", ids(p))
	}
	// Without a machine id the hostname decides.
	if p, _ := FindPrevious(ctx, st, "check", "memory", snap("s11", "db-7", "")); len(ids(p)) != 1 || ids(p)[0] != "memsuite" {
		t.Errorf("hostname fallback: %v", ids(p))
	}
	// A first check has none.
	if p, _ := FindPrevious(ctx, st, "check", "quick", snap("s12", "web-1", "m-9")); p != nil {
		t.Errorf("first check of web-1 found %v", ids(p))
	}
}
