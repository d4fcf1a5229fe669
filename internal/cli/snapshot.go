package cli

import (
	"github.com/perflab/perflab/internal/clierr"
	"github.com/spf13/cobra"
)

// TODO(owner): replace this placeholder with the real command.
func newSnapshotCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:    "snapshot",
		Short:  "(not yet available)",
		Hidden: true,
		RunE: func(*cobra.Command, []string) error {
			return clierr.Usagef("", "perflab snapshot is not available in this build")
		},
	}
}
