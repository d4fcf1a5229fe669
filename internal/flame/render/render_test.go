package render

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/flame/folded"
)

func mustRead(t testing.TB, s string) *folded.Profile {
	t.Helper()
	p, err := folded.Read(strings.NewReader(s))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func find(n *Node, path ...string) *Node {
	for _, name := range path {
		var next *Node
		for _, c := range n.Children {
			if c.Name == name {
				next = c
			}
		}
		if next == nil {
			return nil
		}
		n = next
	}
	return n
}

func TestBuildMergesAndSorts(t *testing.T) {
	tr := Build(mustRead(t, "a;m;z 3\na;m 2\na;b 5\nc;x 1\na;m;z 1\n"), false, false)
	if tr.Root.Value != 12 {
		t.Fatalf("root = %d", tr.Root.Value)
	}
	a := find(tr.Root, "a")
	if a.Value != 11 || a.Children[0].Name != "b" || a.Children[1].Name != "m" {
		t.Fatalf("a = %+v", a)
	}
	m := find(tr.Root, "a", "m")
	if m.Value != 6 || m.Self != 2 || find(m, "z").Value != 4 {
		t.Fatalf("m = %+v", m)
	}
	if tr.Depth != 3 {
		t.Fatalf("depth = %d", tr.Depth)
	}
	rev := Build(mustRead(t, "a;m;z 3\nb;z 2\n"), true, false)
	if z := find(rev.Root, "z"); z == nil || z.Value != 5 || find(z, "m", "a").Value != 3 {
		t.Fatalf("reversed tree wrong: %+v", rev.Root.Children)
	}
}

func TestBuildDiffColoursOwnSamples(t *testing.T) {
	// main's own samples unchanged; leaf grew by 10; other shrank by 4.
	tr := Build(mustRead(t, "p;main 5 5\np;main;leaf 2 12\np;main;other 6 2\n"), false, false)
	if !tr.Diff || tr.MaxDelta != 10 {
		t.Fatalf("diff=%v max=%d", tr.Diff, tr.MaxDelta)
	}
	main := find(tr.Root, "p", "main")
	if main.Value != 19 || main.Delta != 0 {
		t.Fatalf("main: width must be the after count (19), own change 0: %+v", main)
	}
	if d := find(main, "leaf").Delta; d != 10 {
		t.Fatalf("leaf delta = %d", d)
	}
	if c := diffColor(find(main, "leaf").Delta, tr.MaxDelta); c.r != 255 || c.g != 0 {
		t.Fatalf("largest growth should be saturated red, got %v", c)
	}
	if c := diffColor(find(main, "other").Delta, tr.MaxDelta); c.b != 255 || c.r != c.g || c.r == 255 {
		t.Fatalf("shrink should be blue, got %v", c)
	}
	neg := Build(mustRead(t, "p;main;leaf 2 12\n"), false, true)
	if d := find(neg.Root, "p", "main", "leaf").Delta; d != -10 {
		t.Fatalf("negated delta = %d", d)
	}
}

func TestColoursAreStablePerName(t *testing.T) {
	a := frameColor("hot", "ngx_http_process_request", User)
	b := frameColor("hot", "ngx_http_process_request", User)
	c := frameColor("hot", "ngx_http_parse_request_line", User)
	if a != b || a == c {
		t.Fatalf("colours %v %v %v", a, b, c)
	}
	if k, u := frameColor("kernel", "tcp_sendmsg", Kernel), frameColor("kernel", "main", User); k.b != 0 || u.b < 190 {
		t.Fatalf("kernel palette should split orange kernel %v from blue user %v", k, u)
	}
	if j := frameColor("java", "Lcom/x;.run", JIT); j.g < 190 {
		t.Fatalf("JIT frames should be green in the java palette: %v", j)
	}
}

func TestSplitAnnotation(t *testing.T) {
	for in, want := range map[string]struct {
		name string
		kind Kind
	}{
		"tcp_sendmsg_[k]": {"tcp_sendmsg", Kernel}, "run_[j]": {"run", JIT}, "f_[i]": {"f", Inlined},
		"plain": {"plain", User}, "_[k]": {"", Kernel}, "x_[z]": {"x_[z]", User},
	} {
		if n, k := SplitAnnotation(in); n != want.name || k != want.kind {
			t.Errorf("%q -> %q %v", in, n, k)
		}
	}
}

func loadFixture(t testing.TB) *folded.Profile {
	t.Helper()
	f, err := os.Open("testdata/go.folded")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, err := folded.Read(f)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestSVGIsWellFormedAndEscaped(t *testing.T) {
	p := mustRead(t, "a<b>;c&d;\"q\" 10\na<b>;x\x01y 5\nz;tiny 1\n")
	var buf bytes.Buffer
	opt := Options{Title: "t & <t>", Width: 600, MinWidth: 20}
	if err := WriteSVG(&buf, Build(p, false, false), opt); err != nil {
		t.Fatal(err)
	}
	d := xml.NewDecoder(&buf)
	titles := []string{}
	inTitle := false
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("SVG is not well-formed XML: %v", err)
		}
		switch v := tok.(type) {
		case xml.StartElement:
			inTitle = v.Name.Local == "title"
		case xml.CharData:
			if inTitle {
				titles = append(titles, string(v))
			}
		case xml.EndElement:
			inTitle = false
		}
	}
	joined := strings.Join(titles, "\n")
	if !strings.Contains(joined, "c&d (10 samples, 62.50%") || !strings.Contains(joined, "a<b>") {
		t.Fatalf("titles: %s", joined)
	}
	// 1 of 16 samples at 580 px is 36 px wide: kept; MinWidth 40 drops it.
	if !strings.Contains(joined, "tiny") {
		t.Fatal("tiny frame dropped too early")
	}
	buf.Reset()
	opt.MinWidth = 40
	WriteSVG(&buf, Build(p, false, false), opt)
	if strings.Contains(buf.String(), "tiny") {
		t.Fatal("frame narrower than MinWidth was drawn")
	}
}

func TestHTMLDataMatchesTree(t *testing.T) {
	p := loadFixture(t)
	tr := Build(p, false, false)
	var buf bytes.Buffer
	if err := WriteHTML(&buf, tr, Options{MinWidth: 0}); err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?s)<script type="application/json" id="data">(.*?)</script>`).FindSubmatch(buf.Bytes())
	if m == nil {
		t.Fatal("no data block")
	}
	var d struct {
		Total   uint64   `json:"total"`
		Names   []string `json:"names"`
		N, D, X []int64
		V       []uint64 `json:"v"`
	}
	if err := json.Unmarshal(m[1], &d); err != nil {
		t.Fatalf("data is not JSON: %v", err)
	}
	if d.Total != p.Total() || d.V[0] != d.Total || d.Names[d.N[0]] != "all" {
		t.Fatalf("root: total %d v0 %d", d.Total, d.V[0])
	}
	// every child lies within its parent, in preorder
	var stack []int
	for i := range d.N {
		for len(stack) > int(d.D[i]) {
			stack = stack[:len(stack)-1]
		}
		if len(stack) > 0 {
			par := stack[len(stack)-1]
			if d.X[i] < d.X[par] || uint64(d.X[i])+d.V[i] > uint64(d.X[par])+d.V[par] {
				t.Fatalf("node %d outside its parent", i)
			}
		}
		stack = append(stack, i)
	}
	if strings.Count(buf.String(), "<script") != 3 || strings.Contains(buf.String(), "http://") || strings.Contains(buf.String(), "https://") {
		t.Fatal("HTML must be self-contained: exactly the shell's error trap, the data and the inline script, no URLs")
	}
	if !strings.Contains(buf.String(), `http-equiv="Content-Security-Policy"`) {
		t.Fatal("the flame page must come from report's page shell, with its CSP")
	}
}

func BenchmarkRender(b *testing.B) {
	p := loadFixture(b)
	for b.Loop() {
		tr := Build(p, false, false)
		WriteSVG(io.Discard, tr, Options{})
		WriteHTML(io.Discard, tr, Options{})
	}
}

func TestGroupDigitsWithFraction(t *testing.T) {
	for _, c := range []struct {
		v     uint64
		scale int
		want  string
	}{{1234567, 0, "1,234,567"}, {1234567, 2, "12,345.67"}, {100, 2, "1"}, {5, 3, "0.005"}, {123450, 1, "12,345"}} {
		if got := groupDigits(c.v, c.scale); got != c.want {
			t.Errorf("groupDigits(%d, %d) = %q, want %q", c.v, c.scale, got, c.want)
		}
	}
}

// Off-CPU graphs (perflab profile --off-cpu) use FlameGraph's and
// inferno's names: io draws every frame in blues on a blue background,
// wakeup in aqua; --countname says what a count is ("us").
func TestOffCPUPaletteAndCountName(t *testing.T) {
	p := mustRead(t, "app;read;vfs_read_[k];schedule_[k] 1500\napp;futex_wait_[k] 700\napp;main;nanosleep 20000\n")
	for palette, want := range map[string]func(r, g, b int) bool{
		"io":     func(r, g, b int) bool { return r == g && b >= 190 && r <= 140 },
		"wakeup": func(r, g, b int) bool { return g == b && g >= 165 && r <= 110 },
	} {
		if !ValidPalette(palette) {
			t.Fatalf("%s is not a palette", palette)
		}
		var buf bytes.Buffer
		if err := WriteSVG(&buf, Build(p, false, false), Options{Palette: palette, CountName: "us"}); err != nil {
			t.Fatal(err)
		}
		svg := buf.String()
		fills := regexp.MustCompile(`<rect [^>]*fill="rgb\((\d+),(\d+),(\d+)\)"`).FindAllStringSubmatch(svg, -1)
		if len(fills) < 6 {
			t.Fatalf("%s: %d frames drawn", palette, len(fills))
		}
		for _, f := range fills {
			var r, g, b int
			fmt.Sscan(f[1]+" "+f[2]+" "+f[3], &r, &g, &b)
			if !want(r, g, b) {
				t.Errorf("%s: frame colour rgb(%d,%d,%d) is not of the palette", palette, r, g, b)
			}
		}
		if !strings.Contains(svg, `stop-color="#e0e0ff"`) {
			t.Errorf("%s: background should be FlameGraph's blue gradient", palette)
		}
		if !strings.Contains(svg, "nanosleep (20,000 us, 90.09%)") {
			t.Errorf("%s: tooltips should count in us", palette)
		}
	}
	var buf bytes.Buffer
	WriteHTML(&buf, Build(p, false, false), Options{Palette: "io", CountName: "us"})
	if !strings.Contains(buf.String(), "22,200 us") || !strings.Contains(buf.String(), `"countName":"us"`) {
		t.Error("HTML should give the total and tooltips in us")
	}
}
