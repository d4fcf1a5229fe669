package compare

import (
	"fmt"
	"math"
	"strings"
)

// Headline is the first thing a comparison says (issue 12, point 5): what
// changed in the configuration, how far the host itself drifted, and how
// many metrics changed beyond that drift. Never "44 worse" for drift.
//
//	no setting changed; the host ran 6.1% slower (cpu reference); 2 metrics changed beyond drift (1 worse, 1 better); 40 inconclusive: one run a side cannot separate a change from drift (--repeat 3)
func Headline(c *Comparison, p Pair) string {
	var parts []string
	var settings []string
	for _, d := range p.Config {
		if k := factKind(d.Path); k == KindSetting || k == KindIdentity {
			settings = append(settings, d.Path)
		}
	}
	switch n := len(settings); {
	case n == 0:
		parts = append(parts, "no setting changed")
	case n <= 3:
		parts = append(parts, fmt.Sprintf("%d %s (%s)", n, plural(n, "setting differs", "settings differ"), strings.Join(settings, ", ")))
	default:
		parts = append(parts, fmt.Sprintf("%d settings differ", n))
	}
	for _, h := range p.HostDrift {
		if h.Significant && len(h.ConfoundedBy) > 0 {
			parts = append(parts, fmt.Sprintf("the %s reference moved with it (%+.1f%%: %s)", h.Kind, h.SpeedPct, strings.Join(h.ConfoundedBy, ", ")))
		}
	}
	if h, ok := largestDrift(p.HostDrift); ok {
		dir := "faster"
		if h.SpeedPct < 0 {
			dir = "slower"
		}
		parts = append(parts, fmt.Sprintf("the host ran %.1f%% %s (%s reference)", math.Abs(h.SpeedPct), dir, h.Kind))
	}
	worse, better, drift := p.Beyond()
	beyond := "changed"
	if drift > 0 || len(p.HostDrift) > 0 {
		beyond = "changed beyond drift"
	}
	switch worse + better {
	case 0:
		parts = append(parts, "no metric "+beyond)
	default:
		var wb []string
		if worse > 0 {
			wb = append(wb, fmt.Sprintf("%d worse", worse))
		}
		if better > 0 {
			wb = append(wb, fmt.Sprintf("%d better", better))
		}
		parts = append(parts, fmt.Sprintf("%d %s %s (%s)", worse+better, plural(worse+better, "metric", "metrics"), beyond, strings.Join(wb, ", ")))
	}
	if drift > 0 {
		parts = append(parts, fmt.Sprintf("%d moved with the host", drift))
	}
	if n := p.Counts[Inconclusive]; n > 0 {
		why := ""
		for _, d := range p.Deltas {
			if d.Verdict == Inconclusive && d.Drift.Source == "none" {
				why = ": one run a side cannot separate a change from the host's drift (--repeat 3, or earlier runs of the same probe on these hosts)"
				break
			}
		}
		parts = append(parts, fmt.Sprintf("%d inconclusive%s", n, why))
	}
	return strings.Join(parts, "; ")
}

// largestDrift is the significant reference with the largest move that no
// differing setting accounts for.
func largestDrift(hd []HostDrift) (HostDrift, bool) {
	var best HostDrift
	found := false
	for _, h := range hd {
		if h.Significant && len(h.ConfoundedBy) == 0 && (!found || math.Abs(h.SpeedPct) > math.Abs(best.SpeedPct)) {
			best, found = h, true
		}
	}
	return best, found
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// Beyond counts the worse and better verdicts that host drift does not
// explain, and those it does.
func (p Pair) Beyond() (worse, better, drift int) {
	for _, d := range p.Deltas {
		switch {
		case d.HostDrift && (d.Verdict == Better || d.Verdict == Worse):
			drift++
		case d.Verdict == Worse:
			worse++
		case d.Verdict == Better:
			better++
		}
	}
	return worse, better, drift
}
