package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/clierr"
	"github.com/perflab/perflab/internal/testenv"
)

// TestProfileEndToEnd records a C program with perf through the CLI, then
// loads the SVG and HTML it wrote in headless Chromium, where the page's
// self-test runs a search and a real click event through its handlers.
func TestProfileEndToEnd(t *testing.T) {
	testenv.Short(t)
	testenv.RequireRoot(t)
	testenv.RequireTool(t, "perf")
	gcc := testenv.RequireTool(t, "gcc")
	testenv.RequireTool(t, "chromium")
	dir := t.TempDir()
	bin := filepath.Join(dir, "cpu")
	if out, err := exec.Command(gcc, "-O2", "-fno-omit-frame-pointer", "-o", bin, "../flame/fold/testdata/workloads/cpu.c").CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	for _, ext := range []string{"svg", "html"} {
		o := filepath.Join(dir, "p."+ext)
		code, out, stderr := runCLIWith(t, nil, nil, nil, "profile", "-F", "999", "-o", o, "--", bin, "150000")
		if code != 0 || !strings.Contains(out, "leaf_mix") || !strings.Contains(out, "wrote "+o) {
			t.Fatalf("profile: code %d\nstdout %s\nstderr %s", code, out, stderr)
		}
		r := testenv.ChromiumSelfTest(t, o, "search=^leaf_&click=main")
		if r["ok"] != true || r["clicked"] != true || r["matched"].(float64) < 20 {
			t.Fatalf("%s: search/zoom failed in the browser: %v", ext, r)
		}
	}
}

func TestProfileUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"profile"},
		{"profile", "-p", "1", "-a"},
		{"profile", "-F", "0", "--", "true"},
		{"profile", "--colors", "rainbow", "--", "true"},
		{"profile", "ls"},
	} {
		code, _, stderr := runCLIWith(t, nil, nil, nil, args...)
		if code != clierr.Usage || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%v: code %d stderr %q", args, code, stderr)
		}
	}
	if _, err := os.Stat("profile.svg"); err == nil {
		t.Fatal("a refused profile must not write output")
	}
}
