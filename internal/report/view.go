package report

import (
	"fmt"
	"github.com/perflab/perflab/internal/numfmt"
	"math"
	"strings"

	"github.com/perflab/perflab/internal/compare"
)

// row is one metric as every renderer shows it: display strings per side
// and per comparison with the baseline.
type row struct {
	Index                      int
	Suite, Probe, Metric, Unit string
	Better                     string
	Sides                      []sideCell
	Deltas                     []*deltaCell // per side; nil for the baseline and where missing
}

type sideCell struct {
	Missing bool
	N       int
	Median  string // "1234 events/s"
	CI      string // "±0.5%", or "±? n=3"
	Range   string // "1200 – 1260"
	CV      string
	Noise   string // "A/A spread 2.4% (4 runs)" or ""
}

type deltaCell struct {
	Delta   string // "+3.2%" or an absolute shift when the baseline median is 0
	CI      string // "[+2.9%, +3.6%]"
	P       string // Holm-adjusted
	Verdict compare.Verdict
	Mark    string // better, worse, ~, ~=, ?
	Note    string // "need ≥4 samples", "within A/A noise"
	Sig     bool
}

func rows(c *compare.Comparison) []row {
	out := make([]row, len(c.Metrics))
	for i, m := range c.Metrics {
		metric := m.Metric
		if m.Params != "" {
			// Runs of this probe differ in parameters; each set is its own row.
			metric += " (" + m.Params + ")"
		}
		r := row{Index: i, Suite: m.Suite, Probe: m.Probe, Metric: metric, Unit: m.Unit, Better: string(m.Better),
			Sides: make([]sideCell, len(c.Sides)), Deltas: make([]*deltaCell, len(c.Sides))}
		for si, s := range m.Sides {
			r.Sides[si] = sideView(s, m.Unit)
		}
		out[i] = r
	}
	for _, p := range c.Pairs {
		for _, d := range p.Deltas {
			out[d.Row].Deltas[p.Other] = deltaView(d, c.Metrics[d.Row], c)
		}
	}
	return out
}

func sideView(s *compare.SideStats, unit string) sideCell {
	if s == nil {
		return sideCell{Missing: true, Median: "–"}
	}
	sm := s.Summary
	cell := sideCell{N: sm.N, Median: numfmt.Value(sm.Median, unit)}
	switch {
	case sm.N == 0:
		cell.CI = "no samples"
	case !sm.HasCI:
		cell.CI = fmt.Sprintf("±? n=%d", sm.N)
	case sm.Median == 0:
		cell.CI = "[" + numfmt.Value(sm.Lo, unit) + ", " + numfmt.Value(sm.Hi, unit) + "]"
	default:
		h := math.Max(sm.Hi-sm.Median, sm.Median-sm.Lo) / math.Abs(sm.Median) * 100
		cell.CI = fmt.Sprintf("±%s%%", numfmt.Fixed(h, 1))
		if h < 0.1 {
			cell.CI = fmt.Sprintf("±%s%%", numfmt.Fixed(h, 2))
		}
	}
	if sm.N > 0 {
		cell.Range = numfmt.Value(sm.Min, unit) + " – " + numfmt.Value(sm.Max, unit)
		if !math.IsNaN(sm.CV) {
			cell.CV = fmt.Sprintf("%.1f%%", sm.CV*100)
		}
	}
	if s.Noise != nil {
		cell.Noise = fmt.Sprintf("A/A spread %.1f%% (%d runs)", s.Noise.SpreadPct, s.Noise.Runs)
	}
	return cell
}

func deltaView(d compare.Delta, m compare.MetricRow, c *compare.Comparison) *deltaCell {
	cell := &deltaCell{Verdict: d.Verdict, P: numfmt.PValue(d.PAdj), Sig: d.PAdj < c.Alpha}
	if math.IsNaN(d.DeltaPct) {
		cell.Delta = signed(numfmt.Value(d.Shift, m.Unit), d.Shift)
		if !math.IsInf(d.ShiftLo, 0) && !math.IsInf(d.ShiftHi, 0) {
			cell.CI = "[" + signed(numfmt.Value(d.ShiftLo, m.Unit), d.ShiftLo) + ", " + signed(numfmt.Value(d.ShiftHi, m.Unit), d.ShiftHi) + "]"
		}
	} else {
		cell.Delta = numfmt.Pct(d.DeltaPct)
		if !math.IsInf(d.DeltaLoPct, 0) && !math.IsInf(d.DeltaHiPct, 0) {
			cell.CI = "[" + numfmt.Pct(d.DeltaLoPct) + ", " + numfmt.Pct(d.DeltaHiPct) + "]"
		}
	}
	if cell.CI == "" {
		cell.CI = "[no CI]"
	}
	switch d.Verdict {
	case compare.Better, compare.Worse:
		cell.Mark = string(d.Verdict)
	case compare.Same:
		cell.Mark = "~"
	case compare.Equivalent:
		cell.Mark = fmt.Sprintf("~= ±%s%%", numfmt.Fixed(c.Margin*100, 1))
	case compare.Inconclusive:
		cell.Mark = "?"
		if d.Need > 0 {
			unit := "runs"
			if strings.HasPrefix(d.Reason, "too few results") { // Go benchmark files: -count
				unit = "results"
			}
			cell.Note = fmt.Sprintf("need ≥%d %s per side", d.Need, unit)
		}
	}
	if d.HostDrift {
		cell.Mark += " (drift)"
		cell.Note = strings.TrimPrefix(cell.Note+"; moved with the host's reference", "; ")
	}
	if d.Gross {
		cell.Note = strings.TrimPrefix(cell.Note+"; beyond any drift (one run a side)", "; ")
	}
	return cell
}

func signed(s string, v float64) string {
	if v > 0 {
		return "+" + s
	}
	return strings.Replace(s, "-", "−", 1)
}

// causeLines describes a cause in a few plain-text lines.
func causeLines(c *compare.Comparison, cs compare.Cause, rs []row, other int) (head string, detail []string) {
	var facts []string
	for i, d := range cs.Diffs {
		if i == 3 {
			facts = append(facts, fmt.Sprintf("and %d more", len(cs.Diffs)-3))
			break
		}
		facts = append(facts, fmt.Sprintf("%s: %s → %s", d.Path, d.Before, d.After))
	}
	head = cs.Title + " — " + strings.Join(facts, "; ")
	if cs.Supported() {
		var moved []string
		for i, r := range cs.Moved {
			if i == 4 {
				moved = append(moved, "…")
				break
			}
			dc := rs[r].Deltas[other]
			moved = append(moved, fmt.Sprintf("%s %s (%s)", rs[r].Metric, dc.Delta, dc.Verdict))
		}
		detail = append(detail, fmt.Sprintf("moved: %s — %d of the %d metrics it can move (%s) changed significantly",
			strings.Join(moved, ", "), len(cs.Moved), cs.Affected, areaWords(cs.Areas)))
	} else {
		detail = append(detail, fmt.Sprintf("none of the %d metrics it can move (%s) changed significantly", cs.Affected, areaWords(cs.Areas)))
	}
	detail = append(detail, cs.ReferenceMoved...)
	detail = append(detail, "why: "+cs.Why)
	return head, detail
}

func sideTitle(s compare.SideInfo) string {
	runs := "run"
	if len(s.RunIDs) != 1 {
		runs = "runs"
	}
	host := strings.Join(s.Hosts, ",")
	if host == "" {
		host = "?"
	}
	return fmt.Sprintf("%s (%d %s, host %s)", s.Name, len(s.RunIDs), runs, host)
}

func areaWords(areas []string) string {
	for _, a := range areas {
		if a == "all" {
			return "any workload"
		}
	}
	return strings.Join(areas, ", ")
}
