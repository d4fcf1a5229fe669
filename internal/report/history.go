package report

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/perflab/perflab/internal/history"
	"github.com/perflab/perflab/internal/numfmt"
	"github.com/perflab/perflab/internal/run"
)

// History is what 'runs history' prints: the series with the method that
// found their change points.
type History struct {
	Method history.Method    `json:"method"`
	Series []*history.Series `json:"series"`
}

// historyJSON writes the series with the method.
func historyJSON(w io.Writer, m history.Method, series []*history.Series) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(struct {
		Method history.Method    `json:"method"`
		Series []*history.Series `json:"series"`
	}{m, nonNilSeries(series)})
}

func nonNilSeries(s []*history.Series) []*history.Series {
	if s == nil {
		return []*history.Series{}
	}
	return s
}

// historyText writes each series as a sparkline with its change points.
func historyText(w io.Writer, m history.Method, series []*history.Series) error {
	for i, s := range series {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintln(w, seriesTitle(s))
		fmt.Fprintf(w, "  %s\n", Sparkline(seriesValues(s), seriesChanges(s)))
		fmt.Fprintf(w, "  %s\n", seriesRange(s))
		historyChangesText(w, m, s)
	}
	return nil
}

func historyChangesText(w io.Writer, m history.Method, s *history.Series) {
	if len(s.Points) < 2*m.MinSegment {
		fmt.Fprintf(w, "  %s\n", historyTooFew(m, len(s.Points)))
		return
	}
	if len(s.Changes) == 0 {
		fmt.Fprintf(w, "  no change points (%s)\n", historyDescribe(m, len(s.Points)))
		return
	}
	fmt.Fprintf(w, "  %d change point(s) (%s):\n", len(s.Changes), historyDescribe(m, len(s.Points)))
	for _, c := range s.Changes {
		fmt.Fprintf(w, "  | run %d of %d (%s, %s): %s\n", c.At.Index+1, len(s.Points), ShortID(c.AfterRun),
			s.Points[c.At.Index].Started.Local().Format("2006-01-02 15:04"), seriesChange(s, c))
		switch {
		case c.NoSnapshot != "":
			fmt.Fprintf(w, "  |   settings: not compared, run %s has no stored snapshot\n", ShortID(c.NoSnapshot))
		case len(c.Settings) == 0:
			fmt.Fprintf(w, "  |   settings: none changed between %s and %s\n", ShortID(c.BeforeRun), ShortID(c.AfterRun))
		default:
			fmt.Fprintf(w, "  |   settings changed between %s and %s:\n", ShortID(c.BeforeRun), ShortID(c.AfterRun))
			for _, d := range c.Settings {
				fmt.Fprintf(w, "  |     %s: %s → %s\n", d.Path, d.Before, d.After)
			}
		}
	}
}

// historyMarkdown writes each series as a section with a table of change
// points.
func historyMarkdown(w io.Writer, m history.Method, series []*history.Series) error {
	for _, s := range series {
		fmt.Fprintf(w, "## %s\n\n", seriesTitle(s))
		fmt.Fprintf(w, "```\n%s\n```\n\n%s.\n\n", Sparkline(seriesValues(s), seriesChanges(s)), seriesRange(s))
		if len(s.Points) < 2*m.MinSegment {
			fmt.Fprintf(w, "%s.\n\n", strings.ToUpper(historyTooFew(m, len(s.Points))[:1])+historyTooFew(m, len(s.Points))[1:])
			continue
		}
		if len(s.Changes) == 0 {
			fmt.Fprintf(w, "No change points (%s).\n", historyDescribe(m, len(s.Points)))
			fmt.Fprintln(w)
			continue
		}
		fmt.Fprintf(w, "Change points (%s):\n\n", historyDescribe(m, len(s.Points)))
		fmt.Fprintln(w, "| run | id | started | change | settings changed |")
		fmt.Fprintln(w, "|---:|---|---|---|---|")
		for _, c := range s.Changes {
			fmt.Fprintf(w, "| %d | %s | %s | %s | %s |\n", c.At.Index+1, ShortID(c.AfterRun),
				s.Points[c.At.Index].Started.UTC().Format("2006-01-02 15:04Z"), seriesChange(s, c), historySettingsCell(c))
		}
		fmt.Fprintln(w)
	}
	return nil
}

func historySettingsCell(c history.Change) string {
	if c.NoSnapshot != "" {
		return "not compared (no snapshot of " + ShortID(c.NoSnapshot) + ")"
	}
	if len(c.Settings) == 0 {
		return "none"
	}
	parts := make([]string, len(c.Settings))
	for i, d := range c.Settings {
		parts[i] = fmt.Sprintf("`%s`: %s → %s", d.Path, d.Before, d.After)
	}
	return strings.ReplaceAll(strings.Join(parts, "<br>"), "|", `\|`)
}

func historyTooFew(m history.Method, n int) string {
	return fmt.Sprintf("too few runs to search for change points (%d; at least %d, %d per side)", n, 2*m.MinSegment, m.MinSegment)
}

func historyDescribe(m history.Method, n int) string {
	return fmt.Sprintf("%s over %d runs, ≥ %d runs per segment, alpha %s", m.Name, n, m.MinSegment, strconv.FormatFloat(m.Alpha, 'g', -1, 64))
}

func seriesTitle(s *history.Series) string {
	t := fmt.Sprintf("%s %s on %s", s.Probe, s.Metric, s.Host)
	if s.Params != "" {
		t += " (" + s.Params + ")"
	}
	older := ""
	if s.Older > 0 {
		older = fmt.Sprintf(" (the newest; %d older left out)", s.Older)
	}
	if len(s.Points) == 1 {
		return t + ": 1 run" + older
	}
	return t + fmt.Sprintf(": %d runs", len(s.Points)) + older
}

func seriesRange(s *history.Series) string {
	vs := seriesValues(s)
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range vs {
		lo, hi = math.Min(lo, v), math.Max(hi, v)
	}
	better := ""
	switch s.Better {
	case run.Higher:
		better = ", higher is better"
	case run.Lower:
		better = ", lower is better"
	}
	return fmt.Sprintf("min %s, max %s %s (median of each run)%s", numfmt.Num(lo), numfmt.Num(hi), s.Unit, better)
}

// seriesChange is "100.1 → 90.2 events/s, -9.9% [-11.2%, -8.5%] (worse), p 0.005".
func seriesChange(s *history.Series, c history.Change) string {
	t := fmt.Sprintf("%s → %s %s", numfmt.Num(c.At.Before), numfmt.Num(c.At.After), s.Unit)
	if !math.IsNaN(c.At.Change) {
		t += fmt.Sprintf(", %+.1f%%", 100*c.At.Change)
		if !math.IsInf(c.At.ChangeLo, 0) && !math.IsInf(c.At.ChangeHi, 0) {
			t += fmt.Sprintf(" [%+.1f%%, %+.1f%%]", 100*c.At.ChangeLo, 100*c.At.ChangeHi)
		}
	}
	if c.Verdict.Changed() {
		t += " (" + string(c.Verdict) + ")"
	}
	return t + fmt.Sprintf(", p %s", strconv.FormatFloat(c.At.PValue, 'g', 2, 64))
}

func seriesValues(s *history.Series) []float64 {
	vs := make([]float64, len(s.Points))
	for i, p := range s.Points {
		vs[i] = p.Value
	}
	return vs
}

func seriesChanges(s *history.Series) []int {
	idx := make([]int, len(s.Changes))
	for i, c := range s.Changes {
		idx[i] = c.At.Index
	}
	return idx
}

// Sparkline draws one block character per value, scaled between the
// series' minimum and maximum, with a | before each change point.
func Sparkline(vs []float64, changes []int) string {
	const bars = "▁▂▃▄▅▆▇█"
	glyphs := []rune(bars)
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range vs {
		lo, hi = math.Min(lo, v), math.Max(hi, v)
	}
	at := map[int]bool{}
	for _, c := range changes {
		at[c] = true
	}
	var b strings.Builder
	for i, v := range vs {
		if at[i] {
			b.WriteRune('|')
		}
		k := 0
		if hi > lo {
			k = int(math.Round((v - lo) / (hi - lo) * float64(len(glyphs)-1)))
		}
		b.WriteRune(glyphs[k])
	}
	return b.String()
}
