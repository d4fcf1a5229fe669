package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/perflab/perflab/internal/audit"
	"github.com/perflab/perflab/internal/clierr"
	"github.com/perflab/perflab/internal/termfmt"
	"github.com/spf13/cobra"
)

// ruleDoc is a rule as `perflab rules --format json` prints it.
type ruleDoc struct {
	ID        string   `json:"id"`
	Title     string   `json:"title"`
	Area      string   `json:"area"`
	Severity  string   `json:"severity"`
	Workloads []string `json:"workloads"` // empty: every workload
	Knob      string   `json:"knob"`
	Why       string   `json:"why"`
	Source    string   `json:"source"`
}

func docOf(r *audit.Rule) ruleDoc {
	wl := r.Workloads
	if wl == nil {
		wl = []string{}
	}
	return ruleDoc{ID: r.ID, Title: r.Title, Area: r.Area, Severity: r.Severity.String(), Workloads: wl, Knob: r.Knob, Why: r.Why, Source: r.Source}
}

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
			st := termfmt.Style{On: out.output == "" && termfmt.ColorEnabled(e.stdout)}
			if workloads {
				if len(args) > 0 {
					return clierr.Usagef("drop the rule ID", "--workloads takes no rule ID")
				}
				return writeOut(&out, e.stdout, func(w io.Writer) error { return printWorkloads(w, out.format, st) })
			}
			if len(args) == 1 {
				r, ok := audit.Lookup(strings.ToUpper(args[0]))
				if !ok {
					return clierr.Usagef("list rule IDs with 'perflab rules'", "no rule %q", args[0])
				}
				return writeOut(&out, e.stdout, func(w io.Writer) error {
					if out.format == "json" {
						return writeJSON(w, docOf(r))
					}
					printRule(w, r, st)
					return nil
				})
			}
			return writeOut(&out, e.stdout, func(w io.Writer) error {
				rules := audit.Rules()
				if out.format == "json" {
					docs := make([]ruleDoc, len(rules))
					for i, r := range rules {
						docs[i] = docOf(r)
					}
					return writeJSON(w, docs)
				}
				printRuleTable(w, rules, st)
				return nil
			})
		},
	}
	cmd.Flags().BoolVar(&workloads, "workloads", false, "list the built-in workloads instead of rules")
	out.register(cmd, "text", "text", "json")
	return cmd
}

func printRuleTable(w io.Writer, rules []*audit.Rule, st termfmt.Style) {
	idw := 2
	for _, r := range rules {
		if len(r.ID) > idw {
			idw = len(r.ID)
		}
	}
	fmt.Fprintf(w, "%s\n", st.Bold(fmt.Sprintf("%-*s  %-8s  %-8s  %-22s  %s", idw, "ID", "SEVERITY", "AREA", "WORKLOADS", "TITLE")))
	for _, r := range rules {
		fmt.Fprintf(w, "%-*s  %-8s  %-8s  %-22s  %s\n", idw, r.ID, r.Severity, r.Area, workloadList(r.Workloads), r.Title)
	}
	fmt.Fprintf(w, "\n%d rules; 'perflab rules ID' shows one in full.\n", len(rules))
}

func workloadList(wl []string) string {
	if len(wl) == 0 {
		return "all"
	}
	return strings.Join(wl, ",")
}

func printRule(w io.Writer, r *audit.Rule, st termfmt.Style) {
	fmt.Fprintf(w, "%s  %s\n\n", st.Bold(r.ID), r.Title)
	row := func(k, v string) { fmt.Fprintf(w, "%-10s %s\n", k, v) }
	row("severity", r.Severity.String())
	row("area", r.Area)
	row("workloads", workloadList(r.Workloads))
	row("knob", r.Knob)
	row("source", r.Source)
	fmt.Fprintf(w, "\n%s\n", r.Why)
}

func printWorkloads(w io.Writer, format string, st termfmt.Style) error {
	names := audit.Workloads()
	if format == "json" {
		type wdoc struct {
			Name        string            `json:"name"`
			Description string            `json:"description"`
			Targets     map[string]string `json:"targets"`
		}
		docs := make([]wdoc, 0, len(names))
		for _, n := range names {
			wl, err := audit.LookupWorkload(n)
			if err != nil {
				return err
			}
			docs = append(docs, wdoc{n, wl.Description, wl.Targets})
		}
		return writeJSON(w, docs)
	}
	for _, n := range names {
		fmt.Fprintf(w, "%-15s %s\n", st.Bold(n), audit.WorkloadInfo(n))
	}
	fmt.Fprintln(w, "\nApplications pick the class that fits them:")
	for _, a := range audit.WorkloadAliases() {
		line := fmt.Sprintf("  %-12s → %s", a.Name, a.Workload)
		if a.Why != "" {
			line += "  (" + a.Why + ")"
		}
		fmt.Fprintln(w, line)
	}
	fmt.Fprintln(w, "\nA YAML profile file extends one of them: 'perflab audit --workload my.yaml' (see docs/audit.md).")
	return nil
}
