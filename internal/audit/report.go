package audit

import (
	"encoding/json"
	"io"
	"time"

	"github.com/perflab/perflab/internal/snapshot"
)

// ReportSchema is the version of the audit JSON document described in
// docs/audit.md. It changes only when a field is removed or changes meaning;
// new fields may appear within a version.
const ReportSchema = 1

// Report is one audit of one snapshot for one workload: the document behind
// every output format.
type Report struct {
	Schema     int         `json:"schema"`
	Perflab    string      `json:"perflab"`     // perflab version that ran the audit
	Host       string      `json:"host"`        // hostname from the snapshot
	SnapshotID string      `json:"snapshot_id"` // snapshot.ID
	TakenAt    time.Time   `json:"taken_at"`    // when the snapshot was taken
	Source     string      `json:"source"`      // "live", a --root directory or a --snapshot file
	Workload   WorkloadRef `json:"workload"`
	Summary    Summary     `json:"summary"`
	Findings   []Finding   `json:"findings"` // every rule, highest severity first
}

// WorkloadRef names the workload a report was judged against.
type WorkloadRef struct {
	Name    string `json:"name"`
	Alias   string `json:"alias,omitempty"` // the application name it was chosen by ("redis" for kv)
	Base    string `json:"base"`            // the built-in it is or extends
	Trusted bool   `json:"trusted"`         // --trusted: single tenant
}

// Label is "redis → kv" for an alias, else the name.
func (w WorkloadRef) Label() string { return workloadLabel(w.Name, w.Alias) }

// Summary counts findings by status, and failures by severity.
type Summary struct {
	Total          int            `json:"total"`
	Pass           int            `json:"pass"`
	Fail           int            `json:"fail"`
	NA             int            `json:"na"`
	Error          int            `json:"error"`
	FailBySeverity map[string]int `json:"fail_by_severity"` // every severity name, zero included
	Worst          string         `json:"worst,omitempty"`  // highest failing severity; absent when nothing fails
}

// NewReport wraps findings from Run with where they came from.
func NewReport(s *snapshot.Snapshot, w *Workload, findings []Finding, version, source string) *Report {
	r := &Report{
		Schema:     ReportSchema,
		Perflab:    version,
		Host:       s.Host.Hostname,
		SnapshotID: s.ID,
		TakenAt:    s.TakenAt,
		Source:     source,
		Workload:   WorkloadRef{Name: w.Name, Alias: w.Alias, Base: w.Base(), Trusted: w.Trusted},
		Summary:    Summarize(findings),
		Findings:   findings,
	}
	if r.Findings == nil {
		r.Findings = []Finding{}
	}
	return r
}

// Summarize counts findings.
func Summarize(fs []Finding) Summary {
	sum := Summary{Total: len(fs), FailBySeverity: map[string]int{}}
	for _, n := range severityNames {
		sum.FailBySeverity[n] = 0
	}
	for _, f := range fs {
		switch f.Status {
		case Pass:
			sum.Pass++
		case Fail:
			sum.Fail++
			sum.FailBySeverity[f.Severity.String()]++
		case NA:
			sum.NA++
		case Error:
			sum.Error++
		}
	}
	if worst, any := Worst(fs); any {
		sum.Worst = worst.String()
	}
	return sum
}

// FailsAt reports whether any finding fails at or above severity min.
func FailsAt(fs []Finding, min Severity) bool {
	worst, any := Worst(fs)
	return any && worst >= min
}

// WriteJSON writes the report as indented JSON (docs/audit.md).
func (r *Report) WriteJSON(w io.Writer) error {
	// as a json.Encoder with SetIndent("", "  ") writes it
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	out := appendIndented(make([]byte, 0, len(b)+len(b)/2), b, "  ")
	_, err = w.Write(append(out, '\n'))
	return err
}
