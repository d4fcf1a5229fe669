// Package cli wires perflab's commands: it parses flags, calls the domain
// packages and prints. It holds no analysis logic of its own.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"

	"github.com/perflab/perflab/internal/clierr"
	"github.com/perflab/perflab/internal/termfmt"
	"github.com/spf13/cobra"
)

// Version is set by main from build information.
var Version = "dev"

// env carries the process's I/O so commands are testable in-process.
type env struct {
	stdout, stderr io.Writer
	stdin          io.Reader
	args           []string // the command line, for --on to forward
	probes         string   // --probes: the probes file ("" = ./perflab.yaml if present)
}

func newRoot(e *env) *cobra.Command {
	root := &cobra.Command{
		Use:   "perflab",
		Short: "Is this Linux host as fast as it should be, and if not, why?",
		Long: `perflab snapshots a host's performance-relevant configuration, audits it
against a rule catalogue for your workload, benchmarks it with builtin probes
and the industry's tools, compares runs and hosts with sound statistics and
explains a gap by the configuration that differs, tunes with verify and
revert, profiles into flame graphs, and exports verdicts to Prometheus.`,
		Example: `  perflab audit --workload web           # what on this host costs nginx performance
  perflab snapshot -o host.json           # capture facts to analyse elsewhere
  perflab audit --snapshot host.json      # audit a host captured elsewhere
  perflab bench quick --label before      # measure, with confidence intervals
  perflab audit --on db1                  # the same on another host over SSH (docs/two-hosts.md)
  perflab bench quick --on vm1 --on ct1   # two hosts, probe by probe, side by side
  perflab bench net.tcp --peer db2        # client here, server on db2`,
		SilenceErrors:     true,
		SilenceUsage:      true,
		Version:           Version,
		CompletionOptions: cobra.CompletionOptions{HiddenDefaultCmd: false},
	}
	root.PersistentFlags().StringVar(&e.probes, "probes", "", "file of named probes (default ./perflab.yaml when present; docs/probes.md)")
	root.SetOut(e.stdout)
	root.SetErr(e.stderr)
	root.SetIn(e.stdin)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return clierr.Usagef("see '"+c.CommandPath()+" --help'", "%v", err)
	})
	root.AddCommand(commands(e)...)
	addRemote(root, e)
	root.SetHelpCommandGroupID("")
	root.InitDefaultCompletionCmd()
	rejectUnknownSubcommands(root)
	return root
}

// rejectUnknownSubcommands makes a command that only groups subcommands
// (flame, tune, irq, completion) fail on an unknown one: cobra would print
// the help and exit 0, so `perflab tune aply web` in a script would look
// like success.
func rejectUnknownSubcommands(c *cobra.Command) {
	for _, sub := range c.Commands() {
		rejectUnknownSubcommands(sub)
	}
	if !c.HasParent() || !c.HasSubCommands() || c.Runnable() {
		return
	}
	c.Args = cobra.ArbitraryArgs
	c.RunE = func(c *cobra.Command, args []string) error {
		if len(args) > 0 {
			return clierr.Usagef("see '"+c.CommandPath()+" --help'", "unknown command %q for %q", args[0], c.CommandPath())
		}
		return c.Help()
	}
}

// Execute runs perflab with args and returns the process exit code. Errors
// become one line on stderr; panics become one line and exit code 3 (the
// stack trace only with PERFLAB_DEBUG=1).
func Execute(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) (code int) {
	defer removePending()
	defer func() {
		if p := recover(); p != nil {
			fmt.Fprintf(stderr, "perflab: internal error: %v (please report it; rerun with PERFLAB_DEBUG=1 for details)\n", p)
			if os.Getenv("PERFLAB_DEBUG") != "" {
				stderr.Write(debug.Stack())
			}
			code = clierr.Runtime
		}
	}()
	// Every byte printed passes termfmt.Safe: strings from trees, stores
	// and imports cannot drive the terminal.
	stdout, stderr = termfmt.Safe(stdout), termfmt.Safe(stderr)
	e := &env{stdout: stdout, stderr: stderr, stdin: stdin, args: args}
	root := newRoot(e)
	root.SetArgs(args)
	cmd, err := root.ExecuteContextC(ctx)
	if err == nil {
		return clierr.OK
	}
	code = clierr.Code(err)
	var ce *clierr.Error
	if !errors.As(err, &ce) && isCobraUsage(err) {
		code = clierr.Usage
		err = clierr.Usagef(helpHint(cmd), "%v", err)
	}
	if msg := err.Error(); msg != "" {
		fmt.Fprintln(stderr, "perflab: "+oneLine(msg))
	}
	return code
}

// helpHint points at the help of the command whose arguments were wrong
// (cmd: the one cobra found; the root's for an unknown command).
func helpHint(cmd *cobra.Command) string {
	if cmd == nil {
		return "see 'perflab --help'"
	}
	return "see '" + cmd.CommandPath() + " --help'"
}

// isCobraUsage recognises cobra's own argument errors, which are plain.
func isCobraUsage(err error) bool {
	m := err.Error()
	for _, p := range []string{"unknown command", "accepts ", "requires at least", "requires at most", "unknown flag", "invalid argument", "unknown shorthand", "flag needs", "required flag"} {
		if strings.Contains(m, p) {
			return true
		}
	}
	return false
}

// oneLine folds a multi-line error into the one line a user gets: lines
// joined by "; ", blank lines dropped, and a line that asks or introduces
// ("Did you mean this?", "…:") joined to the next by a space.
func oneLine(s string) string {
	var b strings.Builder
	sep := ""
	for _, line := range strings.Split(s, "\n") {
		line = strings.Join(strings.Fields(line), " ")
		if line == "" {
			continue
		}
		b.WriteString(sep + line)
		sep = "; "
		if strings.HasSuffix(line, "?") || strings.HasSuffix(line, ":") {
			sep = " "
		}
	}
	return b.String()
}
