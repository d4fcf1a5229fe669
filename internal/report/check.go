package report

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/perflab/perflab/internal/audit"
	"github.com/perflab/perflab/internal/check"
	"github.com/perflab/perflab/internal/compare"
	"github.com/perflab/perflab/internal/knowledge"
	"github.com/perflab/perflab/internal/termfmt"
)

// CheckKind marks a JSON document as a perflab check (docs/check.md).
const CheckKind = "perflab-check"

// CheckSchema is the version of the check JSON document.
const CheckSchema = 1

// CheckDoc is one 'perflab check': the audit of the host and its
// measurements, compared with the previous check of the same machine when
// there is one. Every check renderer (text, Markdown, JSON, HTML) takes it.
type CheckDoc struct {
	Perflab string
	Host    string
	TakenAt time.Time
	Label   string
	Suite   string // "" for a list of probes
	Audit   *audit.Report
	// Comparison has side "previous" then "now" when Previous is set,
	// else the single side "now"; nil when nothing was measured.
	Comparison *compare.Comparison
	Previous   *CheckPrevious
	Notes      []string
	// HTMLPath is where the HTML report was written, for the summary
	// ("" when none was).
	HTMLPath string
	// Zone is the time zone the terminal summary shows times in (nil:
	// the local one).
	Zone *time.Location
}

// local is t in the summary's time zone.
func (d *CheckDoc) local(t time.Time) time.Time {
	if d.Zone == nil {
		return t.Local()
	}
	return t.In(d.Zone)
}

// CheckPrevious describes the earlier check a check compares against.
type CheckPrevious struct {
	At         time.Time `json:"at"`
	Runs       int       `json:"runs"`
	SnapshotID string    `json:"snapshot_id,omitempty"`
}

// topFindings is how many failing findings the terminal summary details.
const topFindings = 5

// failing returns the failing findings, most severe first (the audit
// report's order is already by severity, but the summary must not depend
// on it).
func failing(r *audit.Report) []audit.Finding {
	var out []audit.Finding
	for _, f := range r.Findings {
		if f.Status == audit.Fail {
			out = append(out, f)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Severity > out[j].Severity })
	return out
}

// auditCounts is "1 high, 2 medium" for the failing findings.
func auditCounts(s audit.Summary) string {
	var parts []string
	for _, n := range []string{"critical", "high", "medium", "low", "info"} {
		if k := s.FailBySeverity[n]; k > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", k, n))
		}
	}
	return strings.Join(parts, ", ")
}

// CheckText writes the terminal summary: the audit's failing findings by
// severity with the fixes of the top few, the measurements (median ± CI,
// against the previous check when there is one), and the likely causes of
// any change.
func CheckText(w io.Writer, d *CheckDoc, style termfmt.Style) error {
	tw := &errWriter{w: w}
	r := d.Audit
	tw.printf("%s %s, workload %s%s, %s\n", style.Bold("perflab check:"), orUnknown(d.Host), r.Workload.Name,
		map[bool]string{true: " (trusted)", false: ""}[r.Workload.Trusted], d.local(d.TakenAt).Format("2006-01-02 15:04"))

	fails := failing(r)
	tw.printf("\n%s\n", style.Bold("Audit"))
	if len(fails) == 0 {
		tw.printf("  %s no rule fails (%d passed, %d not applicable, %d could not decide)\n", style.Green("✓"), r.Summary.Pass, r.Summary.NA, r.Summary.Error)
	} else {
		tw.printf("  %d failing: %s; %d passed, %d not applicable, %d could not decide\n",
			len(fails), auditCounts(r.Summary), r.Summary.Pass, r.Summary.NA, r.Summary.Error)
		for i, f := range fails {
			if i == topFindings {
				tw.printf("  … %d more: see the HTML report or 'perflab audit --workload %s'\n", len(fails)-topFindings, r.Workload.Name)
				break
			}
			tw.printf("  %s %-8s %s  %s\n", sevPaint(style, f.Severity)("✗"), sevPaint(style, f.Severity)(f.Severity.String()), style.Bold(f.Rule), f.Title)
			tw.printf("             %s → expected %s\n", f.Observed, f.Expected)
			if f.Fix != "" {
				for i, line := range strings.Split(f.Fix, "\n") {
					label := "fix:"
					if i > 0 {
						label = "    "
					}
					tw.printf("             %s %s\n", label, style.Blue(line))
				}
			}
		}
	}

	c := d.Comparison
	if c != nil {
		rs := byProbe(rows(c))
		head := "Measurements"
		if d.Suite != "" {
			head += " (" + d.Suite + " suite)"
		}
		if d.Previous != nil && len(c.Sides) == 2 {
			head += fmt.Sprintf(", against the previous check of %s", d.local(d.Previous.At).Format("2006-01-02 15:04"))
		}
		tw.printf("\n%s\n", style.Bold(head))
		for _, p := range c.Pairs {
			tw.printf("%s\n", compare.Headline(c, p))
		}
		writeTableTextAs(tw, c, rs, style, "probe")
		for _, p := range c.Pairs {
			tw.printf("\n")
			writeCausesText(tw, c, p, rs, style)
			tw.printf("%s\n", style.Dim(fmt.Sprintf("  %d better, %d worse, %d same, %d equivalent, %d inconclusive; %s",
				p.Counts[compare.Better], p.Counts[compare.Worse], p.Counts[compare.Same], p.Counts[compare.Equivalent], p.Counts[compare.Inconclusive], legend(c))))
		}
		if d.Previous == nil {
			tw.printf("\n%s\n", style.Dim("  first check of this host under label "+d.Label+": the next one will be compared with it"))
		}
	}
	notes := append([]string(nil), d.Notes...)
	if c != nil {
		notes = append(notes, c.Notes...)
	}
	if len(notes) > 0 {
		tw.printf("\n%s\n", style.Bold("Notes"))
		for _, n := range notes {
			tw.printf("  - %s\n", n)
		}
	}
	if d.HTMLPath != "" {
		tw.printf("\nreport: %s\n", d.HTMLPath)
	}
	return tw.err
}

func sevPaint(st termfmt.Style, s audit.Severity) func(string) string {
	switch s {
	case audit.Critical, audit.High:
		return st.Red
	case audit.Medium:
		return st.Yellow
	}
	return st.Dim
}

func orUnknown(s string) string {
	if s == "" {
		return "(unknown host)"
	}
	return s
}

// byProbe groups rows by probe instead of suite: a check runs one suite,
// named in its heading, and within it only the probe tells "latency" of
// net.tcp from that of memory.latency.
func byProbe(rs []row) []row {
	for i := range rs {
		rs[i].Suite = rs[i].Probe
	}
	return rs
}

// CheckMarkdown writes the audit's Markdown followed by the comparison's.
func CheckMarkdown(w io.Writer, d *CheckDoc) error {
	mw := &errWriter{w: w}
	mw.printf("# perflab check: %s\n\n", mdEscape(orUnknown(d.Host)))
	if d.Previous != nil && d.Comparison != nil && len(d.Comparison.Sides) == 2 {
		mw.printf("Compared with the previous check of %s (%d runs).\n\n", d.Previous.At.UTC().Format("2006-01-02 15:04 UTC"), d.Previous.Runs)
	}
	if mw.err != nil {
		return mw.err
	}
	if err := AuditMarkdown(w, d.Audit, false); err != nil {
		return err
	}
	if d.Comparison != nil {
		if _, err := io.WriteString(w, "\n"); err != nil {
			return err
		}
		if err := Markdown(w, d.Comparison); err != nil {
			return err
		}
	}
	if len(d.Notes) > 0 {
		mw.printf("\n## Notes\n\n")
		for _, n := range d.Notes {
			mw.printf("- %s\n", mdEscape(n))
		}
	}
	return mw.err
}

type checkJSON struct {
	Kind     string         `json:"kind"`
	Schema   int            `json:"schema"`
	Perflab  string         `json:"perflab"`
	Host     string         `json:"host"`
	TakenAt  time.Time      `json:"taken_at"`
	Label    string         `json:"label"`
	Suite    string         `json:"suite,omitempty"`
	Audit    *audit.Report  `json:"audit"`
	Bench    *jsonDoc       `json:"bench"`    // null without measurements
	Previous *CheckPrevious `json:"previous"` // null for a first check
	Notes    []string       `json:"notes"`
	HTML     string         `json:"html,omitempty"`
}

func checkJSONView(d *CheckDoc) checkJSON {
	j := checkJSON{Kind: CheckKind, Schema: CheckSchema, Perflab: d.Perflab, Host: d.Host, TakenAt: d.TakenAt,
		Label: d.Label, Suite: d.Suite, Audit: d.Audit, Previous: d.Previous, Notes: d.Notes, HTML: d.HTMLPath}
	if j.Notes == nil {
		j.Notes = []string{}
	}
	if d.Comparison != nil {
		v := jsonView(d.Comparison)
		j.Bench = &v
	}
	return j
}

// CheckJSON writes the check as one JSON document (docs/check.md): the
// audit report of docs/audit.md and the comparison of docs/compare.md.
func CheckJSON(w io.Writer, d *CheckDoc) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(checkJSONView(d))
}

// findingAreas maps an audit rule's area to the kinds of measurement it
// can move, so the report can put a finding next to the numbers it would
// show up in.
var findingAreas = map[string][]knowledge.Area{
	"cpu":      {knowledge.CPU, knowledge.Syscall, knowledge.Timer},
	"power":    {knowledge.CPU, knowledge.Syscall, knowledge.Timer, knowledge.Network, knowledge.Memory},
	"memory":   {knowledge.Memory},
	"kernel":   {knowledge.Syscall, knowledge.Timer},
	"security": {knowledge.Syscall, knowledge.Network, knowledge.Disk},
	"net":      {knowledge.Network},
	"irq":      {knowledge.Network, knowledge.Disk},
	"block":    {knowledge.Disk},
	"fs":       {knowledge.Disk},
	"cgroup":   {knowledge.All},
	"limits":   {knowledge.Network, knowledge.Syscall},
	"process":  {knowledge.All},
	"virt":     {knowledge.All},
}

// relatedProbes lists the measured probes whose metrics a finding's area
// can move.
func relatedProbes(f audit.Finding, c *compare.Comparison) []string {
	if c == nil {
		return nil
	}
	areas, ok := findingAreas[f.Area]
	if !ok {
		return nil
	}
	seen := map[string]bool{}
	var out []string
	for _, m := range c.Metrics {
		if seen[m.Probe] {
			continue
		}
		if knowledge.Affects(areas, knowledge.AreasOf(m.Probe, m.Metric, m.Unit)) {
			seen[m.Probe] = true
			out = append(out, m.Probe)
		}
	}
	return out
}

// NewCheckDoc is the document of a check's result: the audit, the
// comparison with the previous check (when there is one) and the notes.
func NewCheckDoc(res *check.Result, version, label, suite string) *CheckDoc {
	doc := &CheckDoc{Perflab: version, Host: res.Snapshot.Host.Hostname, TakenAt: res.Snapshot.TakenAt,
		Label: label, Suite: suite, Audit: res.Audit, Comparison: res.Comparison, Notes: res.Notes}
	if res.Previous != nil && res.Comparison != nil && len(res.Comparison.Sides) == 2 {
		doc.Previous = &CheckPrevious{At: res.Previous.At, Runs: len(res.Previous.Runs), SnapshotID: res.Previous.SnapshotID}
	}
	return doc
}
