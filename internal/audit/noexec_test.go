package audit_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/testenv"
)

// TestAuditPathStartsNoProcess keeps the promise that snapshot and audit
// only read files (and ethtool ioctls): safe on a production host, and
// identical on a captured tree. A collector that shelled out to ethtool or
// sysctl would break both, so neither os/exec nor a raw fork/exec may be
// reachable from the packages a snapshot and an audit run through.
func TestAuditPathStartsNoProcess(t *testing.T) {
	goBin := testenv.RequireTool(t, "go")
	pkgs := []string{"./internal/snapshot", "./internal/audit", "./internal/hostfs"}
	cmd := exec.Command(goBin, append([]string{"list", "-deps", "-f", "{{if not .Standard}}{{.Dir}}{{end}} {{.ImportPath}}"}, pkgs...)...)
	cmd.Dir = filepath.Join("..", "..")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var ours []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		dir, path, _ := strings.Cut(line, " ")
		if path == "os/exec" {
			t.Errorf("os/exec is reachable from %v", pkgs)
		}
		if dir != "" && strings.HasPrefix(path, "github.com/perflab/perflab/") {
			ours = append(ours, dir)
		}
	}
	if len(ours) < 3 {
		t.Fatalf("go list found only %v", ours)
	}
	// os.StartProcess and syscall.ForkExec need no os/exec import.
	for _, dir := range ours {
		files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			for _, call := range []string{"StartProcess(", "ForkExec(", "unix.Exec(", "syscall.Exec("} {
				if strings.Contains(string(src), call) {
					t.Errorf("%s calls %s", f, call)
				}
			}
		}
	}
}
