package profile

import (
	"slices"
	"strings"

	"github.com/perflab/perflab/internal/flame/folded"
	"github.com/perflab/perflab/internal/flame/render"
)

// Hot is a stack or function and its share of the profile in percent.
type Hot struct {
	Name  string
	Count uint64
	Share float64
}

// HottestStacks returns the n stacks with the largest counts.
func HottestStacks(p *folded.Profile, n int) []Hot {
	total := p.Total()
	out := make([]Hot, 0, len(p.Stacks))
	for _, s := range p.Stacks {
		out = append(out, Hot{Name: s.Frames, Count: s.Count, Share: share(s.Count, total)})
	}
	return top(out, n)
}

// HottestFunctions returns the n functions with the most self time (the
// leaves of the stacks), annotations removed.
func HottestFunctions(p *folded.Profile, n int) []Hot {
	total := p.Total()
	self := map[string]uint64{}
	for _, s := range p.Stacks {
		leaf := s.Frames[strings.LastIndexByte(s.Frames, ';')+1:]
		name, _ := render.SplitAnnotation(leaf)
		self[name] += s.Count
	}
	out := make([]Hot, 0, len(self))
	for k, v := range self {
		out = append(out, Hot{Name: k, Count: v, Share: share(v, total)})
	}
	return top(out, n)
}

// Abbrev shortens a folded stack for a terminal line: annotations
// removed, frames joined with " ← " from the leaf, at most max runes.
func Abbrev(frames string, max int) string {
	parts := strings.Split(frames, ";")
	for i, p := range parts {
		parts[i], _ = render.SplitAnnotation(p)
	}
	slices.Reverse(parts)
	s := strings.Join(parts, " ← ")
	if r := []rune(s); len(r) > max {
		s = string(r[:max-1]) + "…"
	}
	return s
}

func top(h []Hot, n int) []Hot {
	slices.SortFunc(h, func(a, b Hot) int {
		if a.Count != b.Count {
			if a.Count > b.Count {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Name, b.Name)
	})
	if n > 0 && len(h) > n {
		h = h[:n]
	}
	return h
}

func share(v, t uint64) float64 {
	if t == 0 {
		return 0
	}
	return 100 * float64(v) / float64(t)
}
