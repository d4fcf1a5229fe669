package report

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/fixture"
	"github.com/perflab/perflab/internal/hostfs"
	"github.com/perflab/perflab/internal/snapshot"
	"github.com/perflab/perflab/internal/termfmt"
)

func TestSnapshotTextForms(t *testing.T) {
	t.Parallel()
	s, err := snapshot.Collect(rootFS(t, "metal"), snapshot.Options{Now: time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := SnapshotText(&b, s, termfmt.Style{}, false); err != nil {
		t.Fatal(err)
	}
	// The lines themselves are in testdata/golden/*/snapshot.txt.golden;
	// here: the short form hints at --verbose, is plain, fits a screen.
	out := b.String()
	if !strings.Contains(out, "facts unavailable (--verbose lists them)") {
		t.Errorf("no --verbose hint:\n%s", out)
	}
	if strings.Contains(out, "\x1b[") {
		t.Error("colour written with colour off")
	}
	if n := strings.Count(out, "\n"); n > 30 {
		t.Errorf("summary is %d lines; it must fit one screen:\n%s", n, out)
	}

	b.Reset()
	if err := SnapshotText(&b, s, termfmt.Style{On: true}, true); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "tools.sysbench") || !strings.Contains(b.String(), "sysbench not found") {
		t.Errorf("--verbose does not list unavailable facts with reasons:\n%s", b.String())
	}
	if !strings.Contains(b.String(), "\x1b[1m") {
		t.Error("no bold labels with colour on")
	}
}

func TestWriteTextEmptySnapshot(t *testing.T) {
	s := &snapshot.Snapshot{Schema: snapshot.Schema, Root: "/x", Unavailable: map[string]string{"proc": "no /proc"}}
	var b bytes.Buffer
	if err := SnapshotText(&b, s, termfmt.Style{}, true); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "1 fact unavailable:") || !strings.Contains(b.String(), "proc: no /proc") {
		t.Errorf("empty snapshot summary:\n%s", b.String())
	}
}

// rootFS reads testdata/roots/name in place (read-only: nothing edits it).
func rootFS(t testing.TB, name string) hostfs.FS {
	t.Helper()
	fs, err := hostfs.New(fixture.Dir(name))
	if err != nil {
		t.Fatalf("fixture %s: %v", name, err)
	}
	return fs
}

// A fact the host did not give is printed as unknown with the reason,
// never as a zero: a kernel without MemAvailable is not "0 B available",
// and a tree with neither the netfilter sysctls nor a module list does
// not show "conntrack not loaded" (defect 7).
func TestSnapshotTextMissingIsUnknown(t *testing.T) {
	meminfo, err := os.ReadFile(filepath.Join(fixture.Dir("kvm"), "proc", "meminfo"))
	if err != nil {
		t.Fatal(err)
	}
	var kept []string
	for _, l := range strings.Split(string(meminfo), "\n") {
		if !strings.HasPrefix(l, "MemAvailable:") {
			kept = append(kept, l)
		}
	}
	fs := fixture.Tree(t, "kvm", map[string]string{
		"/proc/meminfo": strings.Join(kept, "\n"),
		"/proc/sys/net": fixture.Delete,
		"/proc/modules": fixture.Delete,
		"/sys/module":   fixture.Delete,
	})
	s, err := snapshot.Collect(fs, snapshot.Options{Now: goldenTime})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := SnapshotText(&b, s, termfmt.Style{}, false); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, bad := range []string{"0 B available", "conntrack not loaded"} {
		if strings.Contains(out, bad) {
			t.Errorf("summary prints a missing fact as a value (%q):\n%s", bad, out)
		}
	}
	for _, want := range []string{"available unknown (/proc/meminfo has no such line on this kernel)", "conntrack unknown ("} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
}

// procfs's tree has no evidence about nf_conntrack: the summary must not
// say it is not loaded.
func TestSnapshotTextConntrackUnknown(t *testing.T) {
	s, err := snapshot.Collect(rootFS(t, "procfs"), snapshot.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := SnapshotText(&b, s, termfmt.Style{}, false); err != nil {
		t.Fatal(err)
	}
	if out := b.String(); !strings.Contains(out, "conntrack unknown") || strings.Contains(out, "conntrack not loaded") {
		t.Errorf("summary:\n%s", out)
	}
}
