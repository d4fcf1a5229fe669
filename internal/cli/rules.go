package cli

import (
	"strings"

	"github.com/perflab/perflab/internal/audit"
	"github.com/perflab/perflab/internal/clierr"
	"github.com/perflab/perflab/internal/report"
	"github.com/spf13/cobra"
)

func newRulesCmd(e *env) *cobra.Command {
	var out outputFlags
	var workloads bool
	cmd := &cobra.Command{
		Use:   "rules [ID]",
		Short: "List the audit rule catalogue, or show one rule in full",
		Long: `rules lists every audit rule with its severity, area and the workloads it
applies to; with an ID it shows the rule in full: the knob it reads, why it
matters (with the number and its source). --workloads lists the built-in
workloads instead. docs/rules.md is generated from the same catalogue.`,
		Example: `  perflab rules
  perflab rules CPU-GOVERNOR
  perflab rules --workloads
  perflab rules --format json > rules.json`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := out.validate(); err != nil {
				return err
			}
			if workloads {
				if len(args) > 0 {
					return clierr.Usagef("drop the rule ID", "--workloads takes no rule ID")
				}
				return writeResult(&out, e.stdout, report.WorkloadList{})
			}
			if len(args) == 1 {
				r, ok := audit.Lookup(strings.ToUpper(args[0]))
				if !ok {
					return clierr.Usagef("list rule IDs with 'perflab rules'", "no rule %q", args[0])
				}
				return writeResult(&out, e.stdout, r)
			}
			return writeResult(&out, e.stdout, report.Rules(audit.Rules()))
		},
	}
	cmd.Flags().BoolVar(&workloads, "workloads", false, "list the built-in workloads instead of rules")
	out.register(cmd, "text", "text", "json")
	return cmd
}
