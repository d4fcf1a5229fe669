package cli

import (
	"github.com/perflab/perflab/internal/clierr"
	"github.com/spf13/cobra"
)

// TODO(owner): replace this placeholder with the real command.
func newBenchCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:    "bench",
		Short:  "(not yet available)",
		Hidden: true,
		RunE: func(*cobra.Command, []string) error {
			return clierr.Usagef("", "perflab bench is not available in this build")
		},
	}
}
