package cli

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/perflab/perflab/internal/testenv"
)

// TestTraceChild is the body of TestTraceWithoutPermission's child (it
// runs only when re-executed with PERFLAB_TRACE_CHILD set).
func TestTraceChild(t *testing.T) {
	args := os.Getenv("PERFLAB_TRACE_CHILD")
	if args == "" {
		t.Skip("helper for TestTraceWithoutPermission")
	}
	os.Exit(Execute(context.Background(), strings.Fields(args), strings.NewReader(""), io.Discard, os.Stderr))
}

// Run as nobody, every eBPF command must fail with one line saying what is
// missing and what to do, and exit 3.
func TestTraceWithoutPermission(t *testing.T) {
	testenv.RequireRoot(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	// t.TempDir's parent and the directory are private; nobody must
	// reach the copy of the test binary.
	for _, d := range []string{filepath.Dir(dir), dir} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(dir, "cli.test")
	data, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, args := range []string{"trace retrans -d 1", "trace cachestat -d 1", "profile -a --off-cpu -d 1 -o /dev/null", "profile -a --locks -d 1 -o /dev/null"} {
		cmd := exec.Command(bin, "-test.run=^TestTraceChild$")
		cmd.Dir = dir
		cmd.Env = []string{"PERFLAB_TRACE_CHILD=" + args, "HOME=" + dir, "PATH=/usr/bin:/bin"}
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		out, err := cmd.CombinedOutput()
		code := -1
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		}
		msg := strings.TrimSpace(string(out))
		if code != 3 {
			t.Errorf("%s as nobody: exit %d (%v), want 3; output:\n%s", args, code, err, msg)
			continue
		}
		if strings.Count(msg, "\n") != 0 || !strings.Contains(msg, "no permission to load eBPF programs") || !strings.Contains(msg, "run as root") {
			t.Errorf("%s as nobody: want one line naming the permission and the fix, got:\n%s", args, msg)
		}
		t.Logf("%s: %s", args, msg)
	}
}
