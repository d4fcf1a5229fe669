package snapshot

import "strings"

// bracketChoice parses the kernel's "one of a list" files, where the
// selected word is in brackets: "always [madvise] never" gives "madvise"
// and all three words. ok is false when no word is bracketed (a file the
// kernel writes differently, or garbage).
func bracketChoice(s string) (selected string, words []string, ok bool) {
	for _, w := range strings.Fields(s) {
		if len(w) > 2 && w[0] == '[' && w[len(w)-1] == ']' {
			w = w[1 : len(w)-1]
			if !ok {
				selected, ok = w, true
			}
		}
		words = append(words, w)
	}
	return selected, words, ok
}
