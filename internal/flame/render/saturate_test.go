package render

import (
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/flame/folded"
)

func TestTreeWidthsSaturate(t *testing.T) {
	p, err := folded.Read(strings.NewReader("main;a 9223372036854775807\nmain;b 9223372036854775807\n"))
	if err != nil {
		t.Fatal(err)
	}
	tr := Build(p, false, false)
	var walk func(n *Node)
	walk = func(n *Node) {
		if int64(n.Value) < 0 || int64(n.Self) < 0 {
			t.Errorf("frame %s: value %d self %d wrap negative", n.Name, n.Value, n.Self)
		}
		for _, c := range n.Children {
			walk(c)
		}
	}
	walk(tr.Root)
}
