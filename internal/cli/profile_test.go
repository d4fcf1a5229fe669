package cli

import (
	"context"
	"encoding/json"
	"html"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

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
	chromium := testenv.RequireTool(t, "chromium")
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
		u := url.URL{Scheme: "file", Path: o, Fragment: "perflab-selftest:search=^leaf_&click=main"}
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		dom, err := exec.CommandContext(ctx, chromium, "--headless", "--no-sandbox", "--disable-gpu",
			"--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run",
			"--user-data-dir="+t.TempDir(), "--run-all-compositor-stages-before-draw", "--virtual-time-budget=5000",
			"--dump-dom", u.String()).Output()
		cancel()
		if err != nil {
			t.Fatalf("chromium: %v", err)
		}
		m := regexp.MustCompile(`id="selftest"[^>]*>([^<]+)<`).FindSubmatch(dom)
		if m == nil {
			t.Fatalf("%s: the page did not run its self-test", ext)
		}
		var r map[string]any
		if err := json.Unmarshal([]byte(html.UnescapeString(string(m[1]))), &r); err != nil {
			t.Fatal(err)
		}
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
