package render

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/perflab/perflab/internal/flame/folded"
)

// Options control how a flame graph looks.
type Options struct {
	Title     string  // "" means "Flame Graph" (or "Differential Flame Graph")
	Subtitle  string  // a second line, e.g. the command profiled
	Width     int     // image width in pixels; <= 0 means 1200
	MinWidth  float64 // frames narrower than this many pixels are omitted; < 0 means 0.1
	Palette   string  // one of Palettes ("" means hot); io for off-CPU time
	Inverted  bool    // icicle: root at the top
	CountName string  // what a count is: "samples", or "us"/"ms" for off-CPU time; "" means samples
}

func (o Options) withDefaults(t *Tree) Options {
	if o.Width <= 0 {
		o.Width = 1200
	}
	if o.MinWidth < 0 {
		o.MinWidth = 0.1
	}
	if o.Palette == "" {
		o.Palette = "hot"
	}
	if o.CountName == "" {
		o.CountName = "samples"
	}
	if o.Title == "" {
		o.Title = "Flame Graph"
		if t.Diff {
			o.Title = "Differential Flame Graph"
		}
		if o.Inverted {
			o.Title = "Icicle Graph"
		}
	}
	return o
}

const (
	frameHeight = 16
	fontSize    = 12
	xPad        = 10
	topPad      = fontSize * 3
	bottomPad   = fontSize*2 + 10
)

// placed is a frame with its position in the call tree.
type placed struct {
	n     *Node
	depth int
	x     uint64 // offset from the left, in counts
}

// layout lists the frames wide enough to draw, parents before children.
func layout(t *Tree, minCount float64) []placed {
	out := make([]placed, 0, 1024)
	var walk func(n *Node, depth int, x uint64)
	walk = func(n *Node, depth int, x uint64) {
		if float64(n.Value) < minCount {
			return
		}
		out = append(out, placed{n, depth, x})
		for _, c := range n.Children {
			walk(c, depth+1, x)
			x += c.Value
		}
	}
	walk(t.Root, 0, 0)
	return out
}

// appendTooltip appends the text shown for a frame: name, count, share,
// self share, kind and (in a diff) the change of its own count.
func appendTooltip(b []byte, p placed, total uint64, t *Tree, countName string) []byte {
	name, kind := SplitAnnotation(p.n.Name)
	b = append(b, name...)
	b = append(b, " ("...)
	b = appendGrouped(b, p.n.Value, t.Scale)
	b = append(b, ' ')
	b = append(b, countName...)
	b = append(b, ", "...)
	b = strconv.AppendFloat(b, pct(p.n.Value, total), 'f', 2, 64)
	b = append(b, '%')
	if p.n.Self > 0 && len(p.n.Children) > 0 {
		b = append(b, "; self "...)
		b = strconv.AppendFloat(b, pct(p.n.Self, total), 'f', 2, 64)
		b = append(b, '%')
	}
	switch kind {
	case Kernel:
		b = append(b, "; kernel"...)
	case JIT:
		b = append(b, "; JIT"...)
	case Inlined:
		b = append(b, "; inlined"...)
	}
	if t.Diff {
		b = append(b, "; self "...)
		if p.n.Delta >= 0 {
			b = append(b, '+')
		}
		if p.n.Delta < 0 {
			b = append(b, '-')
		}
		b = folded.AppendCount(b, uint64(abs(p.n.Delta)), t.Scale)
		b = append(b, ' ')
		b = append(b, countName...)
		b = append(b, " vs before"...)
	}
	return append(b, ')')
}

func pct(v, total uint64) float64 {
	if total == 0 {
		return 0
	}
	return 100 * float64(v) / float64(total)
}

// groupDigits writes 1234567 as 1,234,567 (and 1234567 at scale 2 as
// 12,345.67).
func groupDigits(v uint64, scale int) string { return string(appendGrouped(nil, v, scale)) }

func appendGrouped(b []byte, v uint64, scale int) []byte {
	var tmp [28]byte
	d := folded.AppendCount(tmp[:0], v, scale)
	n := len(d)
	if i := strings.IndexByte(string(d), '.'); i >= 0 {
		n = i
	}
	for i, c := range d {
		if i > 0 && i < n && (n-i)%3 == 0 {
			b = append(b, ',')
		}
		b = append(b, c)
	}
	return b
}

// label fits a name into w pixels, as the JavaScript does on zoom.
func label(name string, w float64) string {
	chars := int(w / (fontSize * 0.59))
	if chars < 3 {
		return ""
	}
	if len(name) <= chars || utf8.RuneCountInString(name) <= chars {
		return name
	}
	r := []rune(name)
	return string(r[:chars-2]) + ".."
}

// xmlText makes s safe as XML character data or an attribute value:
// markup escaped, and control characters (invalid in XML 1.0) replaced.
func xmlText(s string) string {
	clean := true
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c == '&' || c == '<' || c == '>' || c == '"' || c == '\'' || c >= 0x80 {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for _, r := range strings.ToValidUTF8(s, "\uFFFD") {
		switch {
		case r == '&':
			b.WriteString("&amp;")
		case r == '<':
			b.WriteString("&lt;")
		case r == '>':
			b.WriteString("&gt;")
		case r == '"':
			b.WriteString("&quot;")
		case r == '\'':
			b.WriteString("&apos;")
		case r < 0x20 || r == 0xFFFE || r == 0xFFFF:
			b.WriteRune('\uFFFD')
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
