package golden

import (
	"strings"
	"testing"
)

func TestDiffShowsFirstDifference(t *testing.T) {
	d := Diff("a\nb\nc\nd\n", "a\nb\nX\nd\n")
	if !strings.Contains(d, "3 - c") || !strings.Contains(d, "3 + X") || !strings.Contains(d, "2   b") {
		t.Errorf("diff:\n%s", d)
	}
}
