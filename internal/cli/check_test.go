package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/clierr"
)

// strictProfile is a workload whose open-files expectation no host meets,
// so the audit has a failing finding to report on any machine.
func strictProfile(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "strict.yaml")
	yaml := "name: strict\nextends: general\nset:\n  limits.nofile: \">=1000000000\"\n"
	if err := os.WriteFile(p, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// tinyCheck measures two real probes for a few hundred milliseconds.
var tinyCheck = []string{"--suite", "syscall,sched.ctxswitch", "--param", "duration=5ms", "--max-runs", "6"}

type checkDocJSON struct {
	Kind  string `json:"kind"`
	Label string `json:"label"`
	Audit struct {
		Findings []struct {
			Rule, Status string
		} `json:"findings"`
		Summary struct{ Fail int } `json:"summary"`
	} `json:"audit"`
	Bench *struct {
		Sides []struct {
			Name   string   `json:"name"`
			RunIDs []string `json:"run_ids"`
		} `json:"sides"`
		Metrics []struct{ Probe, Metric string } `json:"metrics"`
		Pairs   []struct {
			Deltas []struct{ Verdict string } `json:"deltas"`
		} `json:"pairs"`
	} `json:"bench"`
	Previous *struct{ Runs int } `json:"previous"`
	HTML     string              `json:"html"`
}

func TestCheckEndToEnd(t *testing.T) {
	testenv := t.TempDir()
	t.Setenv("XDG_DATA_HOME", filepath.Join(testenv, "xdg"))
	db := filepath.Join(testenv, "runs.db")
	html := filepath.Join(testenv, "report.html")
	profile := strictProfile(t)
	args := append([]string{"--db", db, "-o", html, "--workload", profile, "--format", "json"}, tinyCheck...)

	// First check: audit, measurements, stored, no previous check.
	code, out, stderr := runCLI(t, append([]string{"check"}, args...)...)
	if code != clierr.OK {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	var first checkDocJSON
	if err := json.Unmarshal([]byte(out), &first); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if first.Kind != "perflab-check" || first.Label != "check" || first.Previous != nil || first.HTML != html {
		t.Fatalf("first check: %+v", first)
	}
	if first.Audit.Summary.Fail == 0 || !failed(first, "LIMITS-NOFILE") {
		t.Fatalf("the strict profile must fail LIMITS-NOFILE: %+v", first.Audit.Findings)
	}
	if first.Bench == nil || len(first.Bench.Sides) != 1 || len(first.Bench.Sides[0].RunIDs) != 2 {
		t.Fatalf("first check must report its 2 runs alone: %+v", first.Bench)
	}
	probes := map[string]bool{}
	for _, m := range first.Bench.Metrics {
		probes[m.Probe] = true
	}
	if !probes["syscall"] || !probes["sched.ctxswitch"] {
		t.Fatalf("metrics of %v, want syscall and sched.ctxswitch", probes)
	}
	if !strings.Contains(stderr, "stored 2 run(s)") {
		t.Errorf("stderr does not say what was stored:\n%s", stderr)
	}
	page, err := os.ReadFile(html)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`<table id="findings">`, `data-rule="LIMITS-NOFILE"`, `id="perflab-data"`, `"metric":"getppid"`, "first check"} {
		if !bytes.Contains(page, []byte(want)) {
			t.Errorf("HTML lacks %q", want)
		}
	}

	// Second check: compared with the first, in text.
	textArgs := append([]string{"--db", db, "-o", html, "--workload", profile}, tinyCheck...)
	code, out, stderr = runCLI(t, append([]string{"check"}, textArgs...)...)
	if code != clierr.OK {
		t.Fatalf("second check: exit %d\n%s", code, stderr)
	}
	for _, want := range []string{"perflab check:", "Audit", "LIMITS-NOFILE", "fix: ", "against the previous check of", "previous median", "now median", "Likely causes", "report: " + html} {
		if !strings.Contains(out, want) {
			t.Errorf("second check's summary lacks %q:\n%s", want, out)
		}
	}
	page, _ = os.ReadFile(html)
	if !bytes.Contains(page, []byte(`id="vs-previous"><b>`)) || !bytes.Contains(page, []byte("than the previous check")) {
		t.Error("second report does not compare with the previous check")
	}

	// Third check, JSON: the previous check is the second (2 runs), not
	// both earlier ones pooled.
	code, out, stderr = runCLI(t, append([]string{"check"}, args...)...)
	if code != clierr.OK {
		t.Fatalf("third check: exit %d\n%s", code, stderr)
	}
	var third checkDocJSON
	if err := json.Unmarshal([]byte(out), &third); err != nil {
		t.Fatal(err)
	}
	if third.Previous == nil || third.Previous.Runs != 2 || len(third.Bench.Sides) != 2 ||
		third.Bench.Sides[0].Name != "previous" || len(third.Bench.Sides[0].RunIDs) != 2 || len(third.Bench.Pairs) != 1 {
		t.Fatalf("third check must compare with the second only: %+v", third.Bench)
	}
	if n := len(third.Bench.Pairs[0].Deltas); n != len(third.Bench.Metrics) {
		t.Errorf("%d verdicts for %d metrics", n, len(third.Bench.Metrics))
	}

	// --fail-on: the strict profile fails at low.
	code, _, stderr = runCLI(t, "check", "--no-bench", "--workload", profile, "-o", "", "--fail-on", "low")
	if code != clierr.Check || !strings.Contains(stderr, "--fail-on low") {
		t.Errorf("--fail-on low: exit %d, %s", code, stderr)
	}
}

func failed(d checkDocJSON, rule string) bool {
	for _, f := range d.Audit.Findings {
		if f.Rule == rule && f.Status == "fail" {
			return true
		}
	}
	return false
}

// --no-bench is the audit alone: quick, nothing stored, no database made.
func TestCheckNoBench(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("XDG_DATA_HOME", filepath.Join(dir, "xdg"))
	t.Chdir(dir)
	code, out, stderr := runCLI(t, "check", "--no-bench", "--format", "md", "--workload", strictProfile(t))
	if code != clierr.OK {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	if !strings.Contains(out, "# perflab check:") || !strings.Contains(out, "LIMITS-NOFILE") || strings.Contains(out, "perflab compare") {
		t.Errorf("audit-only Markdown:\n%s", out)
	}
	page, err := os.ReadFile(filepath.Join(dir, DefaultCheckReport))
	if err != nil {
		t.Fatalf("the default report file: %v", err)
	}
	if !bytes.Contains(page, []byte("Nothing was measured")) || !bytes.Contains(page, []byte(`data-rule="LIMITS-NOFILE"`)) {
		t.Error("audit-only report lacks the findings or the note")
	}
	if _, err := os.Stat(filepath.Join(dir, "xdg", "perflab")); !os.IsNotExist(err) {
		t.Errorf("--no-bench created the run database: %v", err)
	}
}

func TestCheckBadFlags(t *testing.T) {
	t.Setenv("XDG_DATA_HOME", t.TempDir())
	dir := t.TempDir()
	t.Chdir(dir)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--format", "xml"}, "--format"},
		{[]string{"--fail-on", "severe"}, "--fail-on"},
		{[]string{"--workload", "nosuch"}, "nosuch"},
		{[]string{"--suite", "nosuch"}, "nosuch"},
		{[]string{"--suite", ","}, "--suite"},
		{[]string{"--no-bench", "--suite", "cpu"}, "--no-bench"},
		{[]string{"--max-runs", "2"}, "--max-runs"},
		{[]string{"--budget", "-1s"}, "--budget"},
		{[]string{"--param", "bogus=1"}, "bogus"},
		{[]string{"-o", "-"}, "--format html"},
		{[]string{"--label", " "}, "--label"},
		{[]string{"--dir", filepath.Join(dir, "missing")}, "--dir"},
		{[]string{"--db", filepath.Join(dir, "no", "such", "dir", "x.db")}, ""},
		{[]string{"extra"}, "unknown command"},
	} {
		code, _, stderr := runCLI(t, append([]string{"check"}, tc.args...)...)
		if code != clierr.Usage || !strings.Contains(stderr, tc.want) || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
			t.Errorf("check %v: exit %d, stderr %q; want exit 2 naming %q on one line", tc.args, code, stderr, tc.want)
		}
	}
	// None of them measured anything or wrote a report.
	if _, err := os.Stat(filepath.Join(dir, DefaultCheckReport)); !os.IsNotExist(err) {
		t.Errorf("a rejected command wrote a report: %v", err)
	}
}
