package testenv

import (
	"bytes"
	"context"
	"encoding/json"
	"html"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"
)

// The one headless-Chromium harness of the tests: report's HTML pages,
// the console's views, flame graphs and `perflab profile` output are all
// loaded the same way. Each load gets a fresh profile directory, so
// nothing (cache, storage) carries over between loads, and the page's
// scripts run to completion in virtual time before the DOM is read.

// chromiumTimeout bounds one load: Chromium's cold start on the 2-core
// test VM under a parallel build is seconds, not minutes.
const chromiumTimeout = 90 * time.Second

func chromium(t testing.TB, extra ...string) string {
	t.Helper()
	bin := RequireTool(t, "chromium")
	args := []string{"--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir=" + filepath.Join(t.TempDir(), "profile"),
		"--run-all-compositor-stages-before-draw", "--virtual-time-budget=5000"}
	ctx, cancel := context.WithTimeout(context.Background(), chromiumTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, append(args, extra...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium %v: %v\n%s", extra, err, stderr.String())
	}
	return stdout.String()
}

// ChromiumDOM loads u (http:// or file://) and returns the DOM after the
// page's scripts ran.
func ChromiumDOM(t testing.TB, u string) string {
	t.Helper()
	return chromium(t, "--dump-dom", u)
}

// ChromiumPage is ChromiumDOM of an HTML document held in memory.
func ChromiumPage(t testing.TB, page []byte) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "page.html")
	if err := os.WriteFile(file, page, 0o644); err != nil {
		t.Fatal(err)
	}
	return ChromiumDOM(t, (&url.URL{Scheme: "file", Path: file}).String())
}

// ChromiumScreenshot writes a PNG of u, width×height pixels, to png.
func ChromiumScreenshot(t testing.TB, u, png string, width, height int) {
	t.Helper()
	chromium(t, "--window-size="+strconv.Itoa(width)+","+strconv.Itoa(height), "--hide-scrollbars", "--screenshot="+png, u)
}

var selftestRE = regexp.MustCompile(`id="selftest"[^>]*>([^<]*)<`)

// ChromiumSelfTest loads the flame graph at file with the page's self-test
// hash (#perflab-selftest:ARGS), which drives search and a real click
// through the page's own handlers, and returns the JSON object the page
// wrote into its #selftest element.
func ChromiumSelfTest(t testing.TB, file, args string) map[string]any {
	t.Helper()
	u := url.URL{Scheme: "file", Path: file, Fragment: "perflab-selftest:" + args}
	dom := ChromiumDOM(t, u.String())
	m := selftestRE.FindStringSubmatch(dom)
	if m == nil || m[1] == "" {
		t.Fatalf("%s: the page did not run its self-test; DOM tail: %.400s", file, dom[max(0, len(dom)-400):])
	}
	var res map[string]any
	if err := json.Unmarshal([]byte(html.UnescapeString(m[1])), &res); err != nil {
		t.Fatalf("%s: self-test output %s: %v", file, m[1], err)
	}
	return res
}
