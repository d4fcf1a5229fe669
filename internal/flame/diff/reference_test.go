package diff

import (
	"bytes"
	"os"
	"slices"
	"strings"
	"testing"
)

// readFile reads a folded fixture.
func readFile(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// sortedLines is the text's lines in byte order: inferno-diff-folded
// writes its stacks in hash-map order.
func sortedLines(b []byte) []string {
	l := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	slices.Sort(l)
	return l
}

// TestJoinMatchesInfernoResults checks Join against the outputs that
// inferno's own tests expect (testdata/inferno, see ORIGIN.md).
func TestJoinMatchesInfernoResults(t *testing.T) {
	for _, c := range []struct {
		name, before string
		opt          Options
	}{
		{"default", "before.txt", Options{}},
		{"normalize", "before.txt", Options{Normalize: true}},
		{"strip_hex", "before.txt", Options{StripHex: true}},
	} {
		before := read(t, string(readFile(t, "testdata/inferno/"+c.before)))
		after := read(t, string(readFile(t, "testdata/inferno/after.txt")))
		var out bytes.Buffer
		Join(before, after, c.opt).WriteTo(&out)
		got, want := sortedLines(out.Bytes()), sortedLines(readFile(t, "testdata/inferno/results/"+c.name+".txt"))
		if !slices.Equal(got, want) {
			t.Errorf("%s: got\n%s\nwant\n%s", c.name, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
}

// StripHex replaces what difffolded.pl's s/0x[0-9a-fA-F]+/0x.../g does
// and nothing else; stacks that become equal are merged.
func TestStripHexIsDifffoldedS(t *testing.T) {
	before := read(t, "a;0x7f3A1b;f 2\na;0x00ff;f 3\na;0x;g 1\na;x0x1zz;0xg 4\n")
	after := read(t, "a;0xdeadbeef;f 5\n")
	var out bytes.Buffer
	Join(before, after, Options{StripHex: true}).WriteTo(&out)
	want := "a;0x...;f 5 5\na;0x;g 1 0\na;x0x...zz;0xg 4 0\n"
	if out.String() != want {
		t.Fatalf("got\n%s\nwant\n%s", out.String(), want)
	}
}
