package report

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/audit"
	"github.com/perflab/perflab/internal/golden"
	"github.com/perflab/perflab/internal/snapshot"
	"github.com/perflab/perflab/internal/termfmt"
)

func sampleReport(t *testing.T) *audit.Report {
	t.Helper()
	fs := []audit.Finding{
		{Rule: "MEM-THP-ENABLED", Title: "thp", Status: audit.Fail, Severity: audit.High, Knob: "/sys/kernel/mm/transparent_hugepage/enabled",
			Observed: "madvise", Expected: "always", Why: "seed 000: 16000 to 28300 TPS", Source: "seed 000",
			Fix: "echo always > /sys/kernel/mm/transparent_hugepage/enabled", Revert: "echo madvise > /sys/kernel/mm/transparent_hugepage/enabled"},
		{Rule: "PERF-KPTR-RESTRICT", Title: "kptr", Status: audit.Fail, Severity: audit.Low, Knob: "kernel.kptr_restrict",
			Observed: "2", Expected: "0 or 1", Why: "[unknown] | frames", Fix: "sysctl -w kernel.kptr_restrict=0\nsysctl -w x=1", Revert: "sysctl -w kernel.kptr_restrict=2"},
		{Rule: "CPU-SMT", Status: audit.Pass, Severity: audit.Medium, Observed: "off"},
		{Rule: "VIRT-STEAL", Status: audit.NA, Severity: audit.Medium, Reason: "bare metal"},
		{Rule: "KERNEL-X", Status: audit.Error, Severity: audit.Low, Reason: "could not decide"},
	}
	s := &snapshot.Snapshot{ID: "abc", TakenAt: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)}
	s.Host.Hostname = "db1"
	w, _ := audit.LookupWorkload("jvm")
	return audit.NewReport(s, w, fs, "v1.0", "host.json")
}

func TestWriteText(t *testing.T) {
	r := sampleReport(t)
	var b bytes.Buffer
	if err := AuditText(&b, r, AuditTextOptions{}); err != nil {
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
	// The lines (observed → expected, fix and revert, a multi-line fix one
	// command per line, errors, the counts) are in the golden file.
	golden.Check(t, filepath.Join("testdata", "golden", "audit-sample.txt.golden"), b.Bytes())
	if strings.Contains(out, "CPU-SMT") || strings.Contains(out, "bare metal") {
		t.Error("pass and na rules listed without --verbose")
	}

	b.Reset()
	_ = AuditText(&b, r, AuditTextOptions{Verbose: true, Style: termfmt.Style{On: true}})
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
	if err := AuditMarkdown(&b, r, false); err != nil {
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
	golden.Check(t, filepath.Join("testdata", "golden", "audit-sample.md.golden"), b.Bytes())
}

// A fix longer than the terminal stays on one line: a wrapped command
// breaks when pasted.
func TestTextKeepsLongCommandsWhole(t *testing.T) {
	r := sampleReport(t)
	long := "for f in /sys/devices/system/cpu/cpu[0-9]*/cpufreq/energy_performance_preference; do echo performance > \"$f\"; done"
	r.Findings[0].Fix = long
	var b bytes.Buffer
	_ = AuditText(&b, r, AuditTextOptions{Width: 60})
	if !strings.Contains(b.String(), long+"\n") {
		t.Errorf("long fix wrapped:\n%s", b.String())
	}
}

// A fix longer than the terminal stays on one line: a wrapped command
// breaks when pasted.
func TestAuditTextKeepsLongCommandsWhole(t *testing.T) {
	r := sampleReport(t)
	long := "for f in /sys/devices/system/cpu/cpu[0-9]*/cpufreq/energy_performance_preference; do echo performance > \"$f\"; done"
	r.Findings[0].Fix = long
	var b bytes.Buffer
	_ = AuditText(&b, r, AuditTextOptions{Width: 60})
	if !strings.Contains(b.String(), long+"\n") {
		t.Errorf("long fix wrapped:\n%s", b.String())
	}
}
