package tools

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/testenv"
)

// buildPerflab builds the CLI once per test binary run.
func buildPerflab(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "perflab")
	cmd := exec.Command("go", "build", "-o", bin, "github.com/perflab/perflab/cmd/perflab")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// TestSIGTERMLeavesNothing runs `perflab bench SUITE` as a user would,
// sends it SIGTERM while its server and clients are running, and checks
// that no process it started, no port they listened on and no temporary
// directory outlives it.
func TestSIGTERMLeavesNothing(t *testing.T) {
	testenv.Short(t)
	cases := []struct {
		suite   string
		tools   []string
		params  []string
		running string // a client whose presence means "mid-run" ("": the client is perflab itself)
	}{
		{"kv", []string{"redis-server", "redis-benchmark"}, []string{"requests=100000000"}, "redis-benchmark"},
		{"db", []string{"sysbench"}, []string{"duration=60s"}, "oltp_point_select"},
		// perflab is etcd's client; a small key space is filled within the
		// settling time, so the signal lands in an iteration.
		{"etcd", []string{"etcd"}, []string{"duration=60s", "keyspace=20"}, ""},
	}
	bin := buildPerflab(t)
	for _, c := range cases {
		t.Run(c.suite, func(t *testing.T) {
			for _, tool := range c.tools {
				testenv.RequireTool(t, tool)
			}
			if c.suite == "db" {
				if _, ok := lookPath("mariadbd", "mysqld"); !ok {
					testenv.Unavailable(t, "mariadbd not installed")
				}
			}
			root := t.TempDir()
			tmp := filepath.Join(root, "tmp")
			if err := os.Mkdir(tmp, 0o700); err != nil {
				t.Fatal(err)
			}
			args := []string{"bench", c.suite, "--no-store", "--warmup", "0"}
			for _, p := range c.params {
				args = append(args, "--param", p)
			}
			cmd := exec.Command(bin, args...)
			cmd.Env = append(os.Environ(), "TMPDIR="+tmp, "HOME="+root, "XDG_DATA_HOME="+root, "NO_COLOR=1")
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			exited := make(chan error, 1)
			go func() { exited <- cmd.Wait() }()

			var started []proc
			ports := map[string]bool{}
			deadline := time.Now().Add(90 * time.Second)
			midRun := time.Time{}
		watch:
			for {
				select {
				case err := <-exited:
					t.Fatalf("perflab exited before it was signalled: %v\n%s", err, stderr.String())
				case <-time.After(100 * time.Millisecond):
				}
				ps := descendants(cmd.Process.Pid)
				started = append(started, ps...)
				for k := range listenPorts(t, ps) {
					ports[k] = true
				}
				client := c.running == ""
				for _, p := range ps {
					if c.running == "" {
						break
					}
					client = client || strings.Contains(p.cmdline, c.running) && !strings.Contains(p.cmdline, "prepare")
				}
				switch {
				case midRun.IsZero() && client && len(ports) > 0:
					midRun = time.Now()
				case !midRun.IsZero() && time.Since(midRun) > 3*time.Second:
					break watch
				case time.Now().After(deadline):
					_ = cmd.Process.Kill()
					t.Fatalf("never saw a server port and a running %s\n%s", c.running, stderr.String())
				}
			}
			if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			select {
			case err := <-exited:
				ee, ok := err.(*exec.ExitError)
				if !ok || ee.ExitCode() != 3 {
					t.Errorf("exit %v, want status 3 (interrupted)", err)
				}
			case <-time.After(60 * time.Second):
				_ = cmd.Process.Kill()
				t.Fatalf("perflab did not exit within 60 s of SIGTERM\n%s", stderr.String())
			}
			if !strings.Contains(stderr.String(), "interrupted") {
				t.Errorf("stderr does not say interrupted:\n%s", stderr.String())
			}
			if left := alive(started); len(left) > 0 {
				t.Errorf("processes left: %+v", left)
			}
			if left := mentioning(tmp); len(left) > 0 {
				t.Errorf("processes mention the temp dir: %+v", left)
			}
			if b := stillBound(t, ports); len(b) > 0 {
				t.Errorf("ports still bound: %v (had %v)", b, ports)
			}
			ents, _ := os.ReadDir(tmp)
			for _, e := range ents {
				t.Errorf("left in TMPDIR: %s", e.Name())
			}
		})
	}
}

// TestSIGKILLLeavesNoProcess kills `perflab bench web` with SIGKILL, for
// which no Teardown can run, mid-run. The servers' parent-death signal is
// SIGTERM, so nginx's master stops its workers on the way out (with
// SIGKILL the master died alone and its workers lived on). The scratch
// directory stays: nothing of perflab runs after SIGKILL to remove it.
func TestSIGKILLLeavesNoProcess(t *testing.T) {
	testenv.Short(t)
	testenv.RequireTool(t, "wrk")
	if _, ok := lookPath("nginx"); !ok {
		testenv.Unavailable(t, "nginx not installed")
	}
	bin := buildPerflab(t)
	root := t.TempDir()
	cmd := exec.Command(bin, "bench", "web", "--no-store", "--warmup", "0")
	cmd.Env = append(os.Environ(), "TMPDIR="+root, "HOME="+root, "XDG_DATA_HOME="+root, "NO_COLOR=1")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	var started []proc
	deadline := time.Now().Add(60 * time.Second)
	for {
		select {
		case err := <-exited:
			t.Fatalf("perflab exited before it was killed: %v", err)
		case <-time.After(100 * time.Millisecond):
		}
		ps := descendants(cmd.Process.Pid)
		started = append(started, ps...)
		workers, client := 0, false
		for _, p := range ps {
			if strings.Contains(p.cmdline, "nginx: worker") {
				workers++
			}
			if f := strings.Fields(p.cmdline); len(f) > 0 {
				client = client || filepath.Base(f[0]) == "wrk"
			}
		}
		if workers > 0 && client {
			break
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			t.Fatal("never saw nginx workers and wrk running")
		}
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-exited
	// Graceful shutdown takes a moment; give it ten seconds.
	var left []proc
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		if left = alive(started); len(left) == 0 {
			break
		}
	}
	for _, p := range left {
		_ = syscall.Kill(p.pid, syscall.SIGKILL)
	}
	if len(left) > 0 {
		t.Errorf("processes outlived perflab's SIGKILL: %+v", left)
	}

	// The scratch directory stayed; the next bench session removes it.
	stale, _ := filepath.Glob(filepath.Join(root, "perflab-wrk.nginx-*"))
	if len(stale) != 1 {
		t.Fatalf("scratch directories after SIGKILL: %v, want the one perflab could not remove", stale)
	}
	next := exec.Command(bin, "bench", "probe:syscall", "--no-store", "--no-noise-check", "--min-runs", "6", "--max-runs", "6", "--param", "duration=5ms")
	next.Env = cmd.Env
	out, err := next.CombinedOutput()
	if err != nil {
		t.Fatalf("next session: %v\n%s", err, out)
	}
	if _, err := os.Stat(stale[0]); !os.IsNotExist(err) {
		t.Errorf("%s still there after the next session (%v)", stale[0], err)
	}
	if !strings.Contains(string(out), "removed scratch directories left by a perflab that was killed") {
		t.Errorf("next session did not say what it removed:\n%s", out)
	}
}
