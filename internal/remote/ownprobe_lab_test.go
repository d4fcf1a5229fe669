package remote_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/testenv"
)

// --on HOST runs an exec: probe on the remote host: the command reads the
// remote namespace's listen backlog (123 there) and that number is the
// stored metric of a run attributed to h1; nothing is left behind.
func TestOnExecProbeRunsRemotely(t *testing.T) {
	l := lab(t)
	if err := l.TrustAll(); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(t.TempDir(), "local.db")
	r := perflab(t, l, "bench", "exec:cat /proc/sys/net/core/somaxconn", "--on", "h1", "--db", db, "--label", "own",
		"--param", "metric=backlog,connections,higher,regex:([0-9]+)", "--min-runs", "2", "--max-runs", "2", "--warmup", "0", "--no-noise-check")
	if r.code != 0 {
		t.Fatalf("bench exec: --on: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	r = perflab(t, l, "runs", "list", "--db", db, "--format", "json")
	var runs []struct {
		ID, Host, Probe string
	}
	if err := json.Unmarshal([]byte(r.stdout), &runs); err != nil || len(runs) != 1 || runs[0].Host != "h1" || runs[0].Probe != "exec:cat /proc/sys/net/core/somaxconn" {
		t.Fatalf("runs: %v %s", err, r.stdout)
	}
	r = perflab(t, l, "runs", "show", runs[0].ID, "--db", db, "--format", "json")
	var run struct {
		Samples []struct {
			Metric string
			Value  float64
		}
	}
	json.Unmarshal([]byte(r.stdout), &run)
	n := 0
	for _, s := range run.Samples {
		if s.Metric == "backlog" {
			n++
			if s.Value != 123 {
				t.Errorf("backlog %v: the command did not run on h1 (its somaxconn is 123)", s.Value)
			}
		}
	}
	if n != 2 {
		t.Errorf("%d backlog samples, want 2", n)
	}
	waitClean(t, l.Host("h1"), 20*time.Second)
}

// An http: probe runs from here against the peer's address: a private
// nginx inside h1, loaded from the controller across the lab's bridge.
func TestHTTPProbeAgainstPeer(t *testing.T) {
	bin := testenv.RequireTool(t, "nginx")
	l := lab(t)
	h1 := l.Host("h1")
	d := t.TempDir()
	os.MkdirAll(filepath.Join(d, "html"), 0o755)
	os.WriteFile(filepath.Join(d, "html", "index.html"), []byte(strings.Repeat("x", 612)), 0o644)
	conf := fmt.Sprintf(`daemon off; master_process on; worker_processes 1; user root;
pid %[1]s/nginx.pid; error_log %[1]s/error.log warn;
events { worker_connections 1024; }
http { access_log off; client_body_temp_path %[1]s/cb; proxy_temp_path %[1]s/p; fastcgi_temp_path %[1]s/f; uwsgi_temp_path %[1]s/u; scgi_temp_path %[1]s/s;
  server { listen %[2]s:8080; root %[1]s/html; location / { } } }
`, d, h1.Addr)
	os.WriteFile(filepath.Join(d, "nginx.conf"), []byte(conf), 0o644)
	cmd := exec.Command("ip", "netns", "exec", h1.NS, bin, "-p", d, "-c", filepath.Join(d, "nginx.conf"), "-e", filepath.Join(d, "error.log"))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); cmd.Wait() })
	url := fmt.Sprintf("http://%s:8080/index.html", h1.Addr)
	var r result
	for i := 0; i < 50; i++ {
		r = perflab(t, l, "bench", url, "--param", "duration=300ms", "--param", "connections=4", "--min-runs", "2", "--max-runs", "2",
			"--warmup", "0", "--no-noise-check", "--no-store", "--format", "json")
		if r.code == 0 || !strings.Contains(r.stderr, "cannot connect") {
			break
		}
		time.Sleep(100 * time.Millisecond) // nginx still starting
	}
	if r.code != 0 {
		t.Fatalf("bench %s: exit %d\n%s", url, r.code, r.stderr)
	}
	var runs []struct {
		Samples []struct {
			Metric string
			Value  float64
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &runs); err != nil || len(runs) != 1 {
		t.Fatalf("%v\n%s", err, r.stdout)
	}
	for _, s := range runs[0].Samples {
		if s.Metric == "requests_per_sec" && s.Value <= 0 || s.Metric == "errors" && s.Value != 0 {
			t.Errorf("%s = %v", s.Metric, s.Value)
		}
	}
}
