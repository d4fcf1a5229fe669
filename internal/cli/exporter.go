package cli

import (
	"github.com/perflab/perflab/internal/clierr"
	"github.com/spf13/cobra"
)

// TODO(owner): replace this placeholder with the real command.
func newExporterCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:    "exporter",
		Short:  "(not yet available)",
		Hidden: true,
		RunE: func(*cobra.Command, []string) error {
			return clierr.Usagef("", "perflab exporter is not available in this build")
		},
	}
}
