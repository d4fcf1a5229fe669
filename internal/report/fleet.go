package report

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/perflab/perflab/internal/fleet"
	"github.com/perflab/perflab/internal/numfmt"
)

func fleetPct(ratio float64) string {
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

// fleetEffect is "−19% ± 3% (95% CI −22% … −16%, 3 vs 5 hosts)".
func fleetEffect(e *fleet.Effect) string {
	if e == nil {
		return "effect not estimated (too few hosts or a non-positive value)"
	}
	half := (e.Hi - e.Lo) / 2 * 100
	return fmt.Sprintf("%s ± %s%% (95%% CI %s … %s, %d vs %d hosts)", fleetPct(e.Ratio), strconv.FormatFloat(half, 'f', 0, 64), fleetPct(e.Lo), fleetPct(e.Hi), e.N1, e.N2)
}

func fleetTitle(m *fleet.Metric) string {
	t := m.Probe + " " + m.Metric
	if m.Params != "" {
		t += " [" + m.Params + "]"
	}
	return t
}

func fleetUnit(m *fleet.Metric) string {
	u := m.Unit
	if m.Better != "" {
		u += ", " + string(m.Better) + " is better"
	}
	return u
}

// fleetCentre is "fleet median 2412 events/s, robust sd 24.12, hosts'
// run noise 33.6": what a host value is judged against.
func fleetCentre(m *fleet.Metric) string {
	t := fmt.Sprintf("fleet median %s %s, robust sd %s", numfmt.Num(m.Median), m.Unit, numfmt.Num(m.Spread))
	if m.RunNoise > 0 {
		t += ", hosts' run noise " + numfmt.Num(m.RunNoise)
	}
	return t
}

// fleetHostRuns is "3 runs, SE 12": a host value's runs and standard error.
func fleetHostRuns(m *fleet.Metric, v fleet.HostValue) string {
	t := fmt.Sprintf("%d runs", v.Runs)
	if se := m.SE(v); se > 0 {
		t += ", SE " + numfmt.Num(se)
	}
	return t
}

func fleetValue(m *fleet.Metric, host string) fleet.HostValue {
	for _, h := range m.Hosts {
		if h.Host == host {
			return h
		}
	}
	return fleet.HostValue{}
}

func fleetLabel(g *fleet.OutlierGroup) string {
	w := "better"
	if g.Worse {
		w = "worse"
	}
	return g.Direction + " (" + w + ")"
}

func fleetSeparation(s *fleet.Separation) string {
	t := fmt.Sprintf("%s = %s (others: %s)", s.Fact, s.Value, strings.Join(s.Others, ", "))
	if len(s.Also) > 0 {
		t += "; same hosts by " + strings.Join(s.Also, ", ")
	}
	if len(s.Inliers) > 0 {
		t += fmt.Sprintf("; also on non-outliers %s", strings.Join(s.Inliers, ", "))
	}
	return t + ": " + fleetEffect(s.Effect)
}

func fleetValues(vs []fleet.Value) string {
	var b []string
	for _, v := range vs {
		b = append(b, fmt.Sprintf("%s (%d: %s)", v.Value, len(v.Hosts), strings.Join(v.Hosts, ", ")))
	}
	return strings.Join(b, " · ")
}

func fleetOutliers(r *fleet.Report) (with []*fleet.Metric, without int) {
	for i := range r.Metrics {
		if len(r.Metrics[i].Outliers) > 0 {
			with = append(with, &r.Metrics[i])
		} else {
			without++
		}
	}
	return with, without
}

func fleetRuns(r *fleet.Report) int {
	n := 0
	for _, h := range r.Hosts {
		n += h.Runs
	}
	return n
}

// fleetText writes the report for a terminal.
func fleetText(w io.Writer, r *fleet.Report) error {
	p := func(format string, a ...any) { fmt.Fprintf(w, format, a...) }
	p("Fleet: %d hosts, %d runs\n", len(r.Hosts), fleetRuns(r))
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
		p("  %s: %s\n", g.Fact, fleetValues(g.Values))
	}
	p("\nFacts that differ between hosts (%d)\n", len(r.Settings))
	for _, s := range r.Settings {
		p("  %s [%s]: %s\n", s.Fact, s.Kind, fleetValues(s.Values))
	}
	with, without := fleetOutliers(r)
	p("\nOutliers (%d of %d metrics)\n", len(with), len(r.Metrics))
	for _, m := range with {
		p("  %s (%s): %s\n", fleetTitle(m), fleetUnit(m), fleetCentre(m))
		for _, g := range m.Outliers {
			var hs []string
			for _, h := range g.Hosts {
				v := fleetValue(m, h)
				hs = append(hs, fmt.Sprintf("%s %s %s (%s)", h, numfmt.Num(v.Value), m.Unit, fleetHostRuns(m, v)))
			}
			p("    %s: %s\n", fleetLabel(&g), strings.Join(hs, "; "))
			if len(g.Facts) == 0 {
				p("      no fact shared by these hosts separates them from the rest\n")
			}
			for _, s := range g.Facts {
				p("      separated by %s\n", fleetSeparation(&s))
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
				note = fmt.Sprintf(" (fewer than %d hosts: no outlier can be called)", fleet.MinHosts)
			}
			p("  %s: median %s %s over %d hosts%s\n", fleetTitle(m), numfmt.Num(m.Median), m.Unit, len(m.Hosts), note)
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

// fleetMarkdown writes the report as Markdown.
func fleetMarkdown(w io.Writer, r *fleet.Report) error {
	p := func(format string, a ...any) { fmt.Fprintf(w, format, a...) }
	p("# Fleet report\n\n%d hosts, %d runs. Rule: %s.\n\n", len(r.Hosts), fleetRuns(r), r.Rule)
	p("## Hosts\n\n| host | runs | CPU model | microcode | kernel | virtualisation |\n|---|---:|---|---|---|---|\n")
	for _, h := range r.Hosts {
		p("| %s | %d | %s | %s | %s | %s |\n", mdEscape(h.Name), h.Runs, mdEscape(h.CPUModel), h.Microcode, mdEscape(h.Kernel), h.Virtualization)
	}
	p("\n## Groups\n\n| fact | values (hosts) |\n|---|---|\n")
	for _, g := range r.Groups {
		p("| %s | %s |\n", g.Fact, mdEscape(fleetValues(g.Values)))
	}
	p("\n## Facts that differ between hosts\n\n| fact | kind | values (hosts) |\n|---|---|---|\n")
	for _, s := range r.Settings {
		p("| %s | %s | %s |\n", mdEscape(s.Fact), s.Kind, mdEscape(fleetValues(s.Values)))
	}
	with, without := fleetOutliers(r)
	p("\n## Outliers\n\n")
	if len(with) == 0 {
		p("No outliers in %d metrics.\n", len(r.Metrics))
	}
	for _, m := range with {
		p("### %s\n\n%s; %s.\n\n", mdEscape(fleetTitle(m)), fleetUnit(m), mdEscape(fleetCentre(m)))
		for _, g := range m.Outliers {
			p("- **%s**: %s\n", fleetLabel(&g), strings.Join(g.Hosts, ", "))
			if len(g.Facts) == 0 {
				p("  - no fact shared by these hosts separates them\n")
			}
			for _, s := range g.Facts {
				p("  - separated by %s\n", mdEscape(fleetSeparation(&s)))
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
			p("| %s | %s | %s | %d | %s |\n", f.Severity, f.Rule, strings.Join(f.Hosts, ", "), f.Of, mdEscape(f.Title))
		}
	}
	return nil
}

// fleetHTML writes the report as one page of the shell: plain tables,
// readable without a script.
func fleetHTML(w io.Writer, r *fleet.Report) error {
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	row := func(tag string, cells ...string) {
		b.WriteString("<tr>")
		for _, c := range cells {
			b.WriteString("<" + tag + ">" + esc(c) + "</" + tag + ">")
		}
		b.WriteString("</tr>\n")
	}
	p("<h1>Fleet report</h1>\n<p>%d hosts. Rule: %s.</p>\n", len(r.Hosts), esc(r.Rule))
	b.WriteString("<h2>Hosts</h2>\n<table>")
	row("th", "host", "runs", "CPU model", "microcode", "kernel", "virtualisation")
	for _, h := range r.Hosts {
		row("td", h.Name, strconv.Itoa(h.Runs), h.CPUModel, h.Microcode, h.Kernel, h.Virtualization)
	}
	b.WriteString("</table>\n<h2>Groups</h2>\n<table>")
	row("th", "fact", "values (hosts)")
	for _, g := range r.Groups {
		row("td", g.Fact, fleetValues(g.Values))
	}
	b.WriteString("</table>\n<h2>Facts that differ between hosts</h2>\n<table>")
	row("th", "fact", "kind", "values (hosts)")
	for _, s := range r.Settings {
		row("td", s.Fact, string(s.Kind), fleetValues(s.Values))
	}
	b.WriteString("</table>\n<h2>Outliers</h2>\n")
	with, _ := fleetOutliers(r)
	if len(with) == 0 {
		p("<p>No outliers in %d metrics.</p>\n", len(r.Metrics))
	}
	for _, m := range with {
		p("<h3>%s</h3><p>%s; %s.</p>\n<ul>", esc(fleetTitle(m)), esc(fleetUnit(m)), esc(fleetCentre(m)))
		for _, g := range m.Outliers {
			cls := ""
			if g.Worse {
				cls = ` class="worse"`
			}
			p("<li%s><b>%s</b>: %s<ul>\n", cls, esc(fleetLabel(&g)), esc(strings.Join(g.Hosts, ", ")))
			if len(g.Facts) == 0 {
				b.WriteString("<li>no fact shared by these hosts separates them</li>")
			}
			for _, s := range g.Facts {
				p("<li>separated by %s</li>", esc(fleetSeparation(&s)))
			}
			b.WriteString("</ul></li>")
		}
		b.WriteString("</ul>\n")
	}
	if a := r.Audit; a != nil {
		p("<h2>Audit (%s)</h2>\n<table>", esc(a.Workload))
		row("th", "severity", "rule", "hosts failing", "of", "title")
		for _, f := range a.Findings {
			row("td", f.Severity.String(), f.Rule, strings.Join(f.Hosts, ", "), strconv.Itoa(f.Of), f.Title)
		}
		b.WriteString("</table>\n")
	}
	return WritePage(w, Page{Title: "perflab fleet report", CSS: fleetCSS, Body: b.String()})
}

const fleetCSS = "body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.2em .5em;text-align:left}.worse{color:#b00}"
