package audit

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/snapshot"
	"github.com/perflab/perflab/internal/termfmt"
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

func TestWriteText(t *testing.T) {
	r := sampleReport(t)
	var b bytes.Buffer
	if err := r.WriteText(&b, TextOptions{}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if strings.Contains(out, "\x1b[") {
		t.Error("colour written with the style off")
	}
	hi, lo := strings.Index(out, "HIGH (1)"), strings.Index(out, "LOW (1)")
	if hi < 0 || lo < 0 || hi > lo {
		t.Errorf("severity groups missing or out of order:\n%s", out)
	}
	for _, want := range []string{"madvise → expected always", "fix       echo always >", "revert    echo madvise",
		"seed 000: 16000 to 28300 TPS", "ERRORS (1)", "KERNEL-X: could not decide",
		"2 failed (1 high, 1 low), 1 passed, 1 not applicable, 1 errors; 5 rules", "from host.json", "workload jvm"} {
		if !strings.Contains(out, want) {
			t.Errorf("text lacks %q:\n%s", want, out)
		}
	}
	// A multi-line fix keeps one command per line, aligned under the text.
	if !strings.Contains(out, "sysctl -w kernel.kptr_restrict=0\n              sysctl -w x=1") {
		t.Errorf("multi-line fix not kept:\n%s", out)
	}
	if strings.Contains(out, "CPU-SMT") || strings.Contains(out, "bare metal") {
		t.Error("pass and na rules listed without --verbose")
	}

	b.Reset()
	_ = r.WriteText(&b, TextOptions{Verbose: true, Style: termfmt.Style{On: true}})
	out = b.String()
	if !strings.Contains(out, "CPU-SMT") || !strings.Contains(out, "bare metal") || !strings.Contains(out, "\x1b[31m") {
		t.Errorf("verbose coloured text lacks pass/na rows or colour:\n%s", out)
	}
}

func TestWrap(t *testing.T) {
	long := strings.Repeat("word ", 40)
	for _, l := range wrap(long, 30) {
		if visibleLen(l) > 30 {
			t.Errorf("line %q longer than 30", l)
		}
	}
	if got := wrap("/a/very/long/path/that/cannot/break", 20); len(got) != 1 {
		t.Errorf("an unbreakable word was split: %q", got)
	}
	if n := visibleLen("\x1b[31mred\x1b[0m"); n != 3 {
		t.Errorf("visibleLen with ANSI = %d", n)
	}
}

func TestWriteMarkdown(t *testing.T) {
	r := sampleReport(t)
	var b bytes.Buffer
	if err := r.WriteMarkdown(&b, false); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	rows := 0
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "| fail") || strings.HasPrefix(l, "| error") {
			rows++
			// 7 columns: 8 unescaped pipes.
			if n := strings.Count(l, "|") - strings.Count(l, `\|`); n != 8 {
				t.Errorf("row has %d cell separators: %s", n, l)
			}
		}
		if strings.HasPrefix(l, "| pass") {
			t.Error("passing row without verbose")
		}
	}
	if rows != 3 {
		t.Errorf("%d rows, want 2 fails and 1 error:\n%s", rows, out)
	}
	if !strings.Contains(out, "`sysctl -w kernel.kptr_restrict=0`<br>`sysctl -w x=1`") {
		t.Errorf("multi-line fix not rendered as code spans:\n%s", out)
	}
	if !strings.Contains(out, "**2 failed**") || !strings.Contains(out, "### Why") {
		t.Errorf("summary or why section missing:\n%s", out)
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

// A fix longer than the terminal stays on one line: a wrapped command
// breaks when pasted.
func TestTextKeepsLongCommandsWhole(t *testing.T) {
	r := sampleReport(t)
	long := "for f in /sys/devices/system/cpu/cpu[0-9]*/cpufreq/energy_performance_preference; do echo performance > \"$f\"; done"
	r.Findings[0].Fix = long
	var b bytes.Buffer
	_ = r.WriteText(&b, TextOptions{Width: 60})
	if !strings.Contains(b.String(), long+"\n") {
		t.Errorf("long fix wrapped:\n%s", b.String())
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
