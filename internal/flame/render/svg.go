package render

import (
	"bufio"
	_ "embed"
	"io"
	"strconv"
	"strings"
)

//go:embed svg.js
var svgJS string

// WriteSVG writes an interactive SVG flame graph: a self-contained file
// (inline script and style) that any browser opens offline.
func WriteSVG(w io.Writer, t *Tree, opt Options) error {
	opt = opt.withDefaults(t)
	total := t.Root.Value
	width := float64(opt.Width)
	perCount := 0.0
	if total > 0 {
		perCount = (width - 2*xPad) / float64(total)
	}
	minCount := 0.0
	if perCount > 0 {
		minCount = opt.MinWidth / perCount
	}
	frames := layout(t, minCount)
	depth := 0
	for _, p := range frames {
		if p.depth > depth {
			depth = p.depth
		}
	}
	height := (depth+1)*frameHeight + topPad + bottomPad
	if opt.Subtitle != "" {
		height += fontSize * 2
	}
	top := topPad
	if opt.Subtitle != "" {
		top += fontSize * 2
	}

	bw := bufio.NewWriterSize(w, 256<<10)
	bgTop, bgBottom := background(opt.Palette)
	if t.Diff {
		bgTop, bgBottom = background("hot")
	}
	W := strconv.Itoa(opt.Width)
	H := strconv.Itoa(height)
	inv := "0"
	if opt.Inverted {
		inv = "1"
	}
	bw.WriteString(`<?xml version="1.0" standalone="no"?>
<!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN" "http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd">
<svg version="1.1" width="` + W + `" height="` + H + `" viewBox="0 0 ` + W + ` ` + H + `" xmlns="http://www.w3.org/2000/svg" data-inverted="` + inv + `" data-total="` + strconv.FormatUint(total, 10) + `">
<!-- perflab flame graph: click a frame to zoom, Search (Ctrl-F) to highlight -->
<defs><linearGradient id="bg" y1="0" y2="1" x1="0" x2="0"><stop stop-color="` + bgTop + `" offset="5%"/><stop stop-color="` + bgBottom + `" offset="95%"/></linearGradient></defs>
<style type="text/css">
text { font-family: Verdana, sans-serif; font-size: 12px; fill: rgb(0,0,0); }
#title { text-anchor: middle; font-size: 17px; }
#subtitle { text-anchor: middle; fill: rgb(90,90,90); }
#search, #unzoom { cursor: pointer; }
#search:hover, #unzoom:hover { fill: rgb(0,0,200); }
#matched { text-anchor: end; }
#frames > g { cursor: pointer; }
#frames > g:hover > rect { stroke: black; stroke-width: 0.5; }
#frames text { pointer-events: none; }
#selftest { display: none; }
</style>
<script type="text/ecmascript"><![CDATA[
`)
	bw.WriteString(strings.ReplaceAll(svgJS, "]]>", "]] >"))
	bw.WriteString(`]]></script>
<rect x="0" y="0" width="100%" height="100%" fill="url(#bg)"/>
<text id="title" x="` + ftoa(width/2) + `" y="24">` + xmlText(opt.Title) + `</text>
`)
	if opt.Subtitle != "" {
		bw.WriteString(`<text id="subtitle" x="` + ftoa(width/2) + `" y="48">` + xmlText(opt.Subtitle) + "</text>\n")
	}
	bw.WriteString(`<text id="details" x="10" y="` + strconv.Itoa(height-17) + `"> </text>
<text id="unzoom" x="10" y="24" style="opacity:0">Reset Zoom</text>
<text id="search" x="` + ftoa(width-xPad-100) + `" y="24">Search</text>
<text id="matched" x="` + ftoa(width-xPad) + `" y="` + strconv.Itoa(height-17) + `"> </text>
<text id="selftest" x="0" y="0"></text>
<g id="frames">
`)
	var num, tip []byte
	for _, p := range frames {
		x := xPad + float64(p.x)*perCount
		fw := float64(p.n.Value) * perCount
		var y int
		if opt.Inverted {
			y = top + p.depth*frameHeight
		} else {
			y = height - bottomPad - (p.depth+1)*frameHeight
		}
		name, kind := SplitAnnotation(p.n.Name)
		var c rgb
		if t.Diff {
			c = diffColor(p.n.Delta, t.MaxDelta)
		} else {
			c = frameColor(opt.Palette, name, kind)
		}
		bw.WriteString("<g><title>")
		tip = appendTooltip(tip[:0], p, total, t, opt.CountName)
		if needsEscape(tip) {
			bw.WriteString(xmlText(string(tip)))
		} else {
			bw.Write(tip)
		}
		bw.WriteString(`</title><rect x="`)
		num = strconv.AppendFloat(num[:0], x, 'f', 2, 64)
		bw.Write(num)
		bw.WriteString(`" y="`)
		num = strconv.AppendInt(num[:0], int64(y), 10)
		bw.Write(num)
		bw.WriteString(`" width="`)
		num = strconv.AppendFloat(num[:0], fw, 'f', 2, 64)
		bw.Write(num)
		bw.WriteString(`" height="15" rx="2" ry="2" fill="`)
		bw.WriteString(c.String())
		bw.WriteString(`"/><text x="`)
		num = strconv.AppendFloat(num[:0], x+3, 'f', 2, 64)
		bw.Write(num)
		bw.WriteString(`" y="`)
		num = strconv.AppendInt(num[:0], int64(y+11), 10)
		bw.Write(num)
		bw.WriteString(`">`)
		bw.WriteString(xmlText(label(name, fw)))
		bw.WriteString("</text></g>\n")
	}
	bw.WriteString("</g>\n</svg>\n")
	return bw.Flush()
}

func ftoa(f float64) string { return strconv.FormatFloat(f, 'f', 2, 64) }

// needsEscape reports bytes that xmlText would change.
func needsEscape(b []byte) bool {
	for _, c := range b {
		if c < 0x20 || c == '&' || c == '<' || c == '>' || c == '"' || c == '\'' || c >= 0x80 {
			return true
		}
	}
	return false
}
