package report

import (
	_ "embed"
	"io"
	"strings"

	"github.com/perflab/perflab/internal/compare"
)

//go:embed html/page.css
var pageCSS string

//go:embed html/page.js
var pageJS string

// htmlData is what the page's script renders: the JSON report plus the
// display strings the text renderers use, so all formats agree.
type htmlData struct {
	Title  string        `json:"title"`
	Report jsonDoc       `json:"report"`
	Rows   []row         `json:"rows"`
	Causes [][]htmlCause `json:"causes"` // per pair
}

type htmlCause struct {
	Head      string   `json:"head"`
	Detail    []string `json:"detail"`
	Supported bool     `json:"supported"`
}

// HTML writes a single self-contained page: inline CSS and JS, the data as
// embedded JSON, charts drawn as SVG by the script, and no reference to
// anything outside the file.
func HTML(w io.Writer, c *compare.Comparison) error {
	rs := rows(c)
	var names []string
	for _, s := range c.Sides {
		names = append(names, s.Name)
	}
	title := "perflab report: " + names[0]
	if len(names) > 1 {
		title = "perflab compare: " + strings.Join(names, " vs ")
	}
	d := htmlData{Title: title, Report: jsonView(c), Rows: rs}
	for _, p := range c.Pairs {
		var cs []htmlCause
		for _, cause := range p.Causes {
			head, detail := causeLines(c, cause, rs, p.Other)
			cs = append(cs, htmlCause{Head: head, Detail: detail, Supported: cause.Supported()})
		}
		d.Causes = append(d.Causes, cs)
	}
	return WritePage(w, Page{
		Title:    title,
		CSS:      pageCSS,
		NoScript: "This report draws its tables and charts with JavaScript; the same data is in perflab compare --format json.",
		Body:     "<main id=\"app\"></main>\n",
		Data:     d,
		Script:   pageJS,
	})
}
