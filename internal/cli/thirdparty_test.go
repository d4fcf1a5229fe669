package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/audit"
	"github.com/perflab/perflab/internal/fixture"
)

// Real trees nobody here wrote (testdata/roots/procfs and node_exporter,
// from prometheus/procfs and node_exporter): snapshot and the audit of every
// workload run on them as a user would run them, with no panic, no rule in
// error, and exit codes that follow --fail-on. node_exporter's host runs
// intel_pstate powersave without HWP, so CPU-GOVERNOR fails for every
// workload.
func TestThirdPartyTrees(t *testing.T) {
	for _, tree := range []string{"procfs", "node_exporter"} {
		root := fixture.Dir(tree)
		for _, format := range []string{"text", "json"} {
			code, out, stderr := runCLI(t, "snapshot", "--root", root, "--format", format)
			if code != 0 || out == "" {
				t.Fatalf("%s: snapshot --format %s: exit %d, stderr %q", tree, format, code, stderr)
			}
		}
		for _, w := range audit.Workloads() {
			code, out, stderr := runCLI(t, "audit", "--root", root, "--workload", w, "--format", "json")
			if code != 0 {
				t.Fatalf("%s/%s: audit exit %d (want 0 with --fail-on none), stderr %q", tree, w, code, stderr)
			}
			var rep struct {
				Summary struct {
					Total, Fail, Error int
				}
				Findings []struct {
					Rule, Status, Reason string
				}
			}
			if err := json.Unmarshal([]byte(out), &rep); err != nil {
				t.Fatalf("%s/%s: audit JSON: %v", tree, w, err)
			}
			if rep.Summary.Total != len(audit.Rules()) || rep.Summary.Error != 0 {
				t.Errorf("%s/%s: %d findings for %d rules, %d errors", tree, w, rep.Summary.Total, len(audit.Rules()), rep.Summary.Error)
			}
			governor := ""
			for _, f := range rep.Findings {
				if f.Status == "error" {
					t.Errorf("%s/%s: %s error: %s", tree, w, f.Rule, f.Reason)
				}
				if f.Rule == "CPU-GOVERNOR" {
					governor = f.Status
				}
			}
			if tree == "node_exporter" && governor != "fail" {
				t.Errorf("%s/%s: CPU-GOVERNOR %q, want fail (powersave without HWP)", tree, w, governor)
			}
			// --fail-on info: exit 1 exactly when something fails.
			want := 0
			if rep.Summary.Fail > 0 {
				want = 1
			}
			code, _, stderr = runCLI(t, "audit", "--root", root, "--workload", w, "--fail-on", "info")
			if code != want {
				t.Errorf("%s/%s --fail-on info: exit %d, want %d (%d failing), stderr %q", tree, w, code, want, rep.Summary.Fail, stderr)
			}
		}
		// Their processes, as --pid targets (procfs's 26231 has limits,
		// status, mountinfo and cgroup files; node_exporter's only stat and
		// mountinfo).
		pids := map[string][]string{"procfs": {"26231", "27079"}, "node_exporter": {"1", "10"}}[tree]
		for _, pid := range pids {
			code, out, stderr := runCLI(t, "audit", "--root", root, "--pid", pid, "--workload", "kv", "--format", "json")
			if code != 0 || strings.Contains(out, `"status": "error"`) {
				t.Errorf("%s --pid %s: exit %d, stderr %q, error findings: %v", tree, pid, code, stderr, strings.Contains(out, `"status": "error"`))
			}
		}
		for _, format := range []string{"text", "md", "prom"} {
			code, out, stderr := runCLI(t, "audit", "--root", root, "--format", format, "--trusted", "-v")
			if code != 0 || strings.TrimSpace(out) == "" {
				t.Errorf("%s: audit --format %s: exit %d, stderr %q", tree, format, code, stderr)
			}
		}
	}
}
