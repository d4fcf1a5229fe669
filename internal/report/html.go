package report

import (
	_ "embed"
	"encoding/json"
	"html"
	"io"
	"strings"

	"github.com/perflab/perflab/internal/compare"
)

// CSP is the page's Content-Security-Policy: nothing may be fetched; only
// the inline style and script run, and images only from data: URLs.
const CSP = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:"

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
	// json.Marshal escapes <, > and & as \u003c…, so the data cannot close
	// the script element it is embedded in.
	data, err := json.Marshal(d)
	if err != nil {
		return err
	}
	var b strings.Builder
	b.WriteString("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n")
	b.WriteString("<meta http-equiv=\"Content-Security-Policy\" content=\"" + html.EscapeString(CSP) + "\">\n")
	b.WriteString("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n")
	b.WriteString("<title>" + html.EscapeString(title) + "</title>\n<style>\n" + pageCSS + "</style>\n</head>\n<body>\n")
	b.WriteString("<noscript>This report draws its tables and charts with JavaScript; the same data is in perflab compare --format json.</noscript>\n")
	b.WriteString("<main id=\"app\"></main>\n")
	b.WriteString("<script type=\"application/json\" id=\"perflab-data\">")
	b.Write(data)
	b.WriteString("</script>\n<script>\n" + pageJS + "</script>\n</body>\n</html>\n")
	_, err = io.WriteString(w, b.String())
	return err
}
