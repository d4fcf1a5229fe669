package store

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/run"
	"github.com/perflab/perflab/internal/snapshot"
)

// TestImportIsAtomic: one bad run anywhere in an import stores nothing, and
// the error names the run and the field in words, never the SQL.
func TestImportIsAtomic(t *testing.T) {
	now := time.Now()
	dup := newRun("b2", "", "cpu", "", now)
	dup.Samples = append(dup.Samples, dup.Samples[0]) // a repeated sample
	long := newRun("c3", strings.Repeat("L", 1<<20), "cpu", "", now)
	nul := newRun("d4", "", "cpu", "", now)
	nul.Host = "\xff\xfe"
	for _, tc := range []struct {
		name string
		bad  *run.Run
		want string
	}{
		{"duplicate sample", dup, "appears twice"},
		{"1 MiB label", long, "label"},
		{"invalid UTF-8 host", nul, "host"},
		{"same id twice", newRun("a1", "", "cpu", "", now), "appears twice"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Open(filepath.Join(t.TempDir(), "p.db"))
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			ex := &run.Export{Runs: []*run.Run{newRun("a1", "", "cpu", "", now), tc.bad}, Snapshots: map[string]*snapshot.Snapshot{}}
			_, err = s.Import(t.Context(), ex)
			var ie *ImportError
			if !errors.As(err, &ie) || !strings.Contains(err.Error(), "run "+tc.bad.ID) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Import = %v, want an ImportError naming run %s and %q", err, tc.bad.ID, tc.want)
			}
			for _, sqlWord := range []string{"constraint", "UNIQUE", "INSERT", "sqlite", "SQL"} {
				if strings.Contains(err.Error(), sqlWord) {
					t.Errorf("error shows the database's words: %v", err)
				}
			}
			if _, n, _ := s.RunRefs(t.Context(), Page{Filter: Filter{Limit: 10}}); n != 0 {
				t.Errorf("a failed import stored %d runs", n)
			}
		})
	}
	s, err := Open(filepath.Join(t.TempDir(), "p.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ex := &run.Export{Runs: []*run.Run{newRun("a1", "", "cpu", "", now), newRun("a2", "", "cpu", "", now)}}
	if res, err := s.Import(t.Context(), ex); err != nil || res.Stored != 2 {
		t.Fatalf("import = %+v, %v", res, err)
	}
	if res, err := s.Import(t.Context(), ex); err != nil || res.Stored != 0 || res.Skipped != 2 {
		t.Fatalf("second import = %+v, %v; want 2 skipped", res, err)
	}
}
