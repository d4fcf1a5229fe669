package cli

import "github.com/spf13/cobra"

// commands lists every subcommand; each lives in its own file.
func commands(e *env) []*cobra.Command {
	return []*cobra.Command{
		newSnapshotCmd(e),
		newAuditCmd(e),
		newRulesCmd(e),
		newBenchCmd(e),
		newRunsCmd(e),
		newCompareCmd(e),
		newReportCmd(e),
		newCheckCmd(e),
		newProfileCmd(e),
		newFlameCmd(e),
		newTuneCmd(e),
		newBisectCmd(e),
		newIrqCmd(e),
		newExporterCmd(e),
		newFleetCmd(e),
		newDepsCmd(e),
		newTraceCmd(e),
		newServeCmd(e),
		newHostsCmd(e),
	}
}
