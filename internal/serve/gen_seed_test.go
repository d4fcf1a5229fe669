package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/store"
)

// The test stores are seeded: generated three times in one process, a small
// store holds the same runs and snapshots to the byte. Its base snapshot
// was once the first of a range over the export's map (any of three), so
// about one store in six differed.
func TestGenStoreSameEveryTime(t *testing.T) {
	dump := func() []byte {
		path := filepath.Join(t.TempDir(), "perflab.db")
		genStore(t, path, genSpec{Hosts: 2, RunsPerHost: 4, Steps: 1,
			Start: time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC), Every: 12 * time.Hour, SnapEvery: 2})
		st, err := store.OpenReadOnly(path)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		ctx := context.Background()
		runs, err := st.Runs(ctx, store.Filter{})
		if err != nil {
			t.Fatal(err)
		}
		ex, err := st.Export(ctx, runs)
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(ex)
		if err != nil {
			t.Fatal(err)
		}
		if len(runs) == 0 || len(ex.Snapshots) == 0 {
			t.Fatalf("%d runs, %d snapshots", len(runs), len(ex.Snapshots))
		}
		return b
	}
	want := dump()
	for i := 1; i < 3; i++ {
		if got := dump(); !bytes.Equal(got, want) {
			t.Fatalf("generation %d: %d bytes differ from the first's %d", i+1, len(got), len(want))
		}
	}
}
