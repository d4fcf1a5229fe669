package cli

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// TestExamplesNotRepeated: no command's --help prints the same example
// line twice (bench once did).
func TestExamplesNotRepeated(t *testing.T) {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		seen := map[string]bool{}
		for _, l := range strings.Split(c.Example, "\n") {
			l = strings.TrimSpace(l)
			if l != "" && seen[l] {
				t.Errorf("%s --help: example %q printed twice", c.CommandPath(), l)
			}
			seen[l] = true
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(newRoot(&env{}))
}

// TestCompareHelpNamesTheVerdict: compare --help describes the verdict the
// code gives (run-level, docs/statistics.md), not the sample-level
// Mann–Whitney test it keeps for Go benchmark files only.
func TestCompareHelpNamesTheVerdict(t *testing.T) {
	code, out, stderr := runCLI(t, "compare", "--help")
	if code != 0 {
		t.Fatalf("compare --help: %d %s", code, stderr)
	}
	flat := strings.Join(strings.Fields(out), " ")
	for _, want := range []string{"The run is the unit", "t-test on the runs' log medians", "Go benchmark files keep benchstat's Mann–Whitney"} {
		if !strings.Contains(flat, want) {
			t.Errorf("compare --help lacks %q:\n%s", want, out)
		}
	}
	if i := strings.Index(flat, "Mann–Whitney"); i >= 0 && !strings.Contains(flat[max(0, i-60):i], "Go benchmark files") {
		t.Errorf("compare --help names Mann–Whitney outside Go benchmark files:\n%s", out)
	}
}
