package compare

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/run"
	"github.com/perflab/perflab/internal/store"
)

// Sources resolves a label to all its runs, a prefix to one run, and
// classifies what names no runs, opening the database only when needed.
func TestSources(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "runs.db")
	st, err := store.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	for i, id := range []string{"aaaa1111", "aaaa2222", "bbbb3333"} {
		r := &run.Run{Schema: run.Schema, ID: id, Label: "before", Probe: "cpu", Host: "h", Params: map[string]string{},
			Started: t0.Add(time.Duration(i) * time.Minute), Ended: t0.Add(time.Duration(i)*time.Minute + time.Second), Complete: true, Stop: run.StopFixed,
			Metrics: []run.Metric{{Name: "m", Unit: "x/s", Better: run.Higher}}, Samples: []run.Sample{{Metric: "m", Value: 1}}}
		if id == "bbbb3333" {
			r.Label = "ab/win" // as bench --state … --label ab stores it
		}
		if err := st.SaveRun(context.Background(), r, nil); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()
	opened := 0
	src := &Sources{Open: func() (*store.Store, error) { opened++; return store.OpenReadOnly(db) }}
	defer src.Close()
	ctx := context.Background()
	sides, err := src.Sides(ctx, []string{"before", "bbbb"})
	if err != nil || len(sides) != 2 || len(sides[0].Runs) != 2 || len(sides[1].Runs) != 1 || opened != 1 {
		t.Fatalf("sides %+v, err %v, opened %d times", sides, err, opened)
	}
	if h := src.History(ctx, sides); len(h) != 3 {
		t.Errorf("history has %d runs, want the 3 of cpu on h", len(h))
	}
	// A label with '/' is a label when no such file exists.
	if side, err := src.Side(ctx, "ab/win"); err != nil || len(side.Runs) != 1 || side.Runs[0].ID != "bbbb3333" {
		t.Errorf("label ab/win: %+v, %v", side, err)
	}
	empty := filepath.Join(dir, "empty.json")
	os.WriteFile(empty, []byte("  \n"), 0o644)
	for arg, want := range map[string]SideErrorKind{
		"aaaa":                     AmbiguousID,
		"nothing":                  UnknownName,
		"missing/x.json":           NoSuchFile,
		empty:                      EmptyFile,
		filepath.Join(dir, "sub/"): NoSuchFile,
	} {
		_, err := src.Side(ctx, arg)
		var se *SideError
		if !errors.As(err, &se) || se.Kind != want {
			t.Errorf("%s: err %v, want kind %d", arg, err, want)
		}
	}
	noDB := &Sources{Open: func() (*store.Store, error) { return store.OpenReadOnly(filepath.Join(dir, "none.db")) }}
	var se *SideError
	if _, err := noDB.Side(ctx, "before"); !errors.As(err, &se) || se.Kind != NoDatabase {
		t.Errorf("no database: %v", err)
	}
	if h := noDB.History(ctx, sides); h != nil {
		t.Errorf("history without an opened database: %v", h)
	}
}
