package compare

import (
	"sort"
	"strings"

	"github.com/perflab/perflab/internal/snapshot"
)

// Leaf is one fact of one snapshot at a dotted path, as DiffSnapshots
// renders it. A fleet store keeps each snapshot's leaves when it is saved
// (docs/fleet-scale.md), so that a report over ten thousand hosts diffs
// small sorted lists instead of decoding and walking every snapshot.
type Leaf struct {
	Path  string `json:"p"`
	Value string `json:"v"`
}

// objectList marks a non-empty array of objects: its elements' facts are
// leaves of their own, and an empty array at the same path in another
// snapshot is not a difference at that path (DiffSnapshots walks the
// elements instead). It is never shown.
const objectList = "\x00objects"

// Leaves flattens s as DiffSnapshots walks it, sorted by path: every leaf
// but those of volatile facts, so that DiffLeaves(Leaves(a), Leaves(b))
// equals DiffSnapshots(a, b) (TestDiffLeavesEqualsDiffSnapshots). keep,
// if not nil, chooses the paths kept (a fleet report keeps settings and
// identity).
func Leaves(s *snapshot.Snapshot, keep func(path string) bool) []Leaf {
	if s == nil {
		return nil
	}
	var out []Leaf
	leaves("", tree(s), keep, &out)
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// leaves is walk with nothing on the reference side.
func leaves(path string, v any, keep func(string) bool, out *[]Leaf) {
	if path != "" && volatile(path) {
		return
	}
	add := func(val string) {
		if keep == nil || keep(path) {
			*out = append(*out, Leaf{Path: path, Value: val})
		}
	}
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			leaves(join(path, k), e, keep, out)
		}
	case []any:
		if isObjects(x) && len(x) > 0 {
			add(objectList)
			for k, e := range byIdentity(x) {
				leaves(path+"["+k+"]", e, keep, out)
			}
			return
		}
		add(list(x))
	default:
		if s := scalar(v); s != absent {
			add(s)
		}
	}
}

// DiffLeaves is DiffSnapshots of the two snapshots a and b are the Leaves
// of (with the same keep), sorted by path.
func DiffLeaves(a, b []Leaf) []Diff {
	var out []Diff
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		var p, va, vb string
		switch {
		case j == len(b) || (i < len(a) && a[i].Path < b[j].Path):
			p, va, vb = a[i].Path, a[i].Value, absent
			i++
		case i == len(a) || b[j].Path < a[i].Path:
			p, va, vb = b[j].Path, absent, b[j].Value
			j++
		default:
			p, va, vb = a[i].Path, a[i].Value, b[j].Value
			i++
			j++
		}
		if va == vb || va == objectList || vb == objectList {
			continue
		}
		out = append(out, Diff{Path: p, Before: va, After: vb})
	}
	return out
}

// sortedLeaves reports whether l is sorted by path without repeats, as
// DiffLeaves needs (leaves read back from a store are checked).
func sortedLeaves(l []Leaf) bool {
	for i := 1; i < len(l); i++ {
		if strings.Compare(l[i-1].Path, l[i].Path) >= 0 {
			return false
		}
	}
	return true
}

// SortLeaves sorts l by path for DiffLeaves and drops repeated paths (a
// document written by hand or damaged), keeping the first.
func SortLeaves(l []Leaf) []Leaf {
	if sortedLeaves(l) {
		return l
	}
	sort.SliceStable(l, func(i, j int) bool { return l[i].Path < l[j].Path })
	out := l[:0]
	for i, x := range l {
		if i > 0 && x.Path == out[len(out)-1].Path {
			continue
		}
		out = append(out, x)
	}
	return out
}
