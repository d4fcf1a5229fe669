package diff

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/testenv"
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

// TestJoinMatchesInfernoDiffFolded runs the reference on generated
// profiles whose normalized counts are rarely whole numbers, with
// addresses to strip, so rounding instead of truncating shows at once.
func TestJoinMatchesInfernoDiffFolded(t *testing.T) {
	ref := testenv.RequireTool(t, "inferno-diff-folded")
	rng := rand.New(rand.NewPCG(1, 2))
	frames := []string{"main", "work", "0x7f3a01", "read_[k]", "jit 0xDEAD", "f;g", "0x", "main "}
	gen := func(n int) string {
		var b strings.Builder
		for range n {
			depth := 1 + rng.IntN(4)
			b.WriteString("app")
			for range depth {
				b.WriteString(";" + frames[rng.IntN(len(frames))])
			}
			fmt.Fprintf(&b, " %d\n", 1+rng.IntN(1000))
		}
		return b.String()
	}
	dir := t.TempDir()
	for i := range 5 {
		bf, af := filepath.Join(dir, "before"), filepath.Join(dir, "after")
		bs, as := gen(40+i), gen(30+2*i)
		os.WriteFile(bf, []byte(bs), 0o644)
		os.WriteFile(af, []byte(as), 0o644)
		for _, opt := range []Options{{}, {Normalize: true}, {StripHex: true}, {Normalize: true, StripHex: true}} {
			args := []string{}
			if opt.Normalize {
				args = append(args, "--normalize")
			}
			if opt.StripHex {
				args = append(args, "--strip-hex")
			}
			want, err := exec.Command(ref, append(args, bf, af)...).Output()
			if err != nil {
				t.Fatal(err)
			}
			var got bytes.Buffer
			Join(read(t, bs), read(t, as), opt).WriteTo(&got)
			if g, w := sortedLines(got.Bytes()), sortedLines(want); !slices.Equal(g, w) {
				t.Fatalf("case %d %+v: differs from inferno-diff-folded\ngot  %q\nwant %q", i, opt, g, w)
			}
		}
	}
}
