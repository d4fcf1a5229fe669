package report

import (
	"fmt"
	"github.com/perflab/perflab/internal/numfmt"
	"io"
	"math"
	"strings"
	"unicode/utf8"

	"github.com/perflab/perflab/internal/compare"
	"github.com/perflab/perflab/internal/termfmt"
)

// Text writes the terminal report: the likely causes, then an aligned
// table of every metric with each side's median ±CI and, for each later
// side, Δ with its CI, the Holm-adjusted p-value and the verdict (coloured
// when style is on), then the suite means, monitor and config differences.
func Text(w io.Writer, c *compare.Comparison, style termfmt.Style) error {
	tw := &errWriter{w: w}
	rs := rows(c)
	if len(c.Sides) == 1 {
		tw.printf("%s\n\n", style.Bold("perflab report: "+sideTitle(c.Sides[0])))
	} else {
		var names []string
		for _, s := range c.Sides {
			names = append(names, sideTitle(s))
		}
		tw.printf("%s\n", style.Bold("perflab compare: "+strings.Join(names, " vs ")))
		for _, p := range c.Pairs {
			prefix := ""
			if len(c.Pairs) > 1 {
				prefix = c.Sides[p.Other].Name + ": "
			}
			tw.printf("%s\n", prefix+compare.Headline(c, p))
		}
		tw.printf("%s\n\n", style.Dim(legend(c)))
	}
	for _, p := range c.Pairs {
		writeCausesText(tw, c, p, rs, style)
	}
	writeTableText(tw, c, rs, style)
	for _, p := range c.Pairs {
		writePairExtrasText(tw, c, p, style)
	}
	if len(c.Notes) > 0 {
		tw.printf("\n%s\n", style.Bold("Notes"))
		for _, n := range c.Notes {
			tw.printf("  - %s\n", n)
		}
	}
	return tw.err
}

// legend says how the table's numbers were made.
func legend(c *compare.Comparison) string {
	return fmt.Sprintf("Δ = ratio of the runs' medians vs %s with %.0f%% CI; the run is the unit: p = t-test on run medians (paired for interleaved blocks, calibrated by earlier runs when one a side), Holm-adjusted over %d metrics; * significant at α=%g; ~ no significant difference; ~= equivalent within ±%g%%; (drift) moved with the host's own reference",
		c.Sides[0].Name, c.Confidence*100, len(c.Metrics), c.Alpha, c.Margin*100)
}

func writeCausesText(tw *errWriter, c *compare.Comparison, p compare.Pair, rs []row, style termfmt.Style) {
	title := "Likely causes"
	if len(c.Pairs) > 1 {
		title += " (" + c.Sides[p.Other].Name + " vs " + c.Sides[0].Name + ")"
	}
	tw.printf("%s\n", style.Bold(title))
	if len(p.Causes) == 0 {
		moved := p.Counts[compare.Better] + p.Counts[compare.Worse]
		if moved == 0 {
			tw.printf("  none needed: no metric changed significantly\n\n")
		} else if c.Sides[0].SnapshotID == "" || c.Sides[p.Other].SnapshotID == "" {
			tw.printf("  no host snapshot on both sides to explain the change (Go benchmark files carry none; runs from 'perflab bench' do)\n\n")
		} else {
			tw.printf("  no known setting differs between the sides (%d config differences, see below); look at load and placement\n\n", len(p.Config))
		}
		return
	}
	for i, cs := range p.Causes {
		if i == 5 {
			tw.printf("  … %d more, see the JSON or HTML report\n", len(p.Causes)-5)
			break
		}
		head, detail := causeLines(c, cs, rs, p.Other)
		mark := style.Yellow(fmt.Sprintf("%d.", i+1))
		if !cs.Supported() {
			mark = style.Dim(fmt.Sprintf("%d.", i+1))
		}
		tw.printf("  %s %s\n", mark, head)
		for _, d := range detail {
			tw.printf("     %s\n", style.Dim(d))
		}
	}
	tw.printf("\n")
}

func writeTableText(tw *errWriter, c *compare.Comparison, rs []row, style termfmt.Style) {
	// Metric names repeat across probes (read.t1 of memory.bandwidth, read.iops
	// of fio), so the first column names the probe; the suite is added only
	// when the comparison spans several.
	suites := map[string]bool{}
	for _, r := range rs {
		suites[r.Suite] = true
	}
	named := make([]row, len(rs))
	copy(named, rs)
	for i := range named {
		if len(suites) > 1 && named[i].Suite != "" {
			named[i].Suite = named[i].Suite + "/" + named[i].Probe
		} else {
			named[i].Suite = named[i].Probe
		}
	}
	writeTableTextAs(tw, c, named, style, "probe")
}

// writeTableTextAs is writeTableText with the first column titled group:
// the check report groups by probe, its one suite being in the heading.
func writeTableTextAs(tw *errWriter, c *compare.Comparison, rs []row, style termfmt.Style, group string) {
	single := len(c.Sides) == 1
	header := []string{group, "metric"}
	for i, s := range c.Sides {
		header = append(header, s.Name+" median", "±CI")
		if single {
			header = append(header, "n", "min – max", "CV")
		}
		if i > 0 {
			header = append(header, "Δ", "95% CI", "p", "verdict")
		}
	}
	var table [][]string
	var colour [][]func(string) string
	for _, r := range rs {
		line := []string{r.Suite, r.Metric}
		cols := make([]func(string) string, 2)
		for i, s := range r.Sides {
			line = append(line, s.Median, s.CI)
			cols = append(cols, nil, nil)
			if single {
				line = append(line, fmt.Sprint(s.N), s.Range, s.CV)
				cols = append(cols, nil, nil, nil)
			}
			if i == 0 {
				continue
			}
			d := r.Deltas[i]
			if d == nil {
				line = append(line, "–", "", "", "")
				cols = append(cols, nil, nil, nil, nil)
				continue
			}
			mark := d.Mark
			if d.Sig {
				mark += " *"
			}
			if d.Note != "" {
				mark += " (" + d.Note + ")"
			}
			if s := r.Sides[0].Noise; s != "" && i == 1 {
				mark += " [" + s + "]"
			}
			line = append(line, d.Delta, d.CI, d.P, mark)
			paint := verdictStyle(style, d.Verdict)
			cols = append(cols, paint, nil, nil, paint)
		}
		table = append(table, line)
		colour = append(colour, cols)
	}
	widths := make([]int, len(header))
	for i, h := range header {
		widths[i] = utf8.RuneCountInString(h)
	}
	for _, line := range table {
		for i, cell := range line {
			widths[i] = max(widths[i], utf8.RuneCountInString(cell))
		}
	}
	pad := func(s string, w int) string { return s + strings.Repeat(" ", w-utf8.RuneCountInString(s)) }
	var hl []string
	for i, h := range header {
		hl = append(hl, pad(h, widths[i]))
	}
	tw.printf("%s\n", style.Bold(strings.TrimRight(strings.Join(hl, "  "), " ")))
	for li, line := range table {
		var cells []string
		for i, cell := range line {
			s := pad(cell, widths[i])
			if i == len(line)-1 {
				s = cell
			}
			if f := colour[li][i]; f != nil {
				s = f(s)
			}
			cells = append(cells, s)
		}
		tw.printf("%s\n", strings.TrimRight(strings.Join(cells, "  "), " "))
	}
}

func verdictStyle(style termfmt.Style, v compare.Verdict) func(string) string {
	switch v {
	case compare.Better:
		return style.Green
	case compare.Worse:
		return style.Red
	case compare.Inconclusive:
		return style.Yellow
	}
	return nil
}

func writePairExtrasText(tw *errWriter, c *compare.Comparison, p compare.Pair, style termfmt.Style) {
	vs := c.Sides[p.Other].Name + " vs " + c.Sides[0].Name
	tw.printf("\n%s\n", style.Bold("Summary ("+vs+")"))
	tw.printf("  %d better, %d worse, %d same, %d equivalent, %d inconclusive\n",
		p.Counts[compare.Better], p.Counts[compare.Worse], p.Counts[compare.Same], p.Counts[compare.Equivalent], p.Counts[compare.Inconclusive])
	for _, s := range p.Suites {
		tw.printf("  geomean %s: %s over %d metrics\n", s.Suite, gainWords(s.GainPct), s.Metrics)
	}
	if len(p.HostDrift) > 0 {
		tw.printf("\n%s\n", style.Bold("Host drift: the reference read around every run ("+vs+")"))
		for _, h := range p.HostDrift {
			mark := ""
			if h.Significant {
				mark = " *"
			}
			tw.printf("  %-8s %s [%s, %s]%s  (%d vs %d readings)\n", h.Kind, numfmt.Pct(h.SpeedPct), numfmt.Pct(h.SpeedLoPct), numfmt.Pct(h.SpeedHiPct), mark, h.Readings[0], h.Readings[1])
		}
	}
	if len(p.Conditions) > 0 {
		tw.printf("\n%s\n", style.Bold(fmt.Sprintf("Conditions during the runs (%s): %d, not causes", vs, len(p.Conditions))))
		for i, d := range p.Conditions {
			if i == 10 {
				tw.printf("  … %d more (use --format json or html for all)\n", len(p.Conditions)-10)
				break
			}
			tw.printf("  %s: %s → %s\n", d.Path, clip(d.Before), clip(d.After))
		}
	}
	var notable []compare.MonDelta
	for _, m := range p.Monitor {
		if m.Notable {
			notable = append(notable, m)
		}
	}
	if len(notable) > 0 {
		tw.printf("\n%s\n", style.Bold("Host activity during the runs ("+vs+")"))
		for _, m := range notable {
			tw.printf("  %-16s %s → %s\n", m.Field, numfmt.Num(m.Base)+" "+m.Unit, numfmt.Num(m.Other)+" "+m.Unit)
		}
	}
	if len(p.Config) > 0 {
		tw.printf("\n%s\n", style.Bold(fmt.Sprintf("Configuration differences (%s): %d", vs, len(p.Config))))
		for i, d := range p.Config {
			if i == 25 {
				tw.printf("  … %d more (use --format json or html for all)\n", len(p.Config)-25)
				break
			}
			tw.printf("  %s: %s → %s\n", d.Path, clip(d.Before), clip(d.After))
		}
	}
}

// gainWords says a suite's geometric-mean gain one way: "2.8% better",
// "34.7% worse" or "unchanged". The gain is oriented (a lower latency is a
// gain), so it carries no sign and no raw ratio of medians, which mixes
// directions and read as a contradiction next to it ("+2.8% better …
// ×0.9906"); the JSON keeps both numbers.
func gainWords(g float64) string {
	dec := 1
	if math.Abs(g) < 0.1 {
		dec = 2
	}
	switch {
	case math.IsNaN(g):
		return "no ratio"
	case g < 0:
		return numfmt.Fixed(-g, dec) + "% worse"
	case g > 0:
		return numfmt.Fixed(g, dec) + "% better"
	}
	return "unchanged"
}

func clip(s string) string {
	if utf8.RuneCountInString(s) > 60 {
		r := []rune(s)
		return string(r[:57]) + "…"
	}
	return s
}

type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) printf(format string, args ...any) {
	if e.err == nil {
		_, e.err = fmt.Fprintf(e.w, format, args...)
	}
}
