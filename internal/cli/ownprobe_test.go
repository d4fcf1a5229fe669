package cli

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/testenv"
)

// A metric pattern that never matches: one line naming it, exit 2.
func TestOwnProbeNeverMatchingMetricExits2(t *testing.T) {
	code, _, stderr := runCLI(t, "bench", "exec:echo hello", "--no-store", "--no-noise-check",
		"--param", `metric=tps,tx/s,higher,regex:([0-9.]+) per sec`)
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	last := lines[len(lines)-1]
	if code != 2 || !strings.Contains(last, "metric tps") || !strings.Contains(last, "matched nothing") {
		t.Fatalf("exit %d, stderr:\n%s", code, stderr)
	}
}

// Mistakes in a probes file: one line each, exit 2, before anything runs.
func TestOwnProbeFileMistakesExit2(t *testing.T) {
	f := filepath.Join(t.TempDir(), "perflab.yaml")
	os.WriteFile(f, []byte("probes:\n  api:\n    http: http://127.0.0.1:1/\n    conections: 3\n  tps:\n    exec: x\n    metrics:\n      - {name: t, unit: ms, better: lower, regex: '('}\n"), 0o644)
	code, _, stderr := runCLI(t, "bench", "api", "--probes", f, "--no-store")
	if code != 2 || !strings.Contains(stderr, f+":4: probe api: unknown key \"conections\" (did you mean connections?)") || !strings.Contains(stderr, f+":8: probe tps: metric t: bad regex") {
		t.Fatalf("exit %d, stderr:\n%s", code, stderr)
	}
}

// A named probe runs like a builtin, its definition stored with the run;
// bench list shows it.
func TestOwnProbeNamedInFile(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "perflab.yaml")
	os.WriteFile(f, []byte("probes:\n  score:\n    doc: prints a score\n    exec: |-\n      echo '{\"score\": 42.5}'\n    metrics:\n      - {name: score, unit: pt, better: higher, json: score}\n"), 0o644)
	db := filepath.Join(dir, "runs.db")
	code, _, stderr := runCLI(t, "bench", "score", "--probes", f, "--db", db, "--label", "s", "--no-noise-check", "--max-runs", "6")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	code, out, stderr := runCLI(t, "runs", "list", "--db", db, "--format", "json")
	id := regexp.MustCompile(`"id": "([0-9a-f]+)"`).FindStringSubmatch(out)
	if code != 0 || id == nil {
		t.Fatalf("runs list: exit %d %s\n%s", code, stderr, out)
	}
	code, out, stderr = runCLI(t, "runs", "show", "--db", db, "--format", "json", id[1])
	if code != 0 || !strings.Contains(out, `"probe": "score"`) || !strings.Contains(out, "score,pt,higher,json:score") || !strings.Contains(out, "42.5") {
		t.Fatalf("runs show: exit %d %s\n%s", code, stderr, out)
	}
	code, out, _ = runCLI(t, "bench", "list", "--probes", f)
	if code != 0 || !strings.Contains(out, "score") || !strings.Contains(out, "prints a score") {
		t.Fatalf("bench list: exit %d\n%s", code, out)
	}
}

// Two benches of the same exec: command, one after the other, compared:
// no change is called that the host's own drift does not explain (an A/A
// pair). The host-drift readings stay on, as a user's bench has them: in
// CI the load changes between two sequential batches (other test packages
// start and stop), and wall time moves with it — once in a CI run that
// read "worse" with the readings switched off.
func TestOwnProbeExecAA(t *testing.T) {
	testenv.Short(t)
	db := filepath.Join(t.TempDir(), "runs.db")
	for _, l := range []string{"a1", "a2"} {
		code, _, stderr := runCLI(t, "bench", "exec:sleep 0.02", "--db", db, "--label", l, "--repeat", "3", "--max-runs", "10")
		if code != 0 {
			t.Fatalf("bench %s: exit %d: %s", l, code, stderr)
		}
	}
	code, out, stderr := runCLI(t, "compare", "a1", "a2", "--db", db, "--format", "json")
	if code != 0 {
		t.Fatalf("compare: exit %d: %s", code, stderr)
	}
	var doc struct {
		Pairs []struct {
			Counts  map[string]int `json:"counts"`
			Changed int            `json:"changed"`
		} `json:"pairs"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || len(doc.Pairs) != 1 {
		t.Fatalf("compare JSON: %v\n%s", err, out)
	}
	if p := doc.Pairs[0]; p.Changed != 0 {
		t.Errorf("A/A of exec:sleep 0.02 reads %v, %d changed beyond the host's drift: a verdict an A/A pair produces is a bug\n%s", p.Counts, p.Changed, out)
	}
}

// bench 'http:…' --state interleaves two nginx configurations and reports
// the effect with a CI: keepalive_requests 1 forces a new connection per
// request, which costs far more than the shared host's noise.
func TestOwnProbeHTTPStateInterleaves(t *testing.T) {
	testenv.Short(t)
	bin := testenv.RequireTool(t, "nginx")
	dir := t.TempDir()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	os.MkdirAll(filepath.Join(dir, "html"), 0o755)
	os.WriteFile(filepath.Join(dir, "html", "index.html"), []byte(strings.Repeat("x", 612)), 0o644)
	conf := func(kr int) string {
		user := ""
		if os.Geteuid() == 0 {
			user = "user root;"
		}
		return fmt.Sprintf(`daemon off; master_process on; worker_processes 1; %s
pid %[2]s/nginx.pid; error_log %[2]s/error.log warn;
events { worker_connections 4096; }
http { access_log off; keepalive_requests %[3]d;
  client_body_temp_path %[2]s/cb; proxy_temp_path %[2]s/p; fastcgi_temp_path %[2]s/f; uwsgi_temp_path %[2]s/u; scgi_temp_path %[2]s/s;
  server { listen 127.0.0.1:%[4]d; root %[2]s/html; location / { } } }
`, user, dir, kr, port)
	}
	live := filepath.Join(dir, "nginx.conf")
	os.WriteFile(live, []byte(conf(100000)), 0o644)
	os.WriteFile(live+".many", []byte(conf(100000)), 0o644)
	os.WriteFile(live+".one", []byte(conf(1)), 0o644)
	cmd := exec.Command(bin, "-p", dir, "-c", live, "-e", filepath.Join(dir, "error.log"))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); cmd.Wait() })
	url := fmt.Sprintf("http://127.0.0.1:%d/index.html", port)
	for i := 0; ; i++ {
		if resp, err := http.Get(url); err == nil {
			resp.Body.Close()
			break
		} else if i > 100 {
			t.Fatalf("nginx: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	state := func(name string) string {
		return fmt.Sprintf("%s=cp %s.%s %s && %s -p %s -c %s -s reload -e %s/error.log && sleep 0.5", name, live, name, live, bin, dir, live, dir)
	}
	code, out, stderr := runCLI(t, "bench", url, "--param", "duration=500ms", "--state", state("many"), "--state", state("one"),
		"--blocks", "8", "--min-runs", "3", "--max-runs", "3", "--no-noise-check", "--no-store", "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var doc struct {
		Effects []struct {
			Metric, Base, State string
			Ratio               float64
			Lo                  float64 `json:"ratio_lo"`
			Hi                  float64 `json:"ratio_hi"`
		}
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, e := range doc.Effects {
		if e.Metric != "requests_per_sec" {
			continue
		}
		t.Logf("%s vs %s: requests/s ×%.2f [%.2f, %.2f]", e.State, e.Base, e.Ratio, e.Lo, e.Hi)
		if e.State != "one" || e.Base != "many" || !(e.Lo <= e.Ratio && e.Ratio <= e.Hi) || e.Hi >= 1 {
			t.Errorf("keepalive_requests 1 vs many: %+v, want fewer requests/s with a CI below ×1", e)
		}
		return
	}
	t.Fatalf("no requests_per_sec effect in\n%s", out)
}
