package cli

import (
	"os"
	"slices"
	"strings"
	"testing"
)

const diffData = "../flame/diff/testdata/inferno/"

func sortedLines(s string) []string {
	l := strings.Split(strings.TrimRight(s, "\n"), "\n")
	slices.Sort(l)
	return l
}

// flame diff --normalize and --strip-hex give what inferno-diff-folded
// gives (its recorded outputs; difffolded.pl -n/-s agree on these inputs),
// and the table's totals are the recorded ones, not the normalized ones.
func TestFlameDiffCLIMatchesInferno(t *testing.T) {
	for flag, res := range map[string]string{"--normalize": "normalize", "--strip-hex": "strip_hex", "": "default"} {
		args := []string{"flame", "diff", diffData + "before.txt", diffData + "after.txt", "--format", "folded"}
		if flag != "" {
			args = append(args, flag)
		}
		code, out, stderr := runCLIWith(t, nil, nil, nil, args...)
		want, err := os.ReadFile(diffData + "results/" + res + ".txt")
		if err != nil {
			t.Fatal(err)
		}
		if code != 0 || !slices.Equal(sortedLines(out), sortedLines(string(want))) {
			t.Errorf("diff %s: code %d, stderr %q\n%s", flag, code, stderr, out)
		}
		if !strings.Contains(stderr, "(65 before, 80 after)") {
			t.Errorf("diff %s: the table should give the recorded totals: %q", flag, stderr)
		}
	}
}
