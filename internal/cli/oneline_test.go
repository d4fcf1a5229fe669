package cli

import (
	"strings"
	"testing"
)

// An error of several lines reaches the user as one line: no empty
// "; ;" pieces from blank lines, and cobra's "Did you mean this?" joined
// to its suggestion.
func TestOneLine(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"plain", "plain"},
		{"a\nb", "a; b"},
		{"unknown command \"audti\" for \"perflab\"\n\nDid you mean this?\n\taudit\n", "unknown command \"audti\" for \"perflab\"; Did you mean this? audit"},
		{"refused:\n  x  y \n\n", "refused: x y"},
		{"\n\n", ""},
	} {
		if got := oneLine(c.in); got != c.want {
			t.Errorf("oneLine(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// A mistyped command is a usage error on one line with the suggestion.
func TestMistypedCommandOneLine(t *testing.T) {
	code, out, errOut := runCLI(t, "audti")
	if code != 2 || out != "" {
		t.Fatalf("exit %d, stdout %q", code, out)
	}
	want := "perflab: unknown command \"audti\" for \"perflab\"; Did you mean this? audit; (see 'perflab --help')\n"
	if errOut != want {
		t.Errorf("stderr %q, want %q", errOut, want)
	}
}

// A usage error points at the help of the command it concerns.
func TestUsageErrorNamesCommandHelp(t *testing.T) {
	for _, c := range []struct {
		args []string
		hint string
	}{
		{[]string{"runs", "history"}, "(see 'perflab runs history --help')"},
		{[]string{"audit", "--nosuch"}, "(see 'perflab audit --help')"},
		{[]string{"fleet", "report", "--bogus"}, "(see 'perflab fleet report --help')"},
	} {
		code, _, errOut := runCLI(t, c.args...)
		if code != 2 || !strings.HasSuffix(errOut, c.hint+"\n") || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and one line ending %q", c.args, code, errOut, c.hint)
		}
	}
}
