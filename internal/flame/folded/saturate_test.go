package folded

import (
	"strings"
	"testing"
)

// TestCountsSaturate: two counts whose sum passes int64 saturate instead
// of wrapping into a negative frame.
func TestCountsSaturate(t *testing.T) {
	p, err := Read(strings.NewReader("main;a 9223372036854775807\nmain;b 9223372036854775807\nmain;a 5\n"))
	if err != nil {
		t.Fatal(err)
	}
	if tot := p.Total(); tot != MaxCount {
		t.Errorf("Total = %d, want it saturated at %d", tot, uint64(MaxCount))
	}
	p.Sort()
	for _, s := range p.Stacks {
		if int64(s.Count) < 0 {
			t.Errorf("stack %s count %d wraps negative", s.Frames, s.Count)
		}
	}
	if Add(MaxCount, 1) != MaxCount || Add(1<<63+5, 1) != MaxCount || Add(2, 3) != 5 {
		t.Error("Add does not saturate")
	}
}
