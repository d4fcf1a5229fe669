package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/perflab/perflab/internal/audit"
	"github.com/perflab/perflab/internal/clierr"
	"github.com/perflab/perflab/internal/fixture"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// The fixture trees are read in place: audit only reads its root.
var metalRoot = fixture.Dir("metal")

func TestAuditExitCodes(t *testing.T) {
	dir := t.TempDir()
	notLinux := filepath.Join(dir, "empty")
	os.Mkdir(notLinux, 0o755)
	corrupt := filepath.Join(dir, "corrupt.json")
	os.WriteFile(corrupt, []byte(`{"schema": 1, "cpu": "not an object"}`), 0o644)
	notSnap := filepath.Join(dir, "other.json")
	os.WriteFile(notSnap, []byte(`{"hello": "world"}`), 0o644)
	newer := filepath.Join(dir, "newer.json")
	os.WriteFile(newer, []byte(`{"schema": 999}`), 0o644)
	profile := filepath.Join(dir, "bad.yaml")
	os.WriteFile(profile, []byte("extends: web\nset:\n  nonsense: 1\n"), 0o644)

	for _, tc := range []struct {
		name string
		args []string
		code int
		msg  string // in stderr
	}{
		// metal runs the powersave governor: a high finding for web.
		{"fails at high", []string{"audit", "--root", metalRoot, "--workload", "web", "--fail-on", "high"}, clierr.Check, "--fail-on high"},
		{"fails at info", []string{"audit", "--root", metalRoot, "--workload", "web", "--fail-on", "info"}, clierr.Check, ""},
		{"nothing critical", []string{"audit", "--root", metalRoot, "--workload", "web", "--fail-on", "critical"}, clierr.OK, ""},
		{"default never fails", []string{"audit", "--root", metalRoot, "--workload", "web"}, clierr.OK, ""},
		{"explicit none", []string{"audit", "--root", metalRoot, "--fail-on", "NONE"}, clierr.OK, ""},
		{"unknown severity", []string{"audit", "--root", metalRoot, "--fail-on", "severe"}, clierr.Usage, "unknown severity"},
		{"unknown workload", []string{"audit", "--root", metalRoot, "--workload", "nosuch"}, clierr.Usage, "unknown workload"},
		{"bad profile", []string{"audit", "--root", metalRoot, "--workload", profile}, clierr.Usage, "unknown knob"},
		{"unknown format", []string{"audit", "--root", metalRoot, "--format", "xml"}, clierr.Usage, "--format"},
		{"root not linux", []string{"audit", "--root", notLinux}, clierr.Usage, "neither proc/ nor sys/"},
		{"root missing", []string{"audit", "--root", filepath.Join(dir, "nope")}, clierr.Usage, "nope"},
		{"corrupt snapshot", []string{"audit", "--snapshot", corrupt}, clierr.Usage, "corrupt snapshot"},
		{"not a snapshot", []string{"audit", "--snapshot", notSnap}, clierr.Usage, "not a perflab snapshot"},
		{"newer snapshot", []string{"audit", "--snapshot", newer}, clierr.Usage, "upgrade perflab"},
		{"missing snapshot", []string{"audit", "--snapshot", filepath.Join(dir, "none.json")}, clierr.Usage, "check the path"},
		{"root and snapshot", []string{"audit", "--root", metalRoot, "--snapshot", newer}, clierr.Usage, "both"},
		{"pid with snapshot", []string{"audit", "--snapshot", newer, "--pid", "1"}, clierr.Usage, "--pid"},
		{"pid in the tree", []string{"audit", "--root", metalRoot, "--pid", "4243"}, clierr.OK, ""},
		{"pid not running", []string{"audit", "--root", metalRoot, "--pid", "99999"}, clierr.Usage, "no such process"},
		{"stray argument", []string{"audit", "extra"}, clierr.Usage, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := runCLI(t, tc.args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d; stderr: %s", code, tc.code, stderr)
			}
			if !strings.Contains(stderr, tc.msg) {
				t.Errorf("stderr %q lacks %q", stderr, tc.msg)
			}
			if code != clierr.OK && strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
				t.Errorf("error is not one line: %q", stderr)
			}
		})
	}
}

func TestAuditFormats(t *testing.T) {
	code, out, _ := runCLI(t, "audit", "--root", metalRoot, "--workload", "jvm", "--format", "json")
	if code != 0 {
		t.Fatal(code)
	}
	var rep audit.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Workload.Name != "jvm" || rep.Source != metalRoot || len(rep.Findings) != len(audit.Rules()) || rep.Host != "perflab-metal" {
		t.Errorf("json report: workload %s source %s host %s, %d findings", rep.Workload.Name, rep.Source, rep.Host, len(rep.Findings))
	}

	_, md, _ := runCLI(t, "audit", "--root", metalRoot, "--workload", "jvm", "--format", "md")
	if !strings.Contains(md, "| fail | high | `MEM-THP-ENABLED` |") {
		t.Errorf("markdown lacks the jvm THP row:\n%s", md)
	}

	_, text, _ := runCLI(t, "audit", "--root", metalRoot, "--workload", "jvm")
	if !strings.Contains(text, "MEM-THP-ENABLED") || !strings.Contains(text, "→ expected always") || strings.Contains(text, "\x1b[") {
		t.Errorf("text report (not a TTY, so no colour):\n%s", text)
	}
	_, verbose, _ := runCLI(t, "audit", "--root", metalRoot, "-v")
	if !strings.Contains(verbose, "PASSED") || !strings.Contains(verbose, "NOT APPLICABLE") {
		t.Errorf("--verbose lists no pass/na:\n%s", verbose)
	}

	// --trusted turns the mitigation verdict into a performance one.
	_, trusted, _ := runCLI(t, "audit", "--root", metalRoot, "--trusted", "--format", "json")
	var tr audit.Report
	json.Unmarshal([]byte(trusted), &tr)
	for _, f := range tr.Findings {
		if f.Rule == "KERNEL-MITIGATIONS" && (f.Status != audit.Fail || !tr.Workload.Trusted) {
			t.Errorf("trusted metal: mitigations %s", f.Status)
		}
	}
}

func TestAuditColour(t *testing.T) {
	t.Setenv("PERFLAB_FORCE_COLOR", "1")
	_, out, _ := runCLI(t, "audit", "--root", metalRoot, "--workload", "web")
	if !strings.Contains(out, "\x1b[") {
		t.Error("forced colour not written")
	}
	t.Setenv("NO_COLOR", "1")
	_, out, _ = runCLI(t, "audit", "--root", metalRoot, "--workload", "web")
	if strings.Contains(out, "\x1b[") {
		t.Error("colour written with NO_COLOR set")
	}
}

func TestAuditPromFileIsAtomicAndParses(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "perflab.prom")
	os.WriteFile(path, []byte("old content\n"), 0o644)
	code, stdout, stderr := runCLI(t, "audit", "--root", metalRoot, "--format", "prom", "-o", path, "--workload", "web", "--fail-on", "high")
	if code != clierr.Check {
		t.Fatalf("exit %d (%s), want 1: the textfile is written and the check still fails", code, stderr)
	}
	if stdout != "" {
		t.Errorf("stdout not empty with -o: %q", stdout)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := p.TextToMetricFamilies(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("textfile does not parse: %v", err)
	}
	if mfs["perflab_audit_rule_failed"] == nil || mfs["perflab_build_info"] == nil {
		t.Errorf("families: %v", mfs)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Errorf("temp files left behind: %v", ents)
	}
	// A failed write (directory gone) leaves nothing and exits 3.
	code, _, stderr = runCLI(t, "audit", "--root", metalRoot, "--format", "prom", "-o", filepath.Join(dir, "no", "x.prom"))
	if code != clierr.Runtime || !strings.Contains(stderr, "cannot write") {
		t.Errorf("unwritable -o: exit %d, %s", code, stderr)
	}
}

// perflab audit on the machine running the tests: every rule decides.
func TestAuditLiveHasNoErrors(t *testing.T) {
	code, out, stderr := runCLI(t, "audit", "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var rep audit.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Source != "live" || rep.Summary.Error != 0 {
		for _, f := range rep.Findings {
			if f.Status == audit.Error {
				t.Errorf("%s: error: %s", f.Rule, f.Reason)
			}
		}
		t.Errorf("source %s, %d errors", rep.Source, rep.Summary.Error)
	}
}

func TestRulesCommand(t *testing.T) {
	code, out, _ := runCLI(t, "rules")
	if code != 0 || !strings.Contains(out, "CPU-GOVERNOR") || !strings.Contains(out, "rules; 'perflab rules ID'") {
		t.Errorf("rules list (exit %d):\n%s", code, out)
	}
	if n := strings.Count(out, "\n"); n < len(audit.Rules()) {
		t.Errorf("%d lines for %d rules", n, len(audit.Rules()))
	}
	code, out, _ = runCLI(t, "rules", "mem-thp-enabled")
	for _, want := range []string{"MEM-THP-ENABLED", "severity", "knob       /sys/kernel/mm/transparent_hugepage/enabled", "28300", "source"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("rules MEM-THP-ENABLED lacks %q:\n%s", want, out)
		}
	}
	code, _, stderr := runCLI(t, "rules", "NOPE")
	if code != clierr.Usage || !strings.Contains(stderr, `no rule "NOPE"`) {
		t.Errorf("unknown rule: exit %d %s", code, stderr)
	}
	code, out, _ = runCLI(t, "rules", "--format", "json")
	var docs []audit.RuleDoc
	if code != 0 || json.Unmarshal([]byte(out), &docs) != nil || len(docs) != len(audit.Rules()) {
		t.Errorf("rules json: exit %d, %d docs", code, len(docs))
	}
	code, out, _ = runCLI(t, "rules", "--workloads")
	if code != 0 || !strings.Contains(out, "container-host") {
		t.Errorf("rules --workloads:\n%s", out)
	}
}

// -o on a device or FIFO writes into it; it must never rename a temp file
// over it (as root that would replace /dev/null with a regular file).
func TestAuditOutputToSpecialFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatalf("mkfifo: %v", err)
	}
	got := make(chan []byte)
	go func() {
		b, _ := os.ReadFile(fifo)
		got <- b
	}()
	code, _, stderr := runCLI(t, "audit", "--root", metalRoot, "--format", "json", "-o", fifo)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if b := <-got; !json.Valid(b) {
		t.Errorf("fifo got %d bytes of invalid JSON", len(b))
	}
	fi, err := os.Lstat(fifo)
	if err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the FIFO was replaced: %v %v", fi.Mode(), err)
	}
	code, _, stderr = runCLI(t, "audit", "--root", metalRoot, "-o", os.DevNull)
	if fi, _ := os.Stat(os.DevNull); code != 0 || fi.Mode()&os.ModeDevice == 0 {
		t.Fatalf("-o /dev/null: exit %d (%s), mode %v", code, stderr, fi.Mode())
	}
}
