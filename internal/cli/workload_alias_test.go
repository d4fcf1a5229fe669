package cli

import (
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/fixture"
)

// Defect 11: users type application names. --workload redis is judged as
// kv and says so; the help names the aliases and their classes.
func TestAuditWorkloadAlias(t *testing.T) {
	root := fixture.Dir("metal")
	code, out, stderr := runCLI(t, "audit", "--root", root, "--workload", "redis")
	if code != 0 || !strings.Contains(out, "workload redis → kv") {
		t.Fatalf("exit %d, stderr %q, out:\n%s", code, stderr, out)
	}
	code, out, _ = runCLI(t, "audit", "--root", root, "--workload", "etcd", "--format", "json")
	if code != 0 || !strings.Contains(out, `"name": "database"`) || !strings.Contains(out, `"alias": "etcd"`) {
		t.Errorf("etcd: exit %d, out %.400s", code, out)
	}
	code, out, _ = runCLI(t, "audit", "--help")
	if code != 0 || !strings.Contains(out, "redis, valkey, memcached → kv") || !strings.Contains(out, "java → jvm") {
		t.Errorf("help does not list the aliases:\n%s", out)
	}
	code, out, _ = runCLI(t, "rules", "--workloads")
	if code != 0 || !strings.Contains(out, "nginx        → web") {
		t.Errorf("rules --workloads:\n%s", out)
	}
	code, _, stderr = runCLI(t, "audit", "--root", root, "--workload", "redsi")
	if code != 2 || !strings.Contains(stderr, "applications: redis") {
		t.Errorf("unknown workload: exit %d, %q", code, stderr)
	}
}
