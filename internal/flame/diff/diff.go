// Package diff compares two folded profiles: it joins them into the
// differential folded format ("stack before after", as FlameGraph's
// difffolded.pl writes, which render draws as a red/blue differential
// flame graph) and ranks the functions whose share of the profile changed
// most — the table that turns "the new JDK is 13x slower" into
// "ClientHandshaker.processMessage went from 1.15% to 23.98%".
//
// Shares, not raw counts, are compared: two profiles rarely have the same
// number of samples, and a function that doubled its samples in a profile
// twice as long did not change at all.
package diff

import (
	"math"
	"slices"
	"strings"

	"github.com/perflab/perflab/internal/flame/folded"
)

// Join returns the differential profile of before and after: every stack
// of either, with Before and Count (after). With normalize, the before
// counts are scaled so both profiles have the after total, so that widths
// and colours show changes in share rather than in profile length.
func Join(before, after *folded.Profile, normalize bool) *folded.Profile {
	scale := 1.0
	if tb, ta := before.Total(), after.Total(); normalize && tb > 0 {
		scale = float64(ta) / float64(tb)
	}
	idx := make(map[string]int, len(after.Stacks)+len(before.Stacks))
	out := &folded.Profile{Diff: true, Stacks: make([]folded.Stack, 0, len(after.Stacks)+len(before.Stacks)/4)}
	for _, s := range after.Stacks {
		idx[s.Frames] = len(out.Stacks)
		out.Stacks = append(out.Stacks, folded.Stack{Frames: s.Frames, Count: s.Count})
	}
	for _, s := range before.Stacks {
		b := s.Count
		if scale != 1 {
			b = uint64(math.Round(float64(b) * scale))
		}
		if i, ok := idx[s.Frames]; ok {
			out.Stacks[i].Before += b
			continue
		}
		idx[s.Frames] = len(out.Stacks)
		out.Stacks = append(out.Stacks, folded.Stack{Frames: s.Frames, Before: b})
	}
	slices.SortFunc(out.Stacks, func(a, b folded.Stack) int { return strings.Compare(a.Frames, b.Frames) })
	return out
}

// Row is one function's share of the profile before and after, in
// percent: inclusive (stacks it is on, counted once per stack even when
// recursive) and self (stacks it is the leaf of).
type Row struct {
	Function                    string
	InclBefore, InclAfter       float64
	SelfBefore, SelfAfter       float64
	SamplesBefore, SamplesAfter uint64 // inclusive counts
	TotalBefore, TotalAfter     uint64
	Appeared, Disappeared       bool
}

// InclDelta and SelfDelta are the changes in percentage points.
func (r Row) InclDelta() float64 { return r.InclAfter - r.InclBefore }
func (r Row) SelfDelta() float64 { return r.SelfAfter - r.SelfBefore }

// score ranks rows by the larger of the two changes.
func (r Row) score() float64 { return math.Max(math.Abs(r.InclDelta()), math.Abs(r.SelfDelta())) }

// Table ranks the functions of a differential profile by how much their
// inclusive or self share changed, largest first, and returns the top n
// (all if n <= 0). Annotations (_[k], _[j], _[i]) are part of the name, so
// a kernel and a user function of the same name stay apart.
func Table(d *folded.Profile, n int) []Row {
	type acc struct{ inclB, inclA, selfB, selfA uint64 }
	fns := map[string]*acc{}
	get := func(f string) *acc {
		a := fns[f]
		if a == nil {
			a = &acc{}
			fns[f] = a
		}
		return a
	}
	var frames []string
	seen := map[string]bool{}
	for _, s := range d.Stacks {
		frames = frames[:0]
		rest := s.Frames
		for {
			i := strings.IndexByte(rest, ';')
			if i < 0 {
				frames = append(frames, rest)
				break
			}
			frames = append(frames, rest[:i])
			rest = rest[i+1:]
		}
		clear(seen)
		for _, f := range frames {
			if seen[f] {
				continue // recursion: a stack counts once toward inclusive
			}
			seen[f] = true
			a := get(f)
			a.inclB += s.Before
			a.inclA += s.Count
		}
		leaf := get(frames[len(frames)-1])
		leaf.selfB += s.Before
		leaf.selfA += s.Count
	}
	tb, ta := d.TotalBefore(), d.Total()
	share := func(v, t uint64) float64 {
		if t == 0 {
			return 0
		}
		return 100 * float64(v) / float64(t)
	}
	rows := make([]Row, 0, len(fns))
	for f, a := range fns {
		rows = append(rows, Row{
			Function:   f,
			InclBefore: share(a.inclB, tb), InclAfter: share(a.inclA, ta),
			SelfBefore: share(a.selfB, tb), SelfAfter: share(a.selfA, ta),
			SamplesBefore: a.inclB, SamplesAfter: a.inclA, TotalBefore: tb, TotalAfter: ta,
			Appeared: a.inclB == 0 && a.inclA > 0, Disappeared: a.inclA == 0 && a.inclB > 0,
		})
	}
	slices.SortFunc(rows, func(x, y Row) int {
		if c := -cmpFloat(x.score(), y.score()); c != 0 {
			return c
		}
		return strings.Compare(x.Function, y.Function)
	})
	if n > 0 && len(rows) > n {
		rows = rows[:n]
	}
	return rows
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
