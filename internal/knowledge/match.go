package knowledge

import (
	"strings"

	"github.com/perflab/perflab/internal/snapshot/factpath"
)

// MatchPrefix reports whether pattern matches path or a prefix of it, on
// segment boundaries: "memory.thp" matches "memory.thp.enabled" but not
// "memory.thpx". In the pattern, "*" stands for one whole segment, "sched_*"
// for a segment starting with "sched_", and "[*]" for any array key; the
// path's own array keys ("[eth0]") may contain dots. The syntax is the fact
// path catalogue's (factpath.Match), which checks every pattern here.
func MatchPrefix(pattern, path string) bool { return factpath.Match(pattern, path) }

// segments splits a pattern as factpath does.
func segments(p string) []string { return factpath.Segments(p) }

// Normalize replaces array keys with [*] so that patterns can name any
// element: "net.interfaces[eth0].mtu" → "net.interfaces[*].mtu".
func Normalize(path string) string {
	var b strings.Builder
	depth := 0
	for _, r := range path {
		switch {
		case r == '[':
			if depth == 0 {
				b.WriteString("[*]")
			}
			depth++
		case r == ']':
			if depth > 0 {
				depth--
			}
		case depth == 0:
			b.WriteRune(r)
		}
	}
	return b.String()
}
