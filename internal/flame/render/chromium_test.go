package render

import (
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/flame/folded"
	"github.com/perflab/perflab/internal/testenv"
)

// selftest loads a rendered graph in headless Chromium with the page's
// self-test hash, which drives search and a real click event through the
// page's own handlers, and returns what the page wrote into #selftest.
func selftest(t *testing.T, file, search, click string) map[string]any {
	t.Helper()
	return testenv.ChromiumSelfTest(t, file, "search="+search+"&click="+click)
}

// coveredShare is the share of samples under frames whose display name
// matches re, nested matches counted once: what "Matched" must say.
func coveredShare(tr *Tree, re *regexp.Regexp) float64 {
	var walk func(n *Node) uint64
	walk = func(n *Node) uint64 {
		name, _ := SplitAnnotation(n.Name)
		if n != tr.Root && re.MatchString(name) {
			return n.Value
		}
		var s uint64
		for _, c := range n.Children {
			s += walk(c)
		}
		return s
	}
	return 100 * float64(walk(tr.Root)) / float64(tr.Root.Value)
}

func TestGraphsWorkInChromium(t *testing.T) {
	testenv.Short(t)
	tr := Build(loadFixture(t), false, false)
	dir := t.TempDir()
	const search, click = "^slices\\.", "sort.Strings"
	want := coveredShare(tr, regexp.MustCompile(search))
	node := find(tr.Root, "gowork", "runtime.goexit.abi0", "main.main.gowrap1", "main.main.func1", "sort.Strings")
	if node == nil || want < 1 {
		t.Fatalf("fixture lacks the frames this test clicks and searches (share %.2f)", want)
	}

	svg := filepath.Join(dir, "g.svg")
	f, _ := os.Create(svg)
	if err := WriteSVG(f, tr, Options{}); err != nil {
		t.Fatal(err)
	}
	f.Close()
	r := selftest(t, svg, search, click)
	if got := r["matched"].(float64); math.Abs(got-want) > 0.1 {
		t.Errorf("SVG matched %.2f%%, want %.2f%%", got, want)
	}
	if r["clicked"] != true || r["zoomedWidth"] != r["fullWidth"] {
		t.Errorf("SVG click did not zoom the frame to full width: %v", r)
	}
	if r["visible"].(float64) >= r["frames"].(float64) || r["visibleAfterReset"] != r["frames"] || r["resetWidth"] != r["originalWidth"] {
		t.Errorf("SVG zoom should hide unrelated frames and reset should restore them: %v", r)
	}

	html := filepath.Join(dir, "g.html")
	f, _ = os.Create(html)
	if err := WriteHTML(f, tr, Options{Inverted: true}); err != nil {
		t.Fatal(err)
	}
	f.Close()
	r = selftest(t, html, search, click)
	if got := r["matched"].(float64); math.Abs(got-want) > 0.01 {
		t.Errorf("HTML matched %.3f%%, want %.3f%%", got, want)
	}
	if r["zoomedName"] != click || uint64(r["zoomedCount"].(float64)) != node.Value {
		t.Errorf("HTML click should zoom to %s (%d): %v", click, node.Value, r)
	}
	if ar, _ := r["afterReset"].(map[string]any); ar["name"] != "all" {
		t.Errorf("HTML reset did not return to the root: %v", r)
	}
}

// Fractional counts and --countname reach the HTML page's tooltips: the
// page divides by the profile's decimal scale and names the unit.
func TestHTMLTooltipFractionalInChromium(t *testing.T) {
	testenv.Short(t)
	p, err := folded.Read(strings.NewReader("app;b 1.5\napp;c 12000.25\n"))
	if err != nil {
		t.Fatal(err)
	}
	html := filepath.Join(t.TempDir(), "g.html")
	f, _ := os.Create(html)
	if err := WriteHTML(f, Build(p, false, false), Options{Palette: "io", CountName: "ms"}); err != nil {
		t.Fatal(err)
	}
	f.Close()
	r := selftest(t, html, "^b$", "b")
	if hover, _ := r["hover"].(string); !strings.Contains(hover, "b — 1.5 ms (0.01%)") {
		t.Errorf("hover on b: %q", r["hover"])
	}
	r = selftest(t, html, "^c$", "c")
	if hover, _ := r["hover"].(string); !strings.Contains(hover, "c — 12,000.25 ms") {
		t.Errorf("hover on c: %q", r["hover"])
	}
}
