package compare

import "github.com/perflab/perflab/internal/knowledge"

// FactRank is how well one differing fact explains a metric's move, by the
// rule explain ranks causes with (kind, knowledge, direction). fleet ranks
// the facts that separate outlier hosts with it, and history the settings
// at a change point, so every report names the same fact first.
type FactRank struct {
	Kind CauseKind // setting, identity, or state ("" when not a snapshot fact)
	// Knob is the knowledge entry that covers the fact ("" for none).
	Knob string
	// Affects: the entry's areas include the metric's.
	Affects bool
	// Fits: the entry's known direction agrees with the move (or the
	// direction is unknown); false when it contradicts it.
	Fits   bool
	Weight int
}

// RankFact explains the difference of path from before to after for a
// metric (probe, metric, unit) that moved by verdict (Better, Worse, or ""
// when unknown).
func RankFact(path, before, after, probe, metric, unit string, moved Verdict) FactRank {
	r := FactRank{Kind: factKind(path), Fits: true}
	e := knowledge.Lookup(path)
	if e == nil {
		return r
	}
	r.Knob, r.Weight = e.ID, e.Weight
	r.Affects = knowledge.Affects(e.Areas, knowledge.AreasOf(probe, metric, unit))
	if want := directionOf(Diff{Path: path, Before: before, After: after}); want != "" && moved != "" && want != moved {
		r.Fits = false
	}
	return r
}

// score orders explanations: a known knob that can move the metric in the
// way it moved first, then a known knob that can move it, then settings
// before identity before state, then the knob's weight.
func (r FactRank) score() int {
	s := 0
	if r.Knob != "" && r.Affects && r.Fits {
		s += 1000
	}
	if r.Knob != "" && r.Affects {
		s += 100
	}
	switch r.Kind {
	case KindSetting:
		s += 20
	case KindIdentity:
		s += 10
	}
	return s + r.Weight
}

// Better reports whether r explains its metric better than o.
func (r FactRank) Better(o FactRank) bool { return r.score() > o.score() }

// Same reports whether r and o explain equally well.
func (r FactRank) Same(o FactRank) bool { return r.score() == o.score() }
