package report

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/perflab/perflab/internal/audit"
	"github.com/perflab/perflab/internal/termfmt"
)

// AuditTextOptions controls the terminal audit report.
type AuditTextOptions struct {
	Verbose bool          // also list passing and not-applicable rules
	Style   termfmt.Style // colour, decided by the caller with termfmt.ColorEnabled
	Width   int           // wrap width for prose; 0 means 100
}

// AuditText writes the audit report for a person at a terminal: failing findings
// grouped by severity, highest first, each with observed → expected, why and
// the fix; then errors; then one line of counts. Passing and not-applicable
// rules are listed only with Verbose.
func AuditText(w io.Writer, r *audit.Report, o AuditTextOptions) error {
	if o.Width <= 0 {
		o.Width = 100
	}
	st := o.Style
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s, workload %s%s, %s\n", st.Bold("perflab audit:"), hostOrUnknown(r.Host), r.Workload.Label(),
		trustedWord(r.Workload.Trusted), auditSource(r))

	for sev := audit.Critical; sev >= audit.Info; sev-- {
		var group []audit.Finding
		for _, f := range r.Findings {
			if f.Status == audit.Fail && f.Severity == sev {
				group = append(group, f)
			}
		}
		if len(group) == 0 {
			continue
		}
		fmt.Fprintf(&b, "\n%s\n", sevStyle(st, sev, strings.ToUpper(sev.String())+fmt.Sprintf(" (%d)", len(group))))
		for _, f := range group {
			writeFailing(&b, f, o)
		}
	}

	var errs []audit.Finding
	for _, f := range r.Findings {
		if f.Status == audit.Error {
			errs = append(errs, f)
		}
	}
	if len(errs) > 0 {
		fmt.Fprintf(&b, "\n%s\n", st.Red(fmt.Sprintf("ERRORS (%d): these rules could not decide", len(errs))))
		for _, f := range errs {
			fmt.Fprintf(&b, "  %s %s: %s\n", st.Red("!"), st.Bold(f.Rule), f.Reason)
		}
	}

	if o.Verbose {
		writeQuiet(&b, r.Findings, audit.Pass, st.Green("PASSED"), st)
		writeQuiet(&b, r.Findings, audit.NA, st.Dim("NOT APPLICABLE"), st)
	}

	b.WriteString("\n" + auditSummaryLine(r, st, o.Verbose) + "\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func writeFailing(b *strings.Builder, f audit.Finding, o AuditTextOptions) {
	st := o.Style
	fmt.Fprintf(b, "  %s %s  %s\n", sevStyle(st, f.Severity, "✗"), st.Bold(f.Rule), f.Title)
	field(b, "knob", f.Knob, o)
	field(b, "observed", f.Observed+"  →  expected "+st.Bold(f.Expected), o)
	if f.Reason != "" {
		field(b, "note", f.Reason, o)
	}
	field(b, "why", f.Why, o)
	if f.Source != "" {
		field(b, "source", f.Source, o)
	}
	// Commands are never wrapped: they must survive copy and paste.
	if f.Fix != "" {
		commandField(b, "fix", f.Fix, st.Blue)
	}
	if f.Revert != "" {
		commandField(b, "revert", f.Revert, st.Dim)
	}
}

// field writes "    label     text" with prose wrapped under the text
// column and multi-line commands kept one per line.
func field(b *strings.Builder, label, text string, o AuditTextOptions) {
	const indent = 4 + 10
	pad := strings.Repeat(" ", indent)
	lines := strings.Split(text, "\n")
	first := true
	for _, line := range lines {
		for _, wl := range wrap(line, o.Width-indent) {
			if first {
				fmt.Fprintf(b, "    %-9s %s\n", label, wl)
				first = false
				continue
			}
			b.WriteString(pad + wl + "\n")
		}
	}
}

// commandField writes one command per line under the text column, unwrapped.
func commandField(b *strings.Builder, label, text string, style func(string) string) {
	for i, line := range strings.Split(text, "\n") {
		if i == 0 {
			fmt.Fprintf(b, "    %-9s %s\n", label, style(line))
			continue
		}
		b.WriteString(strings.Repeat(" ", 14) + style(line) + "\n")
	}
}

// wrap breaks prose at spaces to fit width; words longer than width (paths,
// commands) stay whole.
func wrap(s string, width int) []string {
	words := strings.Fields(s)
	if len(words) == 0 || width < 20 {
		return []string{s}
	}
	var out []string
	cur := words[0]
	for _, w := range words[1:] {
		if visibleLen(cur)+1+visibleLen(w) > width {
			out = append(out, cur)
			cur = w
			continue
		}
		cur += " " + w
	}
	return append(out, cur)
}

// visibleLen is the length of s without ANSI escapes.
func visibleLen(s string) int {
	n, esc := 0, false
	for _, r := range s {
		switch {
		case r == '\x1b':
			esc = true
		case esc && r == 'm':
			esc = false
		case !esc:
			n++
		}
	}
	return n
}

func writeQuiet(b *strings.Builder, fs []audit.Finding, status audit.Status, title string, st termfmt.Style) {
	var rows []audit.Finding
	for _, f := range fs {
		if f.Status == status {
			rows = append(rows, f)
		}
	}
	if len(rows) == 0 {
		return
	}
	// Quiet rows have no severity to group by; alphabetical reads best.
	sort.Slice(rows, func(i, j int) bool { return rows[i].Rule < rows[j].Rule })
	fmt.Fprintf(b, "\n%s (%d)\n", title, len(rows))
	for _, f := range rows {
		if status == audit.Pass {
			fmt.Fprintf(b, "  %s %-28s %s\n", st.Green("✓"), f.Rule, f.Observed)
		} else {
			fmt.Fprintf(b, "  %s %-28s %s\n", st.Dim("-"), f.Rule, st.Dim(f.Reason))
		}
	}
}

func auditSummaryLine(r *audit.Report, st termfmt.Style, verbose bool) string {
	s := r.Summary
	var fails []string
	for sev := audit.Critical; sev >= audit.Info; sev-- {
		if n := s.FailBySeverity[sev.String()]; n > 0 {
			fails = append(fails, fmt.Sprintf("%d %s", n, sev))
		}
	}
	failed := fmt.Sprintf("%d failed", s.Fail)
	if len(fails) > 0 {
		failed += " (" + strings.Join(fails, ", ") + ")"
		failed = st.Red(failed)
	} else {
		failed = st.Green(failed)
	}
	line := fmt.Sprintf("%s, %d passed, %d not applicable, %d errors; %d rules", failed, s.Pass, s.NA, s.Error, s.Total)
	if !verbose && s.Pass+s.NA > 0 {
		line += st.Dim(" (--verbose lists them)")
	}
	return line
}

func sevStyle(st termfmt.Style, sev audit.Severity, text string) string {
	switch {
	case sev >= audit.High:
		return st.Red(text)
	case sev == audit.Medium:
		return st.Yellow(text)
	default:
		return st.Blue(text)
	}
}

func trustedWord(t bool) string {
	if t {
		return " (trusted single-tenant host)"
	}
	return ""
}

func auditSource(r *audit.Report) string {
	if r.Source == "" || r.Source == "live" {
		return "live snapshot"
	}
	return "from " + r.Source
}

func hostOrUnknown(s string) string {
	if s == "" {
		return "(unknown host)"
	}
	return s
}
