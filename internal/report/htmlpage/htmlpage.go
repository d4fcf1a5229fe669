// Package htmlpage is the one HTML page shell of perflab's reports: every
// whole HTML document (compare, check, bisect, fleet, the console's pages,
// flame graphs) is written by WritePage, so there is one
// Content-Security-Policy, one error trap and one way to embed data. It is
// part of internal/report, split out as a leaf so the flame renderer, which
// report does not import, can write its page through it too.
package htmlpage

import (
	"bufio"
	"encoding/json"
	"html"
	"io"
	"strings"
)

// CSP is the Content-Security-Policy of every page perflab writes: nothing
// may be fetched; only the inline style and script run, and images only
// from data: URLs.
const CSP = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:"

// ErrorTrap is the first script of every page: it records script errors,
// console errors and CSP violations on <html data-errors> and marks the
// page rendered once loaded, so a headless browser test reads from the DOM
// whether a page works. The page scripts set data-rendered themselves when
// they are done drawing; the load handler covers pages without a script.
const ErrorTrap = `<script>(function(){var r=document.documentElement,e=[];r.setAttribute('data-errors','');` +
	`function rec(m){e.push(String(m));r.setAttribute('data-errors',e.join(' | '));}` +
	`window.addEventListener('error',function(x){rec(x.message||'script error');});` +
	`document.addEventListener('securitypolicyviolation',function(x){rec('blocked by CSP: '+x.violatedDirective+' '+x.blockedURI);});` +
	`var ce=console.error;console.error=function(){rec(Array.prototype.join.call(arguments,' '));ce.apply(console,arguments);};` +
	`window.addEventListener('load',function(){r.setAttribute('data-rendered','1');});})();</script>`

// Page is one self-contained HTML document: the only shell every HTML
// output of perflab (compare, check, bisect, fleet, the console, flame
// graphs) is written through, so there is one CSP, one error trap and one
// way to embed data.
type Page struct {
	Title string
	CSS   string // inline style sheet
	// Head is extra trusted markup for <head> (the console's navigation
	// style).
	Head string
	// Body is trusted, already escaped markup written first in <body>.
	Body string
	// Data is embedded as JSON in <script type="application/json"
	// id=DataID>; json.Marshal escapes <, > and &, so it cannot close the
	// element. WriteData, if set, streams the JSON instead (flame graphs
	// too big to build as one value); it must escape the same way.
	Data      any
	WriteData func(io.Writer) error
	DataID    string // default "perflab-data"
	// NoScript is the text shown when scripts are off.
	NoScript string
	// Script is the page's inline script, run after the body.
	Script string
}

// WritePage writes p as one self-contained document.
func WritePage(w io.Writer, p Page) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	bw.WriteString("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n")
	bw.WriteString("<meta http-equiv=\"Content-Security-Policy\" content=\"" + html.EscapeString(CSP) + "\">\n")
	bw.WriteString("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n")
	bw.WriteString("<title>" + html.EscapeString(p.Title) + "</title>\n")
	bw.WriteString(ErrorTrap + "\n")
	if p.CSS != "" {
		bw.WriteString("<style>\n" + p.CSS)
		if !strings.HasSuffix(p.CSS, "\n") {
			bw.WriteString("\n")
		}
		bw.WriteString("</style>\n")
	}
	bw.WriteString(p.Head + "</head>\n<body>\n")
	if p.NoScript != "" {
		bw.WriteString("<noscript>" + html.EscapeString(p.NoScript) + "</noscript>\n")
	}
	bw.WriteString(p.Body)
	if p.Data != nil || p.WriteData != nil {
		id := p.DataID
		if id == "" {
			id = "perflab-data"
		}
		bw.WriteString("<script type=\"application/json\" id=\"" + html.EscapeString(id) + "\">")
		if p.WriteData != nil {
			if err := p.WriteData(bw); err != nil {
				return err
			}
		} else {
			data, err := json.Marshal(p.Data)
			if err != nil {
				return err
			}
			bw.Write(data)
		}
		bw.WriteString("</script>\n")
	}
	if p.Script != "" {
		// A script's text ends at the first "</script": keep it inside.
		bw.WriteString("<script>\n" + strings.ReplaceAll(p.Script, "</script", "<\\/script") + "</script>\n")
	}
	bw.WriteString("</body>\n</html>\n")
	return bw.Flush()
}
