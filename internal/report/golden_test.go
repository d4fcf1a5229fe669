package report

import (
	"bytes"
	"io"
	"path/filepath"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/audit"
	"github.com/perflab/perflab/internal/fixture"
	"github.com/perflab/perflab/internal/golden"
	"github.com/perflab/perflab/internal/metrics"
	"github.com/perflab/perflab/internal/snapshot"
	"github.com/perflab/perflab/internal/termfmt"
)

// Volatile fields of golden output are fixed through options, never by
// editing the output: the snapshot's id, root and time, perflab's version.
const goldenVersion = "v0.0.0-golden"

var goldenTime = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

// goldenSnapshot collects testdata/roots/name with reproducible fields.
func goldenSnapshot(t *testing.T, name string) *snapshot.Snapshot {
	t.Helper()
	s, err := snapshot.Collect(rootFS(t, name), snapshot.Options{Now: goldenTime, ID: "golden-" + name, Root: "testdata/roots/" + name})
	if err != nil {
		t.Fatal(err)
	}
	s.Perflab = goldenVersion
	return s
}

// render runs fn into a buffer.
func render(t *testing.T, fn func(io.Writer) error) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := fn(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestGoldenRoots renders the snapshot summary and the audit for the
// general workload in every format over every tree of testdata/roots, so
// a tree another change adds gets its golden files on -update.
func TestGoldenRoots(t *testing.T) {
	names := fixture.Names()
	if len(names) < 3 {
		t.Fatalf("testdata/roots has %d trees: %v", len(names), names)
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			s := goldenSnapshot(t, name)
			dir := filepath.Join("testdata", "golden", name)
			golden.Check(t, filepath.Join(dir, "snapshot.txt.golden"), render(t, func(w io.Writer) error {
				return SnapshotText(w, s, termfmt.Style{}, true)
			}))
			w, err := audit.LookupWorkload("general")
			if err != nil {
				t.Fatal(err)
			}
			findings := audit.Run(s, w)
			rep := audit.NewReport(s, w, findings, goldenVersion, s.Root)
			golden.Check(t, filepath.Join(dir, "audit.txt.golden"), render(t, func(w io.Writer) error {
				return AuditText(w, rep, AuditTextOptions{Verbose: true})
			}))
			golden.Check(t, filepath.Join(dir, "audit.md.golden"), render(t, func(w io.Writer) error { return AuditMarkdown(w, rep, true) }))
			golden.Check(t, filepath.Join(dir, "audit.json.golden"), render(t, rep.WriteJSON))
			golden.Check(t, filepath.Join(dir, "audit.prom.golden"), render(t, func(out io.Writer) error {
				return metrics.WriteText(out, metrics.NewRegistry(goldenVersion, s, w.Name, findings))
			}))
		})
	}
}
