package cli

import (
	"strings"
	"testing"
)

// --until-verdict and --max-time are flags of an interleaved session: each
// misuse is one line naming the fix, exit 2, before anything is measured.
func TestUntilVerdictUsage(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--until-verdict"}, "--until-verdict needs --state"},
		{[]string{"--max-time", "1m"}, "--max-time needs --state"},
		{[]string{"--state", "a=true", "--state", "b=true", "--max-time", "1m"}, "--max-time needs --until-verdict"},
		{[]string{"--state", "a=true", "--state", "b=true", "--until-verdict", "--max-time", "-1s"}, "not a positive duration"},
	} {
		args := append([]string{"bench", "probe:cpu", "--no-store"}, c.args...)
		code, _, stderr := runCLI(t, args...)
		if code != 2 || !strings.Contains(stderr, c.want) || strings.Count(strings.TrimSpace(stderr), "\n") > 1 {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", c.args, code, stderr, c.want)
		}
	}
}
