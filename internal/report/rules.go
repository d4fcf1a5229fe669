package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/perflab/perflab/internal/audit"
	"github.com/perflab/perflab/internal/termfmt"
)

// RuleTable is the text of 'perflab rules': one line per rule.
func RuleTable(w io.Writer, rules []*audit.Rule, st termfmt.Style) {
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

// Rule is the text of 'perflab rules ID': the rule in full.
func Rule(w io.Writer, r *audit.Rule, st termfmt.Style) {
	fmt.Fprintf(w, "%s  %s\n\n", st.Bold(r.ID), r.Title)
	row := func(k, v string) { fmt.Fprintf(w, "%-10s %s\n", k, v) }
	row("severity", r.Severity.String())
	row("area", r.Area)
	row("workloads", workloadList(r.Workloads))
	row("knob", r.Knob)
	row("source", r.Source)
	fmt.Fprintf(w, "\n%s\n", r.Why)
}

// Workloads is the text of 'perflab rules --workloads'.
func Workloads(w io.Writer, st termfmt.Style) {
	for _, n := range audit.Workloads() {
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
}
