package report

import (
	"strings"
	"testing"
)

// wrap must keep every word, in order, and never exceed the width unless a
// single word does.
func FuzzWrap(f *testing.F) {
	f.Add("The powersave governor keeps cores near their minimum frequency", 30)
	f.Add("\x1b[31mred\x1b[0m words  and\ttabs", 20)
	f.Add("", 0)
	f.Fuzz(func(t *testing.T, s string, width int) {
		if width > 1000 || width < -1000 {
			return
		}
		lines := wrap(s, width)
		if strings.Join(strings.Fields(strings.Join(lines, " ")), " ") != strings.Join(strings.Fields(s), " ") && len(strings.Fields(s)) > 0 {
			t.Fatalf("words changed: %q → %q", s, lines)
		}
		if width >= 20 {
			for _, l := range lines {
				if visibleLen(l) > width && len(strings.Fields(l)) > 1 {
					t.Fatalf("line %q exceeds %d", l, width)
				}
			}
		}
	})
}

// Markdown cells must never break the table: no raw pipe, no newline.
func FuzzMarkdownCell(f *testing.F) {
	f.Add("a | b\nc")
	f.Add("`x` | `y`")
	f.Fuzz(func(t *testing.T, s string) {
		for _, out := range []string{mdCell(s), mdCode(s)} {
			if strings.Contains(out, "\n") {
				t.Fatalf("newline in cell %q", out)
			}
			if strings.Count(out, "|") != strings.Count(out, `\|`) {
				t.Fatalf("unescaped pipe in %q", out)
			}
		}
	})
}
