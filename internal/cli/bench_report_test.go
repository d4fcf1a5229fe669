package cli

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/fixture/fixrun"
	"github.com/perflab/perflab/internal/run"
	"github.com/perflab/perflab/internal/snapshot"
	"github.com/perflab/perflab/internal/store"
)

// runs show prints the noise readings in one line (and says when a run
// has none); its JSON is the stored run, noise included.
func TestRunsShowNoise(t *testing.T) {
	db := filepath.Join(t.TempDir(), "runs.db")
	st, err := store.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	snap := &snapshot.Snapshot{Schema: snapshot.Schema, ID: "snap", Sysctl: map[string]string{}, Unavailable: map[string]string{}}
	noisy := fixrun.Run("noisy0001", "cpu")
	noisy.SnapshotID = snap.ID
	noisy.Noise = fixrun.NoisyNoise()
	quiet := fixrun.Run("plain0002", "cpu")
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
