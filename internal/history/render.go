package history

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/perflab/perflab/internal/changepoint"
	"github.com/perflab/perflab/internal/run"
)

// Method states how the change points were found, for the reader.
type Method struct {
	Name         string  `json:"name"`
	MinSegment   int     `json:"min_segment"`
	Alpha        float64 `json:"alpha"`
	Permutations int     `json:"permutations"`
}

// MethodOf describes o (with its defaults filled in).
func MethodOf(o changepoint.Options) Method {
	m := Method{Name: "e-divisive means, permutation test", MinSegment: o.MinSegment, Alpha: o.Alpha, Permutations: o.Permutations}
	if m.MinSegment < 2 {
		m.MinSegment = changepoint.DefaultMinSegment
	}
	if m.Alpha <= 0 || m.Alpha >= 1 {
		m.Alpha = changepoint.DefaultAlpha
	}
	if m.Permutations <= 0 {
		m.Permutations = changepoint.DefaultPermutations
	}
	return m
}

// WriteJSON writes the series with the method.
func WriteJSON(w io.Writer, m Method, series []*Series) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(struct {
		Method Method    `json:"method"`
		Series []*Series `json:"series"`
	}{m, nonNil(series)})
}

func nonNil(s []*Series) []*Series {
	if s == nil {
		return []*Series{}
	}
	return s
}

// WriteText writes each series as a sparkline with its change points.
func WriteText(w io.Writer, m Method, series []*Series) error {
	for i, s := range series {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintln(w, s.title())
		fmt.Fprintf(w, "  %s\n", Sparkline(s.values(), s.changeIndexes()))
		fmt.Fprintf(w, "  %s\n", s.rangeLine())
		writeChangesText(w, m, s)
	}
	return nil
}

func writeChangesText(w io.Writer, m Method, s *Series) {
	if len(s.Points) < 2*m.MinSegment {
		fmt.Fprintf(w, "  %s\n", m.tooFew(len(s.Points)))
		return
	}
	if len(s.Changes) == 0 {
		fmt.Fprintf(w, "  no change points (%s)\n", m.describe(len(s.Points)))
		return
	}
	fmt.Fprintf(w, "  %d change point(s) (%s):\n", len(s.Changes), m.describe(len(s.Points)))
	for _, c := range s.Changes {
		fmt.Fprintf(w, "  | run %d of %d (%s, %s): %s\n", c.At.Index+1, len(s.Points), short(c.AfterRun),
			s.Points[c.At.Index].Started.Local().Format("2006-01-02 15:04"), s.changeText(c))
		switch {
		case c.NoSnapshot != "":
			fmt.Fprintf(w, "  |   settings: not compared, run %s has no stored snapshot\n", short(c.NoSnapshot))
		case len(c.Settings) == 0:
			fmt.Fprintf(w, "  |   settings: none changed between %s and %s\n", short(c.BeforeRun), short(c.AfterRun))
		default:
			fmt.Fprintf(w, "  |   settings changed between %s and %s:\n", short(c.BeforeRun), short(c.AfterRun))
			for _, d := range c.Settings {
				fmt.Fprintf(w, "  |     %s: %s → %s\n", d.Path, d.Before, d.After)
			}
		}
	}
}

// WriteMarkdown writes each series as a section with a table of change
// points.
func WriteMarkdown(w io.Writer, m Method, series []*Series) error {
	for _, s := range series {
		fmt.Fprintf(w, "## %s\n\n", s.title())
		fmt.Fprintf(w, "```\n%s\n```\n\n%s.\n\n", Sparkline(s.values(), s.changeIndexes()), s.rangeLine())
		if len(s.Points) < 2*m.MinSegment {
			fmt.Fprintf(w, "%s.\n\n", strings.ToUpper(m.tooFew(len(s.Points))[:1])+m.tooFew(len(s.Points))[1:])
			continue
		}
		if len(s.Changes) == 0 {
			fmt.Fprintf(w, "No change points (%s).\n", m.describe(len(s.Points)))
			fmt.Fprintln(w)
			continue
		}
		fmt.Fprintf(w, "Change points (%s):\n\n", m.describe(len(s.Points)))
		fmt.Fprintln(w, "| run | id | started | change | settings changed |")
		fmt.Fprintln(w, "|---:|---|---|---|---|")
		for _, c := range s.Changes {
			fmt.Fprintf(w, "| %d | %s | %s | %s | %s |\n", c.At.Index+1, short(c.AfterRun),
				s.Points[c.At.Index].Started.UTC().Format("2006-01-02 15:04Z"), s.changeText(c), settingsCell(c))
		}
		fmt.Fprintln(w)
	}
	return nil
}

func settingsCell(c Change) string {
	if c.NoSnapshot != "" {
		return "not compared (no snapshot of " + short(c.NoSnapshot) + ")"
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

func (m Method) tooFew(n int) string {
	return fmt.Sprintf("too few runs to search for change points (%d; at least %d, %d per side)", n, 2*m.MinSegment, m.MinSegment)
}

func (m Method) describe(n int) string {
	return fmt.Sprintf("%s over %d runs, ≥ %d runs per segment, alpha %s", m.Name, n, m.MinSegment, strconv.FormatFloat(m.Alpha, 'g', -1, 64))
}

func (s *Series) title() string {
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

func (s *Series) rangeLine() string {
	vs := s.values()
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
	return fmt.Sprintf("min %s, max %s %s (median of each run)%s", num(lo), num(hi), s.Unit, better)
}

// changeText is "100.1 → 90.2 events/s, -9.9% [-11.2%, -8.5%] (worse), p 0.005".
func (s *Series) changeText(c Change) string {
	t := fmt.Sprintf("%s → %s %s", num(c.At.Before), num(c.At.After), s.Unit)
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

func (s *Series) values() []float64 {
	vs := make([]float64, len(s.Points))
	for i, p := range s.Points {
		vs[i] = p.Value
	}
	return vs
}

func (s *Series) changeIndexes() []int {
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

func num(v float64) string { return strconv.FormatFloat(v, 'g', 4, 64) }

func short(id string) string {
	if len(id) > 12 {
		return id[:12] // as runs list shows ids
	}
	return id
}
