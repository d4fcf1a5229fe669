package audit

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/snapshot"
)

func sampleReport(t *testing.T) *Report {
	t.Helper()
	fs := []Finding{
		{Rule: "MEM-THP-ENABLED", Title: "thp", Status: Fail, Severity: High, Knob: "/sys/kernel/mm/transparent_hugepage/enabled",
			Observed: "madvise", Expected: "always", Why: "seed 000: 16000 to 28300 TPS", Source: "seed 000",
			Fix: "echo always > /sys/kernel/mm/transparent_hugepage/enabled", Revert: "echo madvise > /sys/kernel/mm/transparent_hugepage/enabled"},
		{Rule: "PERF-KPTR-RESTRICT", Title: "kptr", Status: Fail, Severity: Low, Knob: "kernel.kptr_restrict",
			Observed: "2", Expected: "0 or 1", Why: "[unknown] | frames", Fix: "sysctl -w kernel.kptr_restrict=0\nsysctl -w x=1", Revert: "sysctl -w kernel.kptr_restrict=2"},
		{Rule: "CPU-SMT", Status: Pass, Severity: Medium, Observed: "off"},
		{Rule: "VIRT-STEAL", Status: NA, Severity: Medium, Reason: "bare metal"},
		{Rule: "KERNEL-X", Status: Error, Severity: Low, Reason: "could not decide"},
	}
	s := &snapshot.Snapshot{ID: "abc", TakenAt: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)}
	s.Host.Hostname = "db1"
	w, _ := LookupWorkload("jvm")
	return NewReport(s, w, fs, "v1.0", "host.json")
}

func TestSummary(t *testing.T) {
	r := sampleReport(t)
	s := r.Summary
	if s.Total != 5 || s.Pass != 1 || s.Fail != 2 || s.NA != 1 || s.Error != 1 || s.Worst != "high" {
		t.Errorf("summary %+v", s)
	}
	if s.FailBySeverity["high"] != 1 || s.FailBySeverity["low"] != 1 || s.FailBySeverity["critical"] != 0 {
		t.Errorf("by severity %v", s.FailBySeverity)
	}
	if _, ok := s.FailBySeverity["info"]; !ok {
		t.Error("every severity must be present in fail_by_severity")
	}
	if !FailsAt(r.Findings, High) || FailsAt(r.Findings, Critical) || !FailsAt(r.Findings, Info) {
		t.Error("FailsAt threshold wrong")
	}
	if FailsAt(r.Findings[2:], Info) {
		t.Error("pass, na and error findings must not fail the check")
	}
}

func TestWriteJSON(t *testing.T) {
	r := sampleReport(t)
	var b bytes.Buffer
	if err := r.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	var back map[string]any
	if err := json.Unmarshal(b.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	// The documented top-level fields (docs/audit.md).
	for _, k := range []string{"schema", "perflab", "host", "snapshot_id", "taken_at", "source", "workload", "summary", "findings"} {
		if _, ok := back[k]; !ok {
			t.Errorf("JSON lacks %q", k)
		}
	}
	var rep Report
	if err := json.Unmarshal(b.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Schema != ReportSchema || len(rep.Findings) != 5 || rep.Findings[0].Severity != High || rep.Workload.Base != "jvm" {
		t.Errorf("round trip: %+v", rep)
	}
	f := back["findings"].([]any)[0].(map[string]any)
	if f["severity"] != "high" || f["status"] != "fail" {
		t.Errorf("severity and status must be words: %v", f)
	}
}

// Defect 11: every alias names a built-in, resolves to a copy of it that
// remembers the alias, and reports show "alias → class".
func TestWorkloadAliases(t *testing.T) {
	want := map[string]string{"redis": "kv", "memcached": "kv", "nginx": "web", "mysql": "database",
		"mariadb": "database", "postgresql": "database", "java": "jvm", "etcd": "database"}
	for alias, class := range want {
		w, err := ResolveWorkload(alias)
		if err != nil {
			t.Fatalf("%s: %v", alias, err)
		}
		base, _ := LookupWorkload(class)
		if w.Name != class || w.Alias != alias || w.Base() != class || !reflect.DeepEqual(w.Targets, base.Targets) {
			t.Errorf("%s: name %q alias %q base %q, want %s with its targets", alias, w.Name, w.Alias, w.Base(), class)
		}
		if w.Label() != alias+" → "+class {
			t.Errorf("%s: label %q", alias, w.Label())
		}
	}
	known := map[string]bool{}
	for _, n := range Workloads() {
		known[n] = true
	}
	for _, a := range WorkloadAliases() {
		if !known[a.Workload] || known[a.Name] {
			t.Errorf("alias %s → %s: target not built in, or alias shadows a built-in", a.Name, a.Workload)
		}
	}
	if w, _ := LookupWorkload("Redis"); w == nil || w.Alias != "redis" {
		t.Errorf("aliases are case-insensitive: %+v", w)
	}
	p, err := ParseProfile("mine.yaml", []byte("extends: redis\n"))
	if err != nil || p.Base() != "kv" || p.Alias != "" || p.Label() != "mine" {
		t.Errorf("profile extending an alias: %+v, %v", p, err)
	}
}
