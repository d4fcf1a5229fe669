package serve

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"html"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/perflab/perflab/internal/report"
)

//go:embed assets/app.js
var appJS string

//go:embed assets/app.css
var appCSS string

// pageCSP is the header every page is served with: report.CSP (nothing may
// be fetched; inline style and script only; images from data: URLs) plus
// navigation limits: forms submit only here, no framing, no <base>.
const pageCSP = report.CSP + "; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// maxPageBytes bounds one response; a view that would exceed it answers
// 400 with a narrower selection to ask for.
const maxPageBytes = 16 << 20

// result is what a view computed.
type result struct {
	View  string // hosts, history, compare, …
	Title string
	Data  any // the JSON document of the view
	// JSON and HTML, when set, render the export instead of Data and the
	// generic page (the comparison uses the report package's renderers).
	JSON func(w io.Writer) error
	HTML func(w io.Writer) error
	// Nav is the selection form shown above a page written by HTML, Tail
	// what follows its content (the flame diff's top-changes table).
	Nav, Tail string
}

// viewFunc computes a view from its query; it reads the query through
// newParams with the keys it accepts.
type viewFunc func(ctx context.Context, q url.Values) (*result, error)

// view runs fn and writes its result as the page, JSON or the HTML export.
func (s *Server) view(fn viewFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		q, _ := parseQuery(r.URL.RawQuery) // checked by limited
		res, format, err := s.compute(r.Context(), fn, q)
		if err != nil {
			s.fail(w, r, err)
			return
		}
		var buf bytes.Buffer
		switch format {
		case "json":
			w.Header().Set("Content-Type", "application/json")
			if res.JSON != nil {
				err = res.JSON(&buf)
			} else {
				err = writeJSON(&buf, res.Data)
			}
		case "html":
			w.Header().Set("Content-Disposition", `attachment; filename="perflab-`+res.View+`.html"`)
			err = s.page(&buf, res, false, r.URL)
		default:
			err = s.page(&buf, res, true, r.URL)
		}
		if err != nil {
			s.fail(w, r, err)
			return
		}
		if buf.Len() > maxPageBytes {
			s.fail(w, r, badf("the result is larger than %d MiB: select fewer runs, hosts or a shorter time range", maxPageBytes>>20))
			return
		}
		if format != "json" {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
		}
		secure(w)
		w.Write(buf.Bytes())
	}
}

func (s *Server) compute(ctx context.Context, fn viewFunc, q url.Values) (*result, string, error) {
	p := &params{q: q}
	format := p.format()
	if p.err != nil {
		return nil, "", p.err
	}
	res, err := fn(ctx, q)
	return res, format, err
}

// secure sets the headers of every page and document.
func secure(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Security-Policy", pageCSP)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
}

// fail answers an error: 400 for a bad selection, 404 for one naming
// nothing stored, 500 (logged, not shown) for the rest.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, err error) {
	var bad *badRequest
	var nf *notFound
	switch {
	case errors.As(err, &bad):
		http.Error(w, "400 "+bad.msg, http.StatusBadRequest)
	case errors.As(err, &nf):
		http.Error(w, "404 "+nf.msg, http.StatusNotFound)
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		http.Error(w, "503 the request took too long", http.StatusServiceUnavailable)
	default:
		s.log.Printf("error serving %s: %v", r.URL.Path, err)
		http.Error(w, "500 internal error (logged)", http.StatusInternalServerError)
	}
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// nav is the console's navigation bar; the current view is marked.
func nav(view string) string {
	var b strings.Builder
	b.WriteString(`<nav class="pl-nav"><b>perflab</b>`)
	for _, v := range [][2]string{{"hosts", "/"}, {"history", "/history"}, {"compare", "/compare"}, {"runs", "/runs"}, {"audit", "/audit"}, {"snapshots", "/snapshots"}, {"flame", "/flame"}} {
		cls := ""
		if v[0] == view {
			cls = ` class="on"`
		}
		b.WriteString(`<a href="` + v[1] + `"` + cls + `>` + v[0] + `</a>`)
	}
	b.WriteString(`</nav>`)
	return b.String()
}

// exportLinks are the view's URL with format=json and format=html.
func exportLinks(u *url.URL) string {
	link := func(f string) string {
		q := u.Query()
		q.Set("format", f)
		return html.EscapeString(u.Path + "?" + q.Encode())
	}
	return `<p class="pl-export">Permalink: this page's URL · export <a id="export-json" href="` + link("json") + `">JSON</a> · <a id="export-html" href="` + link("html") + `">self-contained HTML</a></p>`
}

// navCSS styles the navigation inserted into pages written by other
// packages' renderers.
const navCSS = `<style>.pl-nav{display:flex;gap:1em;align-items:baseline;padding:6px 10px;background:#223;color:#fff;font:14px sans-serif}.pl-nav a{color:#cde}.pl-nav a.on{color:#fff;font-weight:bold}.pl-sel,.pl-export{font:13px sans-serif;margin:6px 10px}.pl-sel input,.pl-sel select{margin-right:6px}</style>`

// page writes the view as one self-contained HTML document. With chrome,
// the navigation, selection form and export links are added (the served
// page); without, it is the export file.
func (s *Server) page(w io.Writer, res *result, chrome bool, u *url.URL) error {
	if res.HTML != nil {
		var b bytes.Buffer
		if err := res.HTML(&b); err != nil {
			return err
		}
		doc := b.String()
		if chrome {
			doc = strings.Replace(doc, "</head>", navCSS+"</head>", 1)
			doc = strings.Replace(doc, "<body>", "<body>\n"+nav(res.View)+res.Nav+exportLinks(u), 1)
			if i := strings.LastIndex(doc, "</body>"); i >= 0 && res.Tail != "" {
				doc = doc[:i] + res.Tail + doc[i:]
			}
		}
		_, err := io.WriteString(w, doc)
		return err
	}
	body := "<main id=\"app\"><h1>" + html.EscapeString(res.Title) + "</h1></main>\n"
	page := report.Page{Title: res.Title, CSS: appCSS, Body: body, Script: appJS,
		Data: map[string]any{"view": res.View, "data": res.Data}}
	if chrome {
		page.Body = nav(res.View) + res.Nav + exportLinks(u) + body
	}
	return report.WritePage(w, page)
}
