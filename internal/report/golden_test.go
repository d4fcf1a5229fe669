package report

import (
	"bytes"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/audit"
	"github.com/perflab/perflab/internal/check"
	"github.com/perflab/perflab/internal/compare"
	"github.com/perflab/perflab/internal/fixture"
	"github.com/perflab/perflab/internal/golden"
	"github.com/perflab/perflab/internal/metrics"
	"github.com/perflab/perflab/internal/run"
	"github.com/perflab/perflab/internal/snapshot"
	"github.com/perflab/perflab/internal/termfmt"
	"github.com/perflab/perflab/internal/testenv"
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

// goldenSides reads two run files as the sides of a comparison, named by
// their base names (the path would differ between checkouts).
func goldenSides(t *testing.T, paths ...string) []compare.Side {
	t.Helper()
	var sides []compare.Side
	for _, p := range paths {
		s, err := compare.ReadSideFile(p)
		if err != nil {
			t.Fatal(err)
		}
		s.Name = filepath.Base(p)
		sides = append(sides, s)
	}
	return sides
}

// goldenComparisons are the stored comparisons: Go benchmark output (as
// benchstat reads it) and real runs exported from a 2-vCPU VM with
// 'perflab runs export' (testdata/runs, two labels measured back to back).
var goldenComparisons = map[string][2]string{
	"gobench": {"../compare/testdata/old.txt", "../compare/testdata/new.txt"},
	"runs":    {"testdata/runs/before.json", "testdata/runs/after.json"},
}

// TestGoldenCompare renders each stored comparison as text, md and json.
func TestGoldenCompare(t *testing.T) {
	for name, files := range goldenComparisons {
		t.Run(name, func(t *testing.T) {
			c, err := compare.Compare(goldenSides(t, files[0], files[1]), compare.Options{})
			if err != nil {
				t.Fatal(err)
			}
			dir := filepath.Join("testdata", "golden", "compare")
			golden.Check(t, filepath.Join(dir, name+".txt.golden"), render(t, func(w io.Writer) error { return Text(w, c, termfmt.Style{}) }))
			golden.Check(t, filepath.Join(dir, name+".md.golden"), render(t, func(w io.Writer) error { return Markdown(w, c) }))
			golden.Check(t, filepath.Join(dir, name+".json.golden"), render(t, func(w io.Writer) error { return JSON(w, c) }))
		})
	}
}

// TestGoldenDemo renders the synthetic two-host comparison of demo (seed
// 004's powersave host: a likely cause, worse, inconclusive and equivalent
// verdicts, a curve, a metric name with Markdown in it).
func TestGoldenDemo(t *testing.T) {
	c := demo(t, 2)
	dir := filepath.Join("testdata", "golden", "compare")
	golden.Check(t, filepath.Join(dir, "demo.txt.golden"), render(t, func(w io.Writer) error { return Text(w, c, termfmt.Style{}) }))
	golden.Check(t, filepath.Join(dir, "demo.md.golden"), render(t, func(w io.Writer) error { return Markdown(w, c) }))
	golden.Check(t, filepath.Join(dir, "demo.json.golden"), render(t, func(w io.Writer) error { return JSON(w, c) }))
}

// TestGoldenCheck renders the terminal summary of a check: the audit of a
// fixture tree and real runs compared with the previous check's.
func TestGoldenCheck(t *testing.T) {
	s := goldenSnapshot(t, "kvm")
	w, err := audit.LookupWorkload("general")
	if err != nil {
		t.Fatal(err)
	}
	rep := audit.NewReport(s, w, audit.Run(s, w), goldenVersion, "live")
	sides := goldenSides(t, "testdata/runs/before.json", "testdata/runs/after.json")
	sides[0].Name, sides[1].Name = check.PreviousSide, check.CurrentSide
	c, err := compare.Compare(sides, compare.Options{})
	if err != nil {
		t.Fatal(err)
	}
	doc := &CheckDoc{Perflab: goldenVersion, Host: s.Host.Hostname, TakenAt: goldenTime, Label: check.DefaultLabel,
		Audit: rep, Comparison: c, Notes: []string{"sysbench.cpu was skipped: sysbench not installed"},
		Previous: &CheckPrevious{At: sides[0].Runs[0].Started, Runs: len(sides[0].Runs), SnapshotID: sides[0].Runs[0].SnapshotID},
		HTMLPath: "/tmp/perflab-report.html", Zone: time.UTC}
	golden.Check(t, filepath.Join("testdata", "golden", "check", "kvm.txt.golden"), render(t, func(out io.Writer) error {
		return CheckText(out, doc, termfmt.Style{})
	}))
}

// aaSide reads one of the real A/A exports (testdata/aa) as a compare side.
func aaSide(t *testing.T, n int) compare.Side {
	t.Helper()
	e, err := run.ReadExport(bytes.NewReader(testenv.Gunzip(t, filepath.Join("..", "..", "testdata", "aa", fmt.Sprintf("aa-%d.json.gz", n)))))
	if err != nil {
		t.Fatal(err)
	}
	return compare.Side{Name: fmt.Sprintf("aa-%d", n), Runs: e.Runs, Snapshots: e.Snapshots}
}

// TestGoldenCheckDrift is issue 12's drift case on real data: two checks of
// the development VM with nothing changed, the host ×several slower or
// faster between them (other jobs), earlier runs as the store's history.
// The report must say the host drifted and that no metric changed beyond
// it, never count regressions; the one setting that differs (a tool,
// stress-ng, was installed between the runs) explains nothing.
func TestGoldenCheckDrift(t *testing.T) {
	s := goldenSnapshot(t, "kvm")
	w, err := audit.LookupWorkload("general")
	if err != nil {
		t.Fatal(err)
	}
	rep := audit.NewReport(s, w, audit.Run(s, w), goldenVersion, "live")
	prev, cur := aaSide(t, 8), aaSide(t, 9)
	prev.Name, cur.Name = check.PreviousSide, check.CurrentSide
	var history []*run.Run
	for _, n := range []int{3, 4, 5, 6, 7} {
		history = append(history, aaSide(t, n).Runs...)
	}
	c, err := compare.Compare([]compare.Side{prev, cur}, compare.Options{History: history})
	if err != nil {
		t.Fatal(err)
	}
	doc := &CheckDoc{Perflab: goldenVersion, Host: s.Host.Hostname, TakenAt: goldenTime, Label: check.DefaultLabel,
		Audit: rep, Comparison: c,
		Previous: &CheckPrevious{At: prev.Runs[0].Started, Runs: len(prev.Runs), SnapshotID: prev.Runs[0].SnapshotID},
		Zone:     time.UTC}
	out := render(t, func(o io.Writer) error { return CheckText(o, doc, termfmt.Style{}) })
	golden.Check(t, filepath.Join("testdata", "golden", "check", "drift.txt.golden"), out)
	for _, want := range []string{"the host ran", "no metric changed beyond drift", "0 worse"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the drift report lacks %q:\n%s", want, out)
		}
	}
	for _, cs := range c.Pairs[0].Causes {
		if cs.Kind != compare.KindHostDrift {
			t.Errorf("likely cause %s of kind %s in an A/A comparison", cs.Knob, cs.Kind)
		}
	}
}
