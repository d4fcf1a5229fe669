package knowledge

import "strings"

// MatchPrefix reports whether pattern matches path or a prefix of it, on
// segment boundaries: "memory.thp" matches "memory.thp.enabled" but not
// "memory.thpx". In the pattern, "*" stands for one whole segment, "sched_*"
// for a segment starting with "sched_", and "[*]" for any array key; the path's own array keys ("[eth0]") may
// contain dots.
func MatchPrefix(pattern, path string) bool {
	ps, xs := segments(pattern), segments(Normalize(path))
	if len(ps) > len(xs) {
		return false
	}
	for i, p := range ps {
		switch {
		case p == "*" || p == xs[i]:
		case len(p) > 1 && strings.HasSuffix(p, "*") && strings.HasPrefix(xs[i], p[:len(p)-1]):
		default:
			return false
		}
	}
	return true
}

// segments splits on dots and before "[*]", so "a[*].b" is a, [*], b.
func segments(p string) []string {
	var out []string
	for _, s := range strings.Split(p, ".") {
		for {
			i := strings.Index(s, "[*]")
			if i < 0 {
				break
			}
			if i > 0 {
				out = append(out, s[:i])
			}
			out = append(out, "[*]")
			s = s[i+3:]
		}
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

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
