package render

import (
	"slices"
	"strings"

	"github.com/perflab/perflab/internal/flame/folded"
)

// Node is one frame of the flame graph: a function at one position in the
// call tree. Its width is Value; children are ordered by name, as in every
// flame graph, so that the same code paths sit at the same place in two
// graphs being compared.
type Node struct {
	Name     string // as folded, with any _[k]/_[j]/_[i] annotation
	Value    uint64 // inclusive count (the after count in a diff)
	Self     uint64
	Delta    int64 // diff only: change of this frame's own (self) count
	Children []*Node

	index map[string]*Node // child lookup once there are many children
}

// Tree is a built flame graph.
type Tree struct {
	Root     *Node
	Diff     bool
	MaxDelta int64 // largest |Delta|, for colour scaling
	Depth    int   // deepest frame (root children are depth 1)
	Scale    int   // counts are in units of 10^-Scale (folded.Profile.Scale)
}

func (n *Node) child(name string) *Node {
	if n.index != nil {
		if c := n.index[name]; c != nil {
			return c
		}
	} else {
		for _, c := range n.Children {
			if c.Name == name {
				return c
			}
		}
	}
	c := &Node{Name: name}
	n.Children = append(n.Children, c)
	if n.index != nil {
		n.index[name] = c
	} else if len(n.Children) > 16 {
		n.index = make(map[string]*Node, 32)
		for _, x := range n.Children {
			n.index[x.Name] = x
		}
	}
	return c
}

// Build makes the tree of a folded profile. reverse puts each stack's leaf
// at the root ("which callers lead to this function"). In a differential
// profile widths are the after counts and each frame's Delta is the change
// of its self count (after - before), negated with negate.
func Build(p *folded.Profile, reverse, negate bool) *Tree {
	t := &Tree{Root: &Node{Name: "all"}, Diff: p.Diff, Scale: p.Scale}
	var frames []string
	for _, s := range p.Stacks {
		frames = splitFrames(frames[:0], s.Frames, reverse)
		n := t.Root
		n.Value = folded.Add(n.Value, s.Count)
		for _, f := range frames {
			n = n.child(f)
			n.Value = folded.Add(n.Value, s.Count)
		}
		n.Self = folded.Add(n.Self, s.Count)
		if p.Diff {
			d := int64(min(s.Count, folded.MaxCount)) - int64(min(s.Before, folded.MaxCount))
			if negate {
				d = -d
			}
			n.Delta += d
		}
		if len(frames) > t.Depth {
			t.Depth = len(frames)
		}
	}
	t.Root.finish(t)
	return t
}

func splitFrames(dst []string, s string, reverse bool) []string {
	for {
		i := strings.IndexByte(s, ';')
		if i < 0 {
			dst = append(dst, s)
			break
		}
		dst = append(dst, s[:i])
		s = s[i+1:]
	}
	if reverse {
		slices.Reverse(dst)
	}
	return dst
}

// finish sorts children by name, drops lookup maps and finds MaxDelta.
func (n *Node) finish(t *Tree) {
	n.index = nil
	if d := abs(n.Delta); d > t.MaxDelta {
		t.MaxDelta = d
	}
	slices.SortFunc(n.Children, func(a, b *Node) int { return strings.Compare(a.Name, b.Name) })
	for _, c := range n.Children {
		c.finish(t)
	}
}

func abs(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

// Kind is what an annotation says a frame is.
type Kind uint8

const (
	User Kind = iota
	Kernel
	JIT
	Inlined
)

// SplitAnnotation separates the folder's _[k]/_[j]/_[i] suffix from a name.
func SplitAnnotation(name string) (string, Kind) {
	if len(name) < 4 || name[len(name)-4] != '_' || name[len(name)-3] != '[' || name[len(name)-1] != ']' {
		return name, User
	}
	switch name[len(name)-2] {
	case 'k':
		return name[:len(name)-4], Kernel
	case 'j':
		return name[:len(name)-4], JIT
	case 'i':
		return name[:len(name)-4], Inlined
	}
	return name, User
}
