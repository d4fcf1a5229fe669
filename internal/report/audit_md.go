package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/perflab/perflab/internal/audit"
)

// AuditMarkdown writes the audit report as Markdown to paste into a ticket: a
// heading with the host and workload, a table of failing findings (and
// errors) with the fix, and the counts. With verbose every rule is a row.
func AuditMarkdown(w io.Writer, r *audit.Report, verbose bool) error {
	var b strings.Builder
	fmt.Fprintf(&b, "## perflab audit: %s, workload `%s`%s\n\n", mdCell(hostOrUnknown(r.Host)), r.Workload.Label(), trustedWord(r.Workload.Trusted))
	fmt.Fprintf(&b, "Snapshot `%s` taken %s (%s), perflab %s.\n\n", r.SnapshotID, r.TakenAt.UTC().Format("2006-01-02 15:04:05 UTC"), auditSource(r), r.Perflab)

	var rows []audit.Finding
	for _, f := range r.Findings {
		if verbose || f.Status == audit.Fail || f.Status == audit.Error {
			rows = append(rows, f)
		}
	}
	if len(rows) == 0 {
		b.WriteString("No rule fails.\n\n")
	} else {
		b.WriteString("| Status | Severity | Rule | Knob | Observed | Expected | Fix |\n")
		b.WriteString("|---|---|---|---|---|---|---|\n")
		for _, f := range rows {
			obs := f.Observed
			if f.Status == audit.Error || f.Status == audit.NA {
				obs = f.Reason
			}
			fmt.Fprintf(&b, "| %s | %s | `%s` | %s | %s | %s | %s |\n", f.Status, f.Severity, f.Rule,
				mdCode(f.Knob), mdCell(obs), mdCell(f.Expected), mdCode(f.Fix))
		}
		b.WriteString("\n")
	}
	s := r.Summary
	fmt.Fprintf(&b, "**%d failed**, %d passed, %d not applicable, %d errors (%d rules).", s.Fail, s.Pass, s.NA, s.Error, s.Total)
	if s.Worst != "" {
		fmt.Fprintf(&b, " Worst: **%s**.", s.Worst)
	}
	b.WriteString("\n")

	var details []audit.Finding
	for _, f := range r.Findings {
		if f.Status == audit.Fail {
			details = append(details, f)
		}
	}
	if len(details) > 0 {
		b.WriteString("\n### Why\n\n")
		for _, f := range details {
			fmt.Fprintf(&b, "- **%s**: %s (source: %s)", f.Rule, mdCell(f.Why), mdCell(f.Source))
			if f.Revert != "" {
				fmt.Fprintf(&b, " Revert: %s", mdCode(f.Revert))
			}
			b.WriteString("\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// mdCell makes text safe inside a table cell: no pipes, no line breaks.
func mdCell(s string) string {
	s = strings.ReplaceAll(s, "|", `\|`)
	return strings.ReplaceAll(s, "\n", "<br>")
}

// mdCode renders commands as inline code, one span per line.
func mdCode(s string) string {
	if s == "" {
		return ""
	}
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		l = strings.ReplaceAll(l, "|", `\|`)
		if strings.Contains(l, "`") {
			lines[i] = "``" + l + "``"
		} else {
			lines[i] = "`" + l + "`"
		}
	}
	return strings.Join(lines, "<br>")
}
