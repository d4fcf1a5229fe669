package metrics

import (
	"sync"

	"github.com/perflab/perflab/internal/audit"
	"github.com/perflab/perflab/internal/snapshot"
	"github.com/prometheus/client_golang/prometheus"
)

var (
	ruleFailedDesc = lazyDesc(Namespace+"_audit_rule_failed",
		"1 when the audit rule fails on this host for the workload, 0 when it passes, does not apply or cannot decide (see perflab_audit_findings).",
		[]string{"rule", "severity", "workload", "area"}, nil)
	findingsDesc = lazyDesc(Namespace+"_audit_findings",
		"Number of audit rules by status (pass, fail, na, error) in the last audit.",
		[]string{"status", "workload"}, nil)
	snapshotTimeDesc = lazyDesc(Namespace+"_audit_snapshot_timestamp_seconds",
		"Unix time at which the audited snapshot was taken.",
		nil, nil)
)

// Findings is a collector for the result of one audit. Update replaces the
// result; a scrape (or a textfile write) reports the latest one.
type Findings struct {
	mu       sync.RWMutex
	workload string
	findings []audit.Finding
	taken    float64
}

// NewFindings returns an empty findings collector: it reports nothing until
// the first Update.
func NewFindings() *Findings { return &Findings{} }

// Update records the findings of an audit of s for workload.
func (f *Findings) Update(s *snapshot.Snapshot, workload string, findings []audit.Finding) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.workload = workload
	f.findings = append([]audit.Finding(nil), findings...)
	f.taken = float64(s.TakenAt.UnixNano()) / 1e9
}

// Describe implements prometheus.Collector.
func (f *Findings) Describe(ch chan<- *prometheus.Desc) {
	ch <- ruleFailedDesc()
	ch <- findingsDesc()
	ch <- snapshotTimeDesc()
}

// Collect implements prometheus.Collector.
func (f *Findings) Collect(ch chan<- prometheus.Metric) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	if f.findings == nil {
		return
	}
	counts := map[audit.Status]int{audit.Pass: 0, audit.Fail: 0, audit.NA: 0, audit.Error: 0}
	for _, x := range f.findings {
		v := 0.0
		if x.Status == audit.Fail {
			v = 1
		}
		counts[x.Status]++
		ch <- constGauge(ruleFailedDesc(), v, x.Rule, x.Severity.String(), f.workload, x.Area)
	}
	for st, n := range counts {
		ch <- constGauge(findingsDesc(), float64(n), string(st), f.workload)
	}
	ch <- constGauge(snapshotTimeDesc(), f.taken)
}
