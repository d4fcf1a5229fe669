package compare

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/perflab/perflab/internal/knowledge"
	"github.com/perflab/perflab/internal/run"
)

// Cause is a difference between the sides that perflab knows can move
// some of the compared metrics.
type Cause struct {
	Knob   string   `json:"knob"` // knowledge entry id
	Title  string   `json:"title"`
	Why    string   `json:"why"`
	Areas  []string `json:"areas"`
	Source string   `json:"source"` // config, run, monitor, hostnoise or hostdrift
	// Kind is setting, identity or host-drift (kinds.go): what the user can
	// do about it.
	Kind CauseKind `json:"kind"`
	// Diffs are the differing facts behind this cause (a knob such as RPS
	// can differ on many queues at once).
	Diffs []Diff `json:"diffs"`
	// Affected counts the compared metrics in the knob's areas; Moved
	// lists the rows (Comparison.Metrics indices) of those that changed
	// significantly (better or worse).
	Affected int   `json:"affected"`
	Moved    []int `json:"moved"`
	Weight   int   `json:"weight"`
	// Score is Weight × Moved/Affected: a knob is more likely the cause
	// when more of the metrics it should move did move.
	Score float64 `json:"score"`
	// ReferenceMoved says which host-drift references this setting moved
	// too ("the syscall reference moved too: mitigations change …"):
	// their movement was counted for the setting, not as host drift.
	ReferenceMoved []string `json:"reference_moved,omitempty"`
}

// Supported reports whether metrics this cause can move actually moved.
func (c Cause) Supported() bool { return len(c.Moved) > 0 }

// explain fills a pair's config diff, monitor diff and likely causes
// (host noise, hostnoise.go, is evidence for the causes only).
func explain(c *Comparison, p *Pair, base, other Side, opt Options) {
	sa := base.Snapshots[c.Sides[0].SnapshotID]
	sb := other.Snapshots[c.Sides[p.Other].SnapshotID]
	p.Config = append(DiffRuns(base.Runs, other.Runs), DiffSnapshots(sa, sb)...)
	p.Monitor = DiffMonitor(base.Runs, other.Runs)

	var diffs []sourced
	for _, d := range p.Config {
		src := "config"
		if strings.HasPrefix(d.Path, "run[") {
			src = "run"
		}
		if factKind(d.Path) == kindState {
			// Free memory, runtime mounts, dirty pages: what the host was
			// doing, not what it is. Conditions, never causes.
			p.Conditions = append(p.Conditions, d)
			continue
		}
		diffs = append(diffs, sourced{d, src, directionOf(d)})
	}
	for _, m := range p.Monitor {
		if m.Notable {
			diffs = append(diffs, sourced{Diff{Path: "monitor." + m.Field,
				Before: fmt.Sprintf("%.4g %s", m.Base, m.Unit), After: fmt.Sprintf("%.4g %s", m.Other, m.Unit)}, "monitor", explains(m)})
		}
	}
	diffs = append(diffs, hostNoiseDiffs(base.Runs, other.Runs)...)
	notes := confound(p, diffs, smallPages(base.Runs) && smallPages(other.Runs))
	c.finish(p, opt)
	diffs = append(diffs, hostDriftDiffs(p.HostDrift)...)
	p.Causes = rankCauses(c, p, diffs)
	for i := range p.Causes {
		p.Causes[i].ReferenceMoved = notes[p.Causes[i].Knob]
	}
}

// confound applies the knowledge base's reference confounders
// (knowledge.ReferenceConfounders): a reference that moved while a
// setting that moves it differs is that setting's doing, not host drift.
// It marks those references ConfoundedBy and returns, per knowledge entry,
// the sentences the report adds to the setting's cause.
func confound(p *Pair, diffs []sourced, small bool) map[string][]string {
	notes := map[string][]string{}
	for i := range p.HostDrift {
		h := &p.HostDrift[i]
		if !h.Significant {
			continue
		}
		seen := map[string]bool{}
		for _, d := range diffs {
			if d.source != "config" || factKind(d.Path) != KindSetting && factKind(d.Path) != KindIdentity {
				continue
			}
			e := knowledge.Lookup(d.Path)
			if e == nil || seen[e.ID] {
				continue
			}
			cf, ok := knowledge.MovesReference(e.ID, string(h.Kind), small)
			if !ok {
				continue
			}
			seen[e.ID] = true
			h.ConfoundedBy = append(h.ConfoundedBy, e.ID)
			notes[e.ID] = append(notes[e.ID], fmt.Sprintf("the %s reference moved too (%+.1f%%): %s", h.Kind, h.SpeedPct, cf.Why))
		}
	}
	return notes
}

// smallPages: every reference reading of the runs used a memory buffer
// fixed to base pages.
func smallPages(runs []*run.Run) bool {
	for _, r := range runs {
		if r.Noise == nil {
			continue
		}
		for _, nr := range []*run.NoiseReading{r.Noise.Before, r.Noise.After} {
			if nr != nil && nr.Reference != nil && !nr.Reference.MemSmallPages {
				return false
			}
		}
	}
	return true
}

type sourced struct {
	Diff
	source string
	// explains is the verdict this difference can account for: a host
	// that was busier during the other side's runs explains metrics that
	// got worse, not ones that got better. "" means either (a setting can
	// move a metric both ways).
	explains Verdict
}

// kindOfSourced: monitor, host-noise and host-drift evidence is the host
// drifting; snapshot and run differences are settings or identity.
func kindOfSourced(d sourced) CauseKind {
	switch d.source {
	case "monitor", "hostnoise", "hostdrift":
		return KindHostDrift
	}
	return factKind(d.Path)
}

// directionOf is the verdict a setting difference can account for, where
// the knowledge base knows which way the knob moves performance ("" for
// either).
func directionOf(d Diff) Verdict {
	e := knowledge.Lookup(d.Path)
	if e == nil {
		return ""
	}
	switch f := e.Faster(d.Path, d.Before, d.After); {
	case f > 0:
		return Better
	case f < 0:
		return Worse
	}
	return ""
}

// explains is the verdict a notable monitor difference can account for.
func explains(m MonDelta) Verdict {
	more := m.Other > m.Base
	if m.Field == "cpu_mhz" {
		more = !more // a faster clock is less of a handicap
	}
	if more {
		return Worse
	}
	return Better
}

// rankCauses groups differences by knowledge entry and ranks them: causes
// whose affected metrics moved significantly come first, then by score
// (weight × the share of affected metrics that moved, so a knob whose
// other metrics stayed put is less suspect), weight, and name. Differences
// perflab knows nothing about stay in the config diff only.
func rankCauses(c *Comparison, p *Pair, diffs []sourced) []Cause {
	byKnob := map[string]*Cause{}
	entries := map[string]*knowledge.Entry{}
	dirs := map[string]map[Verdict]bool{} // what each cause's differences can explain
	var order []string
	for _, d := range diffs {
		e := knowledge.Lookup(d.Path)
		if e == nil {
			continue
		}
		cause, ok := byKnob[e.ID]
		if !ok {
			cause = &Cause{Knob: e.ID, Title: e.Title, Why: e.Why, Source: d.source, Weight: e.Weight, Kind: kindOfSourced(d)}
			for _, a := range e.Areas {
				cause.Areas = append(cause.Areas, string(a))
			}
			byKnob[e.ID], entries[e.ID] = cause, e
			dirs[e.ID] = map[Verdict]bool{}
			order = append(order, e.ID)
		}
		cause.Diffs = append(cause.Diffs, d.Diff)
		dirs[e.ID][d.explains] = true
	}
	for _, id := range order {
		cause, e := byKnob[id], entries[id]
		// A cause whose differences all point one way (the host was busier)
		// is supported only by metrics that moved that way.
		want := Verdict("")
		if len(dirs[id]) == 1 {
			for v := range dirs[id] {
				want = v
			}
		}
		for _, dl := range p.Deltas {
			row := c.Metrics[dl.Row]
			if !knowledge.Affects(e.Areas, knowledge.AreasOf(row.Probe, row.Metric, row.Unit)) {
				continue
			}
			cause.Affected++
			// A change the host's own drift explains supports only the
			// host-drift causes, not a setting.
			if dl.HostDrift && cause.Kind != KindHostDrift {
				continue
			}
			if (dl.Verdict == Better || dl.Verdict == Worse) && (want == "" || dl.Verdict == want) {
				cause.Moved = append(cause.Moved, dl.Row)
			}
		}
	}
	out := make([]Cause, 0, len(order))
	for _, id := range order {
		cause := byKnob[id]
		if cause.Affected == 0 {
			continue // it cannot explain anything that was compared
		}
		cause.Score = float64(cause.Weight) * float64(len(cause.Moved)) / float64(cause.Affected)
		out = append(out, *cause)
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Supported() != b.Supported() {
			return a.Supported()
		}
		if a.Score != b.Score {
			return a.Score > b.Score
		}
		if a.Weight != b.Weight {
			return a.Weight > b.Weight
		}
		if len(a.Moved) != len(b.Moved) {
			return len(a.Moved) > len(b.Moved)
		}
		return a.Knob < b.Knob
	})
	return out
}

// DiffRuns compares how the runs were made, probe by probe: parameters,
// CPU placement, tool and version, using the first run of each probe that
// both sides have.
func DiffRuns(base, other []*run.Run) []Diff {
	first := func(runs []*run.Run) map[string]*run.Run {
		m := map[string]*run.Run{}
		for _, r := range runs {
			if m[r.Probe] == nil {
				m[r.Probe] = r
			}
		}
		return m
	}
	fa, fb := first(base), first(other)
	var probes []string
	for p := range fa {
		if fb[p] != nil {
			probes = append(probes, p)
		}
	}
	sort.Strings(probes)
	var out []Diff
	add := func(path, a, b string) {
		if a != b {
			out = append(out, Diff{Path: path, Before: orAbsent(a), After: orAbsent(b)})
		}
	}
	for _, probe := range probes {
		a, b := fa[probe], fb[probe]
		pre := "run[" + probe + "]"
		keys := map[string]bool{}
		for k := range a.Params {
			keys[k] = true
		}
		for k := range b.Params {
			keys[k] = true
		}
		for _, k := range slices.Sorted(maps.Keys(keys)) {
			va, oka := a.Params[k]
			vb, okb := b.Params[k]
			if !oka {
				va = absent
			}
			if !okb {
				vb = absent
			}
			add(pre+".params."+k, va, vb)
		}
		add(pre+".cpus", a.CPUs, b.CPUs)
		add(pre+".tool", a.Tool, b.Tool)
		add(pre+".tool_version", a.ToolVersion, b.ToolVersion)
	}
	return out
}

func orAbsent(s string) string {
	if s == "" {
		return absent
	}
	return s
}
