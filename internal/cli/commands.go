package cli

import "github.com/spf13/cobra"

// commandTable is every subcommand by name, each in its own file. A
// name here must be its command's Name() (TestCommandTableNames).
var commandTable = []struct {
	name string
	new  func(*env) *cobra.Command
}{
	{"snapshot", newSnapshotCmd},
	{"audit", newAuditCmd},
	{"rules", newRulesCmd},
	{"bench", newBenchCmd},
	{"runs", newRunsCmd},
	{"compare", newCompareCmd},
	{"report", newReportCmd},
	{"check", newCheckCmd},
	{"profile", newProfileCmd},
	{"flame", newFlameCmd},
	{"tune", newTuneCmd},
	{"bisect", newBisectCmd},
	{"irq", newIrqCmd},
	{"exporter", newExporterCmd},
	{"fleet", newFleetCmd},
	{"deps", newDepsCmd},
	{"trace", newTraceCmd},
	{"serve", newServeCmd},
	{"hosts", newHostsCmd},
}

// commands builds the subcommands args can run. A run names one command
// first (perflab audit …) or asks only for --version: then only that
// command is built, not the ~40 commands and their flags of the whole
// tree (7% of `perflab --version`'s CPU; docs/performance.md). Anything
// else — help, completion, a flag first, an unknown or mistyped name —
// gets the whole tree, so help and suggestions are unchanged.
func commands(e *env) []*cobra.Command {
	var out []*cobra.Command
	only, narrow := calledCommand(e.args)
	for _, c := range commandTable {
		if !narrow || c.name == only {
			out = append(out, c.new(e))
		}
	}
	return out
}

// calledCommand returns the one top-level command args run ("" for
// --version alone) and whether that is all they need.
func calledCommand(args []string) (string, bool) {
	if len(args) == 1 && args[0] == "--version" {
		return "", true
	}
	if len(args) == 0 {
		return "", false
	}
	for _, c := range commandTable {
		if args[0] == c.name {
			return c.name, true
		}
	}
	return "", false
}
