package fold

import (
	"encoding/binary"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestStacksSortedAsText: the id-first comparison and the two-goroutine
// build sort stacks exactly as their texts sort, summing stacks whose
// texts are equal, including the cases that defeat comparing components
// alone: a component that is a prefix of another ("a" and "a.b", where
// ';' sorts after '.'), a stack that is a prefix of another, and a
// segment holding ';' (an inline chain) that spells two components.
func TestStacksSortedAsText(t *testing.T) {
	segs := []string{"a", "a.b", "a;b_[i]", "b_[i]", "b", "ab", "a b", "a0", "a:", "a<", "", "z"}
	roots := []string{"java", "java-1", "java.x", "j"}
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 200 {
		f := newFolder(Options{}, 0)
		for _, r := range roots {
			f.pnames[r] = uint32(len(f.pnameOf))
			f.pnameOf = append(f.pnameOf, []byte(r))
		}
		want := map[string]uint64{}
		for range 1 + rng.IntN(60) {
			root := uint32(rng.IntN(len(roots)))
			k := binary.LittleEndian.AppendUint32(nil, root)
			var leafFirst []string
			for range rng.IntN(6) {
				s := segs[rng.IntN(len(segs))]
				k = binary.LittleEndian.AppendUint32(k, f.intern([]byte(s)))
				leafFirst = append(leafFirst, s)
			}
			if len(k) == 4 {
				continue // a sample has at least one frame
			}
			slices.Reverse(leafFirst)
			text := roots[root] + ";" + strings.Join(leafFirst, ";")
			n := uint64(1 + rng.IntN(5))
			f.count(k, n)
			want[text] += n
		}
		for _, parallel := range []bool{false, true} {
			got := f.stacks(parallel)
			if len(got) != len(want) {
				t.Fatalf("round %d (parallel %v): %d stacks, want %d", round, parallel, len(got), len(want))
			}
			for i, s := range got {
				if i > 0 && got[i-1].Frames >= s.Frames {
					t.Fatalf("round %d (parallel %v): %q before %q", round, parallel, got[i-1].Frames, s.Frames)
				}
				if want[s.Frames] != s.Count {
					t.Fatalf("round %d (parallel %v): %q counted %d, want %d", round, parallel, s.Frames, s.Count, want[s.Frames])
				}
			}
		}
	}
}
