package compare

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/hostfs"
	"github.com/perflab/perflab/internal/snapshot"
)

// TestDiffLeavesEqualsDiffSnapshots: a fleet store keeps each snapshot's
// Leaves and a report diffs them; that must be the diff of the snapshots
// themselves, on real machines' trees (pairs of different hardware,
// kernels and settings) and on the array shapes the walk treats apart.
func TestDiffLeavesEqualsDiffSnapshots(t *testing.T) {
	var snaps []*snapshot.Snapshot
	for _, root := range []string{"kvm", "metal", "kunpeng"} {
		fs, err := hostfs.New(filepath.Join("..", "..", "testdata", "roots", root))
		if err != nil {
			t.Fatal(err)
		}
		snaps = append(snaps, collectTree(t, fs))
	}
	// Shapes: an object list emptied, gone, or grown; a scalar list
	// emptied; a setting changed; a map gone.
	edited := func(f func(s *snapshot.Snapshot)) *snapshot.Snapshot {
		data, err := json.Marshal(snaps[0])
		if err != nil {
			t.Fatal(err)
		}
		s, err := snapshot.Unmarshal(data)
		if err != nil {
			t.Fatal(err)
		}
		f(s)
		return s
	}
	snaps = append(snaps,
		edited(func(s *snapshot.Snapshot) { s.Net.Interfaces = s.Net.Interfaces[:0] }),
		edited(func(s *snapshot.Snapshot) { s.Net.Interfaces = nil; s.Memory.THP.Enabled = "always" }),
		edited(func(s *snapshot.Snapshot) { s.Block = nil; s.Sysctl = nil }),
		edited(func(s *snapshot.Snapshot) { s.Kernel.Cmdline = "" }),
	)
	keepSome := func(p string) bool { return !strings.HasPrefix(p, "sysctl.") }
	pairs := 0
	for i, a := range snaps {
		for j, b := range snaps {
			if i == j {
				continue
			}
			want := DiffSnapshots(a, b)
			if got := DiffLeaves(Leaves(a, nil), Leaves(b, nil)); !reflect.DeepEqual(got, want) {
				t.Fatalf("snapshots %d→%d: DiffLeaves gives %d differences, DiffSnapshots %d\nfirst of each: %v / %v", i, j, len(got), len(want), first(got), first(want))
			}
			var kept []Diff
			for _, d := range want {
				if keepSome(d.Path) {
					kept = append(kept, d)
				}
			}
			if got := DiffLeaves(Leaves(a, keepSome), Leaves(b, keepSome)); !reflect.DeepEqual(got, kept) {
				t.Fatalf("snapshots %d→%d with keep: %d differences, want %d", i, j, len(got), len(kept))
			}
			if len(want) > 0 {
				pairs++
			}
		}
	}
	if pairs < 20 {
		t.Fatalf("only %d pairs of snapshots differ: the test proves little", pairs)
	}
}

func TestSortLeaves(t *testing.T) {
	l := SortLeaves([]Leaf{{"b", "1"}, {"a", "2"}, {"b", "3"}})
	if !reflect.DeepEqual(l, []Leaf{{"a", "2"}, {"b", "1"}}) {
		t.Fatalf("SortLeaves = %v", l)
	}
}

func first(d []Diff) any {
	if len(d) == 0 {
		return nil
	}
	return d[0]
}
