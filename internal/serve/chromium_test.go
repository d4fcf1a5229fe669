package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/testenv"
)

// chromiumDOM loads url in a fresh headless Chromium (its own profile
// directory, so nothing carries over between loads) and returns the DOM
// after the page's scripts ran. With shot, it also writes a screenshot.
func chromiumDOM(t *testing.T, url, shot string) string {
	t.Helper()
	bin := testenv.RequireTool(t, "chromium")
	dir := t.TempDir()
	args := []string{"--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir=" + filepath.Join(dir, "profile"), "--run-all-compositor-stages-before-draw",
		"--virtual-time-budget=5000"}
	if shot != "" {
		runChromium(t, bin, append(args[:len(args):len(args)], "--window-size=1100,760", "--hide-scrollbars", "--screenshot="+shot, url))
	}
	return runChromium(t, bin, append(args[:len(args):len(args)], "--dump-dom", url))
}

func runChromium(t *testing.T, bin string, args []string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, stderr.String())
	}
	return stdout.String()
}

func htmlAttr(t *testing.T, dom, name string) string {
	t.Helper()
	m := regexp.MustCompile(`<html[^>]*\s` + name + `="([^"]*)"`).FindStringSubmatch(dom)
	if m == nil {
		t.Fatalf("no %s attribute on <html>:\n%.1500s", name, dom)
	}
	return m[1]
}

// flameDir holds a real folded profile (Go's, from the flame renderer's
// fixtures) and a copy edited so that runtime.mallocgc costs half as
// much: the "before" of a differential graph.
func flameDir(t testing.TB) string {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("..", "flame", "render", "testdata", "go.folded"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var before bytes.Buffer
	for _, line := range strings.Split(strings.TrimSpace(string(src)), "\n") {
		i := strings.LastIndexByte(line, ' ')
		n, _ := strconv.Atoi(line[i+1:])
		if strings.Contains(line, "runtime.mallocgc") {
			n /= 2
		}
		if n > 0 {
			before.WriteString(line[:i] + " " + strconv.Itoa(n) + "\n")
		}
	}
	for name, data := range map[string][]byte{"after.folded": src, "before.folded": before.Bytes()} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// requestLog records every path the server was asked for.
type requestLog struct {
	mu    sync.Mutex
	paths []string
}

func (l *requestLog) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		l.mu.Lock()
		l.paths = append(l.paths, r.URL.RequestURI())
		l.mu.Unlock()
		h.ServeHTTP(w, r)
	})
}

func TestViewsInChromium(t *testing.T) {
	testenv.RequireTool(t, "chromium")
	st := openRO(t, smallStore(t))
	var reqs requestLog
	srv := httptest.NewServer(reqs.wrap(New(st, Config{Listen: "127.0.0.1:0", FlameDir: flameDir(t)}).Handler()))
	defer srv.Close()
	shots := os.Getenv("PERFLAB_SERVE_SCREENSHOTS") // a directory: write docs/img screenshots
	for _, v := range []struct {
		name, url string
		want      []string // in the DOM
		count     map[string]int
	}{
		{"hosts", "/", []string{"change points", `<span class="sev `}, map[string]int{`<tr data-host=`: 4}},
		{"history", "/history?probe=cpu&host=node01&host=node02", []string{`<svg class="chart history"`, `data-series="2"`, stepSysctl},
			map[string]int{`<circle `: 48, `class="change"`: 1, `<tr data-change="node01"`: 1}},
		{"compare", "/compare?s=a1&s=a3", []string{`class="verdict `, `id="export-json"`, `<svg class="chart metric"`}, map[string]int{`<tr data-metric=`: metricsOf(t, srv.URL+"/compare?s=a1&s=a3")}},
		{"compare-hosts", "/compare?s=host:node01&s=host:node02&s=host:node03", []string{`class="verdict `},
			map[string]int{`<tr data-metric=`: metricsOf(t, srv.URL+"/compare?s=host:node01&s=host:node02&s=host:node03")}},
		{"runs", "/runs?host=node02", []string{"48 runs"}, map[string]int{`<tr data-run=`: 48}},
		{"audit", "/audit?host=node01", []string{`<table id="findings"`, "<pre>"}, nil},
		{"snapshots", "/snapshots?host=node01&a=node01-s00006&b=node01-s00012", []string{stepSysctl, "500000", "50000"}, nil},
		{"flame", "/flame?f=after.folded&base=before.folded", []string{`id="top-changes"`, "runtime.mallocgc", "<canvas"}, nil},
	} {
		t.Run(v.name, func(t *testing.T) {
			shot := ""
			if shots != "" {
				shot = filepath.Join(shots, "serve-"+v.name+".png")
			}
			reqs.mu.Lock()
			before := len(reqs.paths)
			reqs.mu.Unlock()
			dom := chromiumDOM(t, srv.URL+v.url, shot)
			if errs := htmlAttr(t, dom, "data-errors"); errs != "" {
				t.Errorf("page errors: %s", errs)
			}
			if htmlAttr(t, dom, "data-rendered") != "1" {
				t.Errorf("page script did not finish")
			}
			for _, w := range v.want {
				if !strings.Contains(dom, w) {
					t.Errorf("DOM lacks %q", w)
				}
			}
			for w, n := range v.count {
				if got := strings.Count(dom, w); got < n || (w != `class="change"` && got != n) {
					t.Errorf("DOM has %d × %q, want %d", got, w, n)
				}
			}
			// The page asked the server for nothing but itself (and
			// perhaps the favicon); anything else would be blocked by the
			// CSP and reported in data-errors above.
			reqs.mu.Lock()
			for _, p := range reqs.paths[before:] {
				if p != v.url && p != "/favicon.ico" {
					t.Errorf("page requested %s", p)
				}
			}
			reqs.mu.Unlock()
		})
	}
}

// A permalink opened in a new browser (a fresh profile, nothing shared)
// shows the same view: the selection lives entirely in the URL.
func TestPermalinkInNewBrowser(t *testing.T) {
	testenv.RequireTool(t, "chromium")
	st := openRO(t, smallStore(t))
	srv := httptest.NewServer(New(st, Config{Listen: "127.0.0.1:0"}).Handler())
	defer srv.Close()
	u := srv.URL + "/history?probe=syscall&host=node01&host=node03&from=2026-10-02&to=2026-10-10T12:00:00Z"
	first, second := chromiumDOM(t, u, ""), chromiumDOM(t, u, "")
	if first != second {
		t.Errorf("the permalink rendered differently in a new browser")
	}
	if !strings.Contains(first, `data-series="2"`) || strings.Count(first, "<circle ") != 2*17 {
		t.Errorf("permalink lost its selection: %d points", strings.Count(first, "<circle "))
	}
}

// The traps the checks above rely on can fail: a page that fetches
// something or throws reports it.
func TestErrorTrapsWork(t *testing.T) {
	testenv.RequireTool(t, "chromium")
	st := openRO(t, smallStore(t))
	inner := New(st, Config{Listen: "127.0.0.1:0"}).Handler()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := httptest.NewRecorder()
		inner.ServeHTTP(rec, r)
		for k, vs := range rec.Header() {
			w.Header()[k] = vs
		}
		body := strings.Replace(rec.Body.String(), "</body>",
			`<script>fetch("http://127.0.0.1:9/leak").catch(function(){}); null.boom();</script></body>`, 1)
		w.Write([]byte(body))
	}))
	defer srv.Close()
	dom := chromiumDOM(t, srv.URL+"/", "")
	errs := htmlAttr(t, dom, "data-errors")
	if !strings.Contains(errs, "blocked by CSP") || !strings.Contains(errs, "null") {
		t.Errorf("data-errors = %q, want the CSP violation and the TypeError", errs)
	}
}

// metricsOf is how many metric rows the comparison at url has, from its
// JSON export.
func metricsOf(t *testing.T, url string) int {
	t.Helper()
	resp, err := http.Get(url + "&format=json")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var c struct {
		Metrics []json.RawMessage `json:"metrics"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&c); err != nil || len(c.Metrics) == 0 {
		t.Fatalf("%s: %d metrics, %v", url, len(c.Metrics), err)
	}
	return len(c.Metrics)
}
