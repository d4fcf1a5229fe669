package cli

import "testing"

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
