package report

import (
	"bytes"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/testenv"
)

func attr(t *testing.T, dom, name string) string {
	t.Helper()
	m := regexp.MustCompile(`<html[^>]*\s` + name + `="([^"]*)"`).FindStringSubmatch(dom)
	if m == nil {
		t.Fatalf("no %s attribute on <html>:\n%.2000s", name, dom)
	}
	return m[1]
}

func TestHTMLRendersInChromium(t *testing.T) {
	c := demo(t, 2)
	var page bytes.Buffer
	if err := HTML(&page, c); err != nil {
		t.Fatal(err)
	}
	src := page.String()
	// Self-contained: no external script, style, image or font.
	for _, bad := range []string{"<script src", "<link", "@import", "url(http", "src=\"http"} {
		if strings.Contains(src, bad) {
			t.Errorf("page references an external resource: %q", bad)
		}
	}
	if !strings.Contains(src, `content="`+strings.ReplaceAll(CSP, "'", "&#39;")+`"`) {
		t.Errorf("CSP meta missing")
	}

	dom := testenv.ChromiumPage(t, page.Bytes())
	if errs := attr(t, dom, "data-errors"); errs != "" {
		t.Fatalf("page errors: %s", errs)
	}
	if attr(t, dom, "data-rendered") != "1" {
		t.Fatal("page script did not finish")
	}
	// One strip chart per metric plus the latency curve, all drawn by
	// the page's script (the HTML as written holds no <svg>).
	if strings.Contains(src, "<svg") {
		t.Fatal("charts must be drawn by the page, not pre-rendered")
	}
	n, _ := strconv.Atoi(attr(t, dom, "data-charts"))
	if want := len(c.Metrics) + 1; n != want {
		t.Errorf("%d charts, want %d", n, want)
	}
	if got := strings.Count(dom, `<svg class="chart metric"`); got != len(c.Metrics) {
		t.Errorf("%d metric charts in DOM, want %d", got, len(c.Metrics))
	}
	curve := dom[strings.Index(dom, `<svg class="chart curve"`):]
	curve = curve[:strings.Index(curve, "</svg>")]
	if strings.Count(curve, "<path ") != 2 || !strings.Contains(curve, `data-side="container"`) {
		t.Errorf("latency curve must have one line per side: %.500s", curve)
	}
	for _, m := range c.Metrics {
		if !strings.Contains(dom, `<tr data-metric="`+htmlAttr(m.Metric)+`"`) {
			t.Errorf("side-by-side table lacks %s", m.Metric)
		}
	}
	for _, want := range []string{`id="causes-0"`, "cpufreq governor", `id="config-diff"`, "cpu.governors.powersave", "~= ±2%", `class="verdict worse"`} {
		if !strings.Contains(dom, want) {
			t.Errorf("DOM lacks %q", want)
		}
	}
}

// The error and network checks above must be able to fail: a page that
// tries to fetch something, or throws, reports it in data-errors.
func TestHTMLErrorTrapsWork(t *testing.T) {
	var page bytes.Buffer
	if err := HTML(&page, demo(t, 1)); err != nil {
		t.Fatal(err)
	}
	bad := strings.Replace(page.String(), "</body>",
		`<script>fetch("http://127.0.0.1:9/leak").catch(function(){}); null.boom();</script></body>`, 1)
	dom := testenv.ChromiumPage(t, []byte(bad))
	errs := attr(t, dom, "data-errors")
	if !strings.Contains(errs, "blocked by CSP") || !strings.Contains(errs, "null") {
		t.Errorf("data-errors = %q, want the CSP violation and the TypeError", errs)
	}
}

func htmlAttr(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;").Replace(s)
}
