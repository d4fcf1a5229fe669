package bench

import (
	"fmt"
	"strconv"

	"github.com/perflab/perflab/internal/numfmt"
	"github.com/perflab/perflab/internal/run"
	"github.com/perflab/perflab/internal/stats"
)

// CurveNotes reads the concurrency sweeps of a run (metrics named
// "<series>.c<level>", see internal/probe/tools/sweep.go) and says, for
// each higher-is-better curve, at which level it peaks and whether and
// where it falls after the peak — seed 000's finding (45k TPS at 20
// connections, 30k at 100) in one line. A level counts as a fall when its
// median is more than 10% below the peak's and, where both have a 95% CI,
// the intervals do not overlap: the run's spread, not one sample, decides.
func CurveNotes(r *run.Run) []string {
	type point struct {
		x float64
		s stats.Summary
	}
	var order []string
	curves := map[string][]point{}
	units := map[string]string{}
	for _, m := range r.Metrics {
		if m.Better != run.Higher || m.Series == "" || m.Name != m.Series+".c"+strconv.FormatFloat(m.X, 'f', -1, 64) {
			continue
		}
		s := stats.Summarize(r.Values(m.Name))
		if s.N == 0 {
			continue
		}
		if _, ok := curves[m.Series]; !ok {
			order = append(order, m.Series)
		}
		curves[m.Series] = append(curves[m.Series], point{m.X, s})
		units[m.Series] = m.Unit + "|" + m.XUnit
	}
	var notes []string
	for _, name := range order {
		pts := curves[name]
		if len(pts) < 2 {
			continue
		}
		peak := 0
		for i, p := range pts {
			if p.s.Median > pts[peak].s.Median {
				peak = i
			}
		}
		var unit, xunit string
		if u, ok := units[name]; ok {
			for i := 0; i < len(u); i++ {
				if u[i] == '|' {
					unit, xunit = u[:i], u[i+1:]
				}
			}
		}
		pk := pts[peak]
		note := fmt.Sprintf("curve %s: peak %s %s at %g %s", name, numfmt.Num(pk.s.Median), unit, pk.x, xunit)
		fell := false
		var noisy *point
		for i, p := range pts[peak+1:] {
			drop := 1 - p.s.Median/pk.s.Median
			if drop <= 0.10 {
				continue
			}
			if p.s.HasCI && pk.s.HasCI && p.s.Hi >= pk.s.Lo {
				if noisy == nil {
					noisy = &pts[peak+1+i]
				}
				continue
			}
			note += fmt.Sprintf("; falls to %s %s (−%.0f%%) at %g %s", numfmt.Num(p.s.Median), unit, 100*drop, p.x, xunit)
			fell = true
			break
		}
		switch {
		case fell:
		case noisy != nil:
			note += fmt.Sprintf("; %.0f%% lower at %g %s, but within the runs' spread (the 95%% CIs overlap): not a fall yet",
				100*(1-noisy.s.Median/pk.s.Median), noisy.x, xunit)
		case peak == len(pts)-1:
			note += " (the highest level measured: no fall yet)"
		default:
			note += fmt.Sprintf("; no fall beyond 10%% up to %g %s", pts[len(pts)-1].x, xunit)
		}
		notes = append(notes, note)
	}
	return notes
}
