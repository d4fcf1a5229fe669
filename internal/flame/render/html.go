package render

import (
	"bufio"
	_ "embed"
	"encoding/json"
	"io"
	"strconv"
	"strings"

	"github.com/perflab/perflab/internal/report/htmlpage"
)

//go:embed html.js
var htmlJS string

// WriteHTML writes a self-contained HTML flame graph drawn on a canvas:
// no network, no external script, and fast on profiles too big for SVG.
// The frames travel as one JSON document of parallel arrays (name index,
// depth, offset, value, self, delta) in preorder.
func WriteHTML(w io.Writer, t *Tree, opt Options) error {
	opt = opt.withDefaults(t)
	total := t.Root.Value
	// Frames below MinWidth at the full width are dropped, as in the SVG.
	minCount := 0.0
	if total > 0 {
		minCount = opt.MinWidth * float64(total) / float64(opt.Width-2*xPad)
	}
	frames := layout(t, minCount)

	index := map[string]int{}
	var names, colors, kinds []string
	nameIdx := make([]int, len(frames))
	for i, p := range frames {
		k, ok := index[p.n.Name]
		if !ok {
			k = len(names)
			index[p.n.Name] = k
			name, kind := SplitAnnotation(p.n.Name)
			names = append(names, strings.ToValidUTF8(name, "\uFFFD"))
			colors = append(colors, frameColor(opt.Palette, name, kind).String())
			kinds = append(kinds, [...]string{"", "kernel", "JIT", "inlined"}[kind])
		}
		nameIdx[i] = k
	}

	bgTop, bgBottom := background(opt.Palette)
	if t.Diff {
		bgTop, bgBottom = background("hot")
	}
	css := `body { margin: 10px; font: 12px Verdana, sans-serif; background: linear-gradient(` + bgTop + `, ` + bgBottom + `) fixed; }
h1 { font-size: 17px; font-weight: normal; text-align: center; margin: 4px 0; }
h2 { font-size: 12px; font-weight: normal; text-align: center; color: #555; margin: 2px 0 6px; }
#bar { display: flex; gap: 8px; align-items: center; margin-bottom: 6px; }
#bar form { margin-left: auto; display: flex; gap: 4px; }
#matched { min-width: 9em; text-align: right; }
#tip { position: absolute; display: none; background: #ffffe0; border: 1px solid #999; padding: 3px 6px; max-width: 400px; pointer-events: none; word-break: break-all; }
#selftest { display: none; }
canvas { display: block; cursor: pointer; }
`
	body := "<h1>" + htmlEscape(opt.Title) + "</h1>\n"
	if opt.Subtitle != "" {
		body += "<h2>" + htmlEscape(opt.Subtitle) + "</h2>\n"
	}
	body += `<div id="bar"><button id="reset" disabled>Reset zoom</button>
<span>` + groupDigits(total, t.Scale) + " " + htmlEscape(opt.CountName) + `</span>
<form id="searchform"><input id="term" placeholder="regex, Enter to search" size="28"><button>Search</button></form><span id="matched"></span></div>
<canvas id="flame"></canvas>
<div id="tip"></div>
<pre id="selftest"></pre>
`
	// encoding/json escapes <, > and & so the data cannot close the tag.
	head := map[string]any{
		"total": total, "diff": t.Diff, "maxDelta": t.MaxDelta, "inverted": opt.Inverted,
		"countName": opt.CountName, "scale": t.Scale, "names": names, "colors": colors, "kinds": kinds,
	}
	hb, err := json.Marshal(head)
	if err != nil {
		return err
	}
	data := func(dw io.Writer) error {
		bw := bufio.NewWriterSize(dw, 256<<10)
		bw.Write(hb[:len(hb)-1])
		var num []byte
		writeArr := func(key string, f func(p placed, i int) int64) {
			bw.WriteString(`,"` + key + `":[`)
			for i, p := range frames {
				if i > 0 {
					bw.WriteByte(',')
				}
				num = strconv.AppendInt(num[:0], f(p, i), 10)
				bw.Write(num)
			}
			bw.WriteByte(']')
		}
		writeArr("n", func(_ placed, i int) int64 { return int64(nameIdx[i]) })
		writeArr("d", func(p placed, _ int) int64 { return int64(p.depth) })
		writeArr("x", func(p placed, _ int) int64 { return int64(p.x) })
		writeArr("v", func(p placed, _ int) int64 { return int64(p.n.Value) })
		writeArr("s", func(p placed, _ int) int64 { return int64(p.n.Self) })
		writeArr("dl", func(p placed, _ int) int64 { return p.n.Delta })
		bw.WriteByte('}')
		return bw.Flush()
	}
	// The document itself is report's one page shell (CSP, error trap).
	return htmlpage.WritePage(w, htmlpage.Page{Title: opt.Title, CSS: css, Body: body, WriteData: data, DataID: "data", Script: htmlJS})
}

func htmlEscape(s string) string {
	return xmlText(s)
}
