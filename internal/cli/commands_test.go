package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// commands builds one command when the command line names it: the table's
// names must be the commands' own, or that command would be missing.
func TestCommandTableNames(t *testing.T) {
	for _, c := range commandTable {
		if got := c.new(&env{}).Name(); got != c.name {
			t.Errorf("commandTable has %q for the command named %q", c.name, got)
		}
		only, narrow := calledCommand([]string{c.name, "--help"})
		if !narrow || only != c.name {
			t.Errorf("calledCommand(%s --help) = %q, %v", c.name, only, narrow)
		}
	}
	for _, args := range [][]string{nil, {"--help"}, {"help", "audit"}, {"audti"}, {"--probes", "x", "audit"}, {"__complete", "au"}, {"completion", "bash"}} {
		if only, narrow := calledCommand(args); narrow {
			t.Errorf("calledCommand(%q) = %q: want the whole tree", args, only)
		}
	}
}

// A run that builds one command prints what the whole tree would: its help,
// --version, and a usage error for a flag it lacks.
func TestNarrowTreeSameOutput(t *testing.T) {
	run := func(whole bool, args ...string) (string, int) {
		var out, errb bytes.Buffer
		e := &env{stdout: &out, stderr: &errb, stdin: strings.NewReader(""), args: args}
		if whole {
			e.args = nil // commands builds every command
		}
		root := newRoot(e)
		root.SetArgs(args)
		err := root.ExecuteContext(context.Background())
		code := 0
		if err != nil {
			code = 1
			errb.WriteString(err.Error())
		}
		return out.String() + "\x00" + errb.String(), code
	}
	for _, args := range [][]string{{"--version"}, {"audit", "--help"}, {"tune", "--help"}, {"runs", "list", "--help"}, {"audit", "--no-such-flag"}, {"flame", "nope"}} {
		narrow, c1 := run(false, args...)
		whole, c2 := run(true, args...)
		if narrow != whole || c1 != c2 {
			t.Errorf("perflab %q: one command built gives\n%s\n(exit %d), the whole tree\n%s\n(exit %d)", args, narrow, c1, whole, c2)
		}
	}
}
