package fleet

import (
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"strconv"
	"strings"
)

// WriteJSON writes the report as one JSON document.
func WriteJSON(w io.Writer, r *Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

func num(v float64) string { return strconv.FormatFloat(v, 'g', 4, 64) }

func pct(ratio float64) string {
	p := (ratio - 1) * 100
	s := strconv.FormatFloat(p, 'f', 0, 64)
	if s == "-0" {
		s = "0"
	}
	if p >= 0.5 {
		return "+" + s + "%"
	}
	return strings.Replace(s, "-", "−", 1) + "%"
}

// EffectText is "−19% ± 3% (95% CI −22% … −16%, 3 vs 5 hosts)".
func (e *Effect) Text() string {
	if e == nil {
		return "effect not estimated (too few hosts or a non-positive value)"
	}
	half := (e.Hi - e.Lo) / 2 * 100
	return fmt.Sprintf("%s ± %s%% (95%% CI %s … %s, %d vs %d hosts)", pct(e.Ratio), strconv.FormatFloat(half, 'f', 0, 64), pct(e.Lo), pct(e.Hi), e.N1, e.N2)
}

func (m *Metric) title() string {
	t := m.Probe + " " + m.Metric
	if m.Params != "" {
		t += " [" + m.Params + "]"
	}
	return t
}

func (m *Metric) unitText() string {
	u := m.Unit
	if m.Better != "" {
		u += ", " + string(m.Better) + " is better"
	}
	return u
}

func (m *Metric) value(host string) HostValue {
	for _, h := range m.Hosts {
		if h.Host == host {
			return h
		}
	}
	return HostValue{}
}

func (g *OutlierGroup) label() string {
	w := "better"
	if g.Worse {
		w = "worse"
	}
	return g.Direction + " (" + w + ")"
}

func (s *Separation) text() string {
	t := fmt.Sprintf("%s = %s (others: %s)", s.Fact, s.Value, strings.Join(s.Others, ", "))
	if len(s.Also) > 0 {
		t += "; same hosts by " + strings.Join(s.Also, ", ")
	}
	if len(s.Inliers) > 0 {
		t += fmt.Sprintf("; also on non-outliers %s", strings.Join(s.Inliers, ", "))
	}
	return t + ": " + s.Effect.Text()
}

func valuesText(vs []Value) string {
	var b []string
	for _, v := range vs {
		b = append(b, fmt.Sprintf("%s (%d: %s)", v.Value, len(v.Hosts), strings.Join(v.Hosts, ", ")))
	}
	return strings.Join(b, " · ")
}

func (r *Report) outlierMetrics() (with []*Metric, without int) {
	for i := range r.Metrics {
		if len(r.Metrics[i].Outliers) > 0 {
			with = append(with, &r.Metrics[i])
		} else {
			without++
		}
	}
	return with, without
}

func (r *Report) runs() int {
	n := 0
	for _, h := range r.Hosts {
		n += h.Runs
	}
	return n
}

// WriteText writes the report for a terminal.
func WriteText(w io.Writer, r *Report) error {
	p := func(format string, a ...any) { fmt.Fprintf(w, format, a...) }
	p("Fleet: %d hosts, %d runs\n", len(r.Hosts), r.runs())
	p("Rule: %s\n\n", r.Rule)
	p("Hosts\n")
	p("  %-16s %5s  %-44s %-10s %-24s %s\n", "HOST", "RUNS", "CPU MODEL", "MICROCODE", "KERNEL", "VIRT")
	for _, h := range r.Hosts {
		if h.SnapshotID == "" {
			p("  %-16s %5d  (no snapshot stored)\n", h.Name, h.Runs)
			continue
		}
		p("  %-16s %5d  %-44s %-10s %-24s %s\n", h.Name, h.Runs, h.CPUModel, h.Microcode, h.Kernel, h.Virtualization)
	}
	p("\nGroups\n")
	for _, g := range r.Groups {
		p("  %s: %s\n", g.Fact, valuesText(g.Values))
	}
	p("\nFacts that differ between hosts (%d)\n", len(r.Settings))
	for _, s := range r.Settings {
		p("  %s [%s]: %s\n", s.Fact, s.Kind, valuesText(s.Values))
	}
	with, without := r.outlierMetrics()
	p("\nOutliers (%d of %d metrics)\n", len(with), len(r.Metrics))
	for _, m := range with {
		p("  %s (%s): fleet median %s %s, robust sd %s\n", m.title(), m.unitText(), num(m.Median), m.Unit, num(m.Spread))
		for _, g := range m.Outliers {
			var hs []string
			for _, h := range g.Hosts {
				v := m.value(h)
				hs = append(hs, fmt.Sprintf("%s %s %s (%d runs)", h, num(v.Value), m.Unit, v.Runs))
			}
			p("    %s: %s\n", g.label(), strings.Join(hs, "; "))
			if len(g.Facts) == 0 {
				p("      no fact shared by these hosts separates them from the rest\n")
			}
			for _, s := range g.Facts {
				p("      separated by %s\n", s.text())
			}
		}
	}
	if without > 0 {
		p("\nWithout outliers (%d)\n", without)
		for i := range r.Metrics {
			m := &r.Metrics[i]
			if len(m.Outliers) > 0 {
				continue
			}
			note := ""
			if m.TooFew {
				note = fmt.Sprintf(" (fewer than %d hosts: no outlier can be called)", MinHosts)
			}
			p("  %s: median %s %s over %d hosts%s\n", m.title(), num(m.Median), m.Unit, len(m.Hosts), note)
		}
	}
	if r.Audit != nil {
		p("\nAudit (%s workload, %d hosts with a snapshot)\n", r.Audit.Workload, r.Audit.Hosts)
		if len(r.Audit.Findings) == 0 {
			p("  no rule fails on any host\n")
		}
		for _, f := range r.Audit.Findings {
			p("  %-8s %-28s %d/%d hosts  %s: %s\n", f.Severity, f.Rule, len(f.Hosts), f.Of, f.Title, strings.Join(f.Hosts, ", "))
		}
	}
	return nil
}

func mdEsc(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

// WriteMarkdown writes the report as Markdown.
func WriteMarkdown(w io.Writer, r *Report) error {
	p := func(format string, a ...any) { fmt.Fprintf(w, format, a...) }
	p("# Fleet report\n\n%d hosts, %d runs. Rule: %s.\n\n", len(r.Hosts), r.runs(), r.Rule)
	p("## Hosts\n\n| host | runs | CPU model | microcode | kernel | virtualisation |\n|---|---:|---|---|---|---|\n")
	for _, h := range r.Hosts {
		p("| %s | %d | %s | %s | %s | %s |\n", mdEsc(h.Name), h.Runs, mdEsc(h.CPUModel), h.Microcode, mdEsc(h.Kernel), h.Virtualization)
	}
	p("\n## Groups\n\n| fact | values (hosts) |\n|---|---|\n")
	for _, g := range r.Groups {
		p("| %s | %s |\n", g.Fact, mdEsc(valuesText(g.Values)))
	}
	p("\n## Facts that differ between hosts\n\n| fact | kind | values (hosts) |\n|---|---|---|\n")
	for _, s := range r.Settings {
		p("| %s | %s | %s |\n", mdEsc(s.Fact), s.Kind, mdEsc(valuesText(s.Values)))
	}
	with, without := r.outlierMetrics()
	p("\n## Outliers\n\n")
	if len(with) == 0 {
		p("No outliers in %d metrics.\n", len(r.Metrics))
	}
	for _, m := range with {
		p("### %s\n\n%s; fleet median %s %s, robust sd %s.\n\n", mdEsc(m.title()), m.unitText(), num(m.Median), m.Unit, num(m.Spread))
		for _, g := range m.Outliers {
			p("- **%s**: %s\n", g.label(), strings.Join(g.Hosts, ", "))
			if len(g.Facts) == 0 {
				p("  - no fact shared by these hosts separates them\n")
			}
			for _, s := range g.Facts {
				p("  - separated by %s\n", mdEsc(s.text()))
			}
		}
		p("\n")
	}
	if without > 0 && len(with) > 0 {
		p("%d metrics without outliers.\n", without)
	}
	if r.Audit != nil {
		p("\n## Audit (%s)\n\n| severity | rule | hosts failing | of | title |\n|---|---|---|---:|---|\n", r.Audit.Workload)
		for _, f := range r.Audit.Findings {
			p("| %s | %s | %s | %d | %s |\n", f.Severity, f.Rule, strings.Join(f.Hosts, ", "), f.Of, mdEsc(f.Title))
		}
	}
	return nil
}

var htmlTmpl = template.Must(template.New("fleet").Funcs(template.FuncMap{
	"values": valuesText, "num": num, "join": strings.Join,
	"title": func(m *Metric) string { return m.title() },
	"unit":  func(m *Metric) string { return m.unitText() },
	"label": func(g OutlierGroup) string { return g.label() },
	"sep":   func(s Separation) string { return s.text() },
}).Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>perflab fleet report</title>
<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.2em .5em;text-align:left}.worse{color:#b00}</style>
</head><body>
<h1>Fleet report</h1>
<p>{{len .R.Hosts}} hosts. Rule: {{.R.Rule}}.</p>
<h2>Hosts</h2>
<table><tr><th>host</th><th>runs</th><th>CPU model</th><th>microcode</th><th>kernel</th><th>virtualisation</th></tr>
{{range .R.Hosts}}<tr><td>{{.Name}}</td><td>{{.Runs}}</td><td>{{.CPUModel}}</td><td>{{.Microcode}}</td><td>{{.Kernel}}</td><td>{{.Virtualization}}</td></tr>
{{end}}</table>
<h2>Groups</h2>
<table><tr><th>fact</th><th>values (hosts)</th></tr>
{{range .R.Groups}}<tr><td>{{.Fact}}</td><td>{{values .Values}}</td></tr>
{{end}}</table>
<h2>Facts that differ between hosts</h2>
<table><tr><th>fact</th><th>kind</th><th>values (hosts)</th></tr>
{{range .R.Settings}}<tr><td>{{.Fact}}</td><td>{{.Kind}}</td><td>{{values .Values}}</td></tr>
{{end}}</table>
<h2>Outliers</h2>
{{range .With}}<h3>{{title .}}</h3><p>{{unit .}}; fleet median {{num .Median}} {{.Unit}}, robust sd {{num .Spread}}.</p>
<ul>{{range .Outliers}}<li{{if .Worse}} class="worse"{{end}}><b>{{label .}}</b>: {{join .Hosts ", "}}<ul>
{{range .Facts}}<li>separated by {{sep .}}</li>{{else}}<li>no fact shared by these hosts separates them</li>{{end}}</ul></li>{{end}}</ul>
{{else}}<p>No outliers in {{len .R.Metrics}} metrics.</p>{{end}}
{{with .R.Audit}}<h2>Audit ({{.Workload}})</h2>
<table><tr><th>severity</th><th>rule</th><th>hosts failing</th><th>of</th><th>title</th></tr>
{{range .Findings}}<tr><td>{{.Severity}}</td><td>{{.Rule}}</td><td>{{join .Hosts ", "}}</td><td>{{.Of}}</td><td>{{.Title}}</td></tr>
{{end}}</table>{{end}}
</body></html>
`))

// WriteHTML writes the report as a self-contained HTML page.
func WriteHTML(w io.Writer, r *Report) error {
	with, _ := r.outlierMetrics()
	return htmlTmpl.Execute(w, struct {
		R    *Report
		With []*Metric
	}{r, with})
}
