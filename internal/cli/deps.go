package cli

import (
	"fmt"
	"os"
	"os/exec"
	"strings"

	"github.com/perflab/perflab/internal/clierr"
	"github.com/perflab/perflab/internal/deps"
	"github.com/perflab/perflab/internal/report"
	"github.com/spf13/cobra"
)

func newDepsCmd(e *env) *cobra.Command {
	var out outputFlags
	var root string
	cmd := &cobra.Command{
		Use:   "deps [SUITE]",
		Short: "Which external tools each suite needs, which are installed (with versions), and how to install the rest",
		Example: `  perflab deps              # every tool
  perflab deps kv           # what the kv suite needs
  perflab deps install web  # install nginx and wrk (as root)`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := out.validate(); err != nil {
				return err
			}
			suite, err := depsSuite(args)
			if err != nil {
				return err
			}
			fs, err := openRoot(root)
			if err != nil {
				return err
			}
			status := deps.Check(cmd.Context(), fs, suite)
			return writeResult(&out, e.stdout, &report.DepsStatus{Status: status, Suite: suite})
		},
	}
	cmd.Flags().StringVar(&root, "root", "/", "host root (for /etc/os-release)")
	out.register(cmd, "text", "text", "json")
	cmd.AddCommand(newDepsInstallCmd(e))
	return cmd
}

func depsSuite(args []string) (string, error) {
	if len(args) == 0 {
		return "all", nil
	}
	for _, s := range append(deps.Suites(), "all") {
		if s == args[0] {
			return s, nil
		}
	}
	return "", clierr.Usagef("suites: "+strings.Join(deps.Suites(), ", "), "unknown suite %q", args[0])
}

func newDepsInstallCmd(e *env) *cobra.Command {
	var dry bool
	cmd := &cobra.Command{
		Use:     "install [SUITE]",
		Short:   "Install the missing tools of a suite with the host's package manager (as root)",
		Example: "  perflab deps install\n  perflab deps install kv --dry-run",
		Args:    cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			suite, err := depsSuite(args)
			if err != nil {
				return err
			}
			fs, err := openRoot("/")
			if err != nil {
				return err
			}
			var missing []deps.Tool
			for _, t := range deps.ForSuite(suite) {
				if t.Path() == "" {
					missing = append(missing, t)
				}
			}
			pm := deps.PackageManager(fs)
			install := deps.InstallCommand(pm, missing)
			if len(install) == 0 {
				fmt.Fprintln(e.stdout, "Everything is installed.")
				return nil
			}
			fmt.Fprintln(e.stdout, "+ "+strings.Join(install, " "))
			if dry {
				return nil
			}
			if os.Geteuid() != 0 {
				// Exit 3 like every other "needs root" (tune, irq, profile -a).
				return clierr.Runtimef("run it as root (sudo perflab deps install "+suite+")", "installing packages needs root")
			}
			if pm == "apt" {
				upd := exec.CommandContext(cmd.Context(), "apt-get", "update", "-qq")
				upd.Stdout, upd.Stderr = e.stderr, e.stderr
				if err := upd.Run(); err != nil {
					return clierr.Runtimef("check the package sources", "apt-get update failed: %v", err)
				}
			}
			c := exec.CommandContext(cmd.Context(), install[0], install[1:]...)
			c.Stdout, c.Stderr = e.stdout, e.stderr
			c.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
			if err := c.Run(); err != nil {
				return clierr.Runtimef("see the package manager's message above", "%s failed: %v", install[0], err)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&dry, "dry-run", false, "print the command only")
	return cmd
}
