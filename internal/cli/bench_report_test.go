package cli

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/run"
	"github.com/perflab/perflab/internal/snapshot"
	"github.com/perflab/perflab/internal/store"
)

// sessionRun is a finished run of probe with eight samples and notes.
func sessionRun(id, probe string, notes ...string) *run.Run {
	t0 := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	r := &run.Run{Schema: run.Schema, ID: id, Probe: probe, Host: "h", Params: map[string]string{}, Complete: true, Stop: run.StopFixed,
		Started: t0, Ended: t0.Add(2 * time.Second), Notes: notes,
		Metrics: []run.Metric{{Name: "events_per_sec.t1", Unit: "events/s", Better: run.Higher}}}
	for k := 0; k < 8; k++ {
		r.Samples = append(r.Samples, run.Sample{Metric: "events_per_sec.t1", Value: 1000 + float64(k), Iteration: k})
	}
	return r
}

func noisyNoise() *run.Noise {
	return &run.Noise{CPUs: "0-1", ThresholdUs: 200,
		Before: &run.NoiseReading{Seconds: 0.1, LostPct: 1.1, InterruptionsPerS: 19, MaxGapUs: 3000},
		After:  &run.NoiseReading{Seconds: 0.1, LostPct: 2.1, InterruptionsPerS: 25, MaxGapUs: 4200}}
}

// runs show prints the noise readings in one line (and says when a run
// has none); its JSON is the stored run, noise included.
func TestRunsShowNoise(t *testing.T) {
	db := filepath.Join(t.TempDir(), "runs.db")
	st, err := store.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	snap := &snapshot.Snapshot{Schema: snapshot.Schema, ID: "snap", Sysctl: map[string]string{}, Unavailable: map[string]string{}}
	noisy := sessionRun("noisy0001", "cpu")
	noisy.SnapshotID = snap.ID
	noisy.Noise = noisyNoise()
	quiet := sessionRun("plain0002", "cpu")
	quiet.SnapshotID = snap.ID
	for _, r := range []*run.Run{noisy, quiet} {
		if err := st.SaveRun(context.Background(), r, snap); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()

	code, out, stderr := runCLI(t, "runs", "show", "noisy", "--db", db)
	want := "  host noise: before 1.1% (longest gap 3.0 ms), after 2.1% (longest gap 4.2 ms) on cpus 0-1\n"
	if code != 0 || !strings.Contains(out, want) {
		t.Errorf("runs show: exit %d %s\n%s\nwant the line %q", code, stderr, out, want)
	}
	if code, out, _ := runCLI(t, "runs", "show", "plain", "--db", db); code != 0 || !strings.Contains(out, "  host noise: not recorded\n") {
		t.Errorf("runs show without readings: exit %d\n%s", code, out)
	}

	code, out, _ = runCLI(t, "runs", "show", "noisy", "--db", db, "--format", "json")
	var doc run.Run
	if code != 0 || json.Unmarshal([]byte(out), &doc) != nil || doc.Noise == nil || doc.Noise.Before.LostPct != 1.1 || doc.Noise.After.InterruptionsPerS != 25 {
		t.Errorf("runs show json: exit %d noise %+v\n%.400s", code, doc.Noise, out)
	}
}
