package report

import (
	_ "embed"
	"fmt"
	"html"
	"io"
	"strings"

	"github.com/perflab/perflab/internal/audit"
	"github.com/perflab/perflab/internal/compare"
)

//go:embed html/check.css
var checkCSS string

// CheckHTML writes a check as one self-contained page: a summary, the
// audit's findings as a table (each with the measured probes it can
// move), then the measurements drawn by the same script as the compare
// report, with the likely causes when a previous check was compared. The
// findings are plain HTML, readable without JavaScript; only the charts
// need the page's script. Nothing outside the file is referenced, and the
// Content-Security-Policy of the compare report forbids every fetch.
func CheckHTML(w io.Writer, d *CheckDoc) error {
	var b strings.Builder
	title := "perflab check: " + orUnknown(d.Host)
	b.WriteString("<header id=\"check\">\n")
	fmt.Fprintf(&b, "<h1>%s</h1>\n", esc(title))
	r := d.Audit
	trusted := ""
	if r.Workload.Trusted {
		trusted = " (trusted, single tenant)"
	}
	fmt.Fprintf(&b, "<p class=\"sub\">workload <b>%s</b>%s · snapshot %s taken %s · perflab %s · label %s%s</p>\n",
		esc(r.Workload.Name), trusted, esc(r.SnapshotID), esc(d.TakenAt.UTC().Format("2006-01-02 15:04:05 UTC")),
		esc(d.Perflab), esc(d.Label), suiteNote(d.Suite))
	writeCheckTiles(&b, d)
	writeFindingsHTML(&b, d)
	if len(d.Notes) > 0 {
		b.WriteString("<ul class=\"notes\" id=\"check-notes\">\n")
		for _, n := range d.Notes {
			fmt.Fprintf(&b, "<li>%s</li>\n", esc(n))
		}
		b.WriteString("</ul>\n")
	}
	b.WriteString("</header>\n")

	page := Page{Title: title, CSS: pageCSS + checkCSS}
	if d.Comparison == nil {
		b.WriteString("<main><h2>Measurements</h2><p class=\"sub\">Nothing was measured (audit only: run 'perflab check' without --no-bench).</p></main>\n")
		page.Body = b.String()
		return WritePage(w, page)
	}
	b.WriteString("<noscript>The measurement tables and charts are drawn with JavaScript; the same data is in perflab check --format json.</noscript>\n")
	b.WriteString("<main id=\"app\"></main>\n")
	page.Body, page.Data, page.Script = b.String(), checkPageData(d), pageJS
	return WritePage(w, page)
}

// checkPageData is the compare page's data with a title for the
// measurements part.
func checkPageData(d *CheckDoc) htmlData {
	c := d.Comparison
	rs := byProbe(rows(c))
	title := "Measurements"
	if d.Suite != "" {
		title += ": " + d.Suite + " suite"
	}
	if len(c.Sides) == 2 && d.Previous != nil {
		title += ", now vs the previous check of " + d.Previous.At.UTC().Format("2006-01-02 15:04 UTC")
	}
	hd := htmlData{Title: title, Report: jsonView(c), Rows: rs}
	for _, p := range c.Pairs {
		var cs []htmlCause
		for _, cause := range p.Causes {
			head, detail := causeLines(c, cause, rs, p.Other)
			cs = append(cs, htmlCause{Head: head, Detail: detail, Supported: cause.Supported()})
		}
		hd.Causes = append(hd.Causes, cs)
	}
	return hd
}

func suiteNote(s string) string {
	if s == "" {
		return ""
	}
	return " · suite " + esc(s)
}

func esc(s string) string { return html.EscapeString(s) }

// writeCheckTiles is the one-glance summary: what fails, what was
// measured, and what changed since the previous check.
func writeCheckTiles(b *strings.Builder, d *CheckDoc) {
	r := d.Audit
	b.WriteString("<div class=\"tiles\" id=\"check-summary\">\n")
	if r.Summary.Fail == 0 {
		fmt.Fprintf(b, "<div class=\"tile ok\"><b>0</b> failing findings<small>%d rules passed</small></div>\n", r.Summary.Pass)
	} else {
		fmt.Fprintf(b, "<div class=\"tile sev-%s\"><b>%d</b> failing findings<small>%s</small></div>\n",
			esc(r.Summary.Worst), r.Summary.Fail, esc(auditCounts(r.Summary)))
	}
	c := d.Comparison
	switch {
	case c == nil:
		b.WriteString("<div class=\"tile\"><b>–</b> measurements<small>audit only</small></div>\n")
	default:
		probes := map[string]bool{}
		for _, m := range c.Metrics {
			probes[m.Probe] = true
		}
		fmt.Fprintf(b, "<div class=\"tile\"><b>%d</b> metrics measured<small>%d probes, medians with %.0f%% intervals</small></div>\n",
			len(c.Metrics), len(probes), c.Confidence*100)
	}
	if c != nil && len(c.Pairs) == 1 && d.Previous != nil {
		p := c.Pairs[0]
		worse, better, _ := p.Beyond()
		cls := "same"
		switch {
		case worse > 0:
			cls = "worse"
		case better > 0:
			cls = "better"
		}
		// Drift is not a regression: only changes beyond the host's own
		// drift are counted, and the headline says the rest.
		fmt.Fprintf(b, "<div class=\"tile %s\" id=\"vs-previous\"><b>%d worse · %d better</b> than the previous check, beyond drift<small>%s: %s</small></div>\n",
			cls, worse, better, esc(d.Previous.At.UTC().Format("2006-01-02 15:04 UTC")), esc(compare.Headline(c, p)))
	} else if c != nil {
		b.WriteString("<div class=\"tile\" id=\"vs-previous\"><b>first check</b><small>the next check of this host will be compared with this one</small></div>\n")
	}
	b.WriteString("</div>\n")
}

// writeFindingsHTML is the findings table: failing rules (most severe
// first) with observed and expected values, why, the fix and revert, and
// the probes of this check whose numbers the finding can move; rules that
// could not decide follow; passing and not-applicable rules are folded.
func writeFindingsHTML(b *strings.Builder, d *CheckDoc) {
	r := d.Audit
	fails := failing(r)
	fmt.Fprintf(b, "<h2>Findings: %d failing</h2>\n", len(fails))
	if len(fails) == 0 {
		b.WriteString("<p class=\"sub\" id=\"no-findings\">No rule of the catalogue fails for this workload.</p>\n")
	} else {
		b.WriteString("<table id=\"findings\">\n<thead><tr><th>severity</th><th>rule</th><th>finding: observed → expected, and why</th><th>fix</th><th>measured here</th></tr></thead>\n<tbody>\n")
		for _, f := range fails {
			fmt.Fprintf(b, "<tr class=\"sev-%s\" data-rule=\"%s\">", esc(f.Severity.String()), esc(f.Rule))
			fmt.Fprintf(b, "<td class=\"sev\">%s</td>", esc(f.Severity.String()))
			fmt.Fprintf(b, "<td class=\"rule\"><code>%s</code></td>", esc(f.Rule))
			fmt.Fprintf(b, "<td>%s<div class=\"obs\">%s → <b>%s</b></div>", esc(f.Title), esc(f.Observed), esc(f.Expected))
			if f.Reason != "" {
				fmt.Fprintf(b, "<div class=\"detail\">note: %s</div>", esc(f.Reason))
			}
			fmt.Fprintf(b, "<div class=\"detail\">%s</div>", esc(f.Why))
			if f.Source != "" {
				fmt.Fprintf(b, "<div class=\"detail\">source: %s</div>", esc(f.Source))
			}
			if f.Knob != "" {
				fmt.Fprintf(b, "<div class=\"detail\">knob: <code>%s</code></div>", esc(f.Knob))
			}
			b.WriteString("</td><td class=\"fix\">")
			if f.Fix != "" {
				fmt.Fprintf(b, "<pre class=\"fix\">%s</pre>", esc(f.Fix))
			}
			if f.Revert != "" {
				fmt.Fprintf(b, "<div class=\"detail\">revert:</div><pre class=\"revert\">%s</pre>", esc(f.Revert))
			}
			b.WriteString("</td><td>")
			if ps := relatedProbes(f, d.Comparison); len(ps) > 0 {
				fmt.Fprintf(b, "<span class=\"related\">%s</span>", esc(strings.Join(ps, ", ")))
			} else {
				b.WriteString("<span class=\"detail\">–</span>")
			}
			b.WriteString("</td></tr>\n")
		}
		b.WriteString("</tbody>\n</table>\n")
	}
	var errs, quiet []audit.Finding
	for _, f := range r.Findings {
		switch f.Status {
		case audit.Error:
			errs = append(errs, f)
		case audit.Pass, audit.NA:
			quiet = append(quiet, f)
		}
	}
	if len(errs) > 0 {
		fmt.Fprintf(b, "<h3>Could not decide: %d</h3>\n<ul class=\"notes\" id=\"audit-errors\">\n", len(errs))
		for _, f := range errs {
			fmt.Fprintf(b, "<li><code>%s</code> %s: %s</li>\n", esc(f.Rule), esc(f.Title), esc(f.Reason))
		}
		b.WriteString("</ul>\n")
	}
	if len(quiet) > 0 {
		fmt.Fprintf(b, "<details id=\"passing\"><summary>%d passed, %d not applicable</summary>\n<table>\n<thead><tr><th>status</th><th>rule</th><th>title</th><th>observed / reason</th></tr></thead>\n<tbody>\n",
			r.Summary.Pass, r.Summary.NA)
		for _, f := range quiet {
			obs := f.Observed
			if f.Status == audit.NA {
				obs = f.Reason
			}
			fmt.Fprintf(b, "<tr data-rule=\"%s\"><td>%s</td><td><code>%s</code></td><td>%s</td><td>%s</td></tr>\n",
				esc(f.Rule), esc(string(f.Status)), esc(f.Rule), esc(f.Title), esc(obs))
		}
		b.WriteString("</tbody>\n</table>\n</details>\n")
	}
}
