package e2e

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/testenv"
	"github.com/perflab/perflab/internal/testlab"
)

// ownNetns is a network namespace named for the ownprobe tests, in
// testlab's form (prefix-pid-seq-role), so that testlab.Sweep removes the
// namespaces (and their nginx) of a test process that died without its
// cleanups — a `go test -timeout` panic runs none.
func ownNetns(t *testing.T) string {
	t.Helper()
	testenv.RequireRoot(t)
	if err := testlab.Sweep("ownprobe"); err != nil {
		t.Logf("sweeping earlier runs' namespaces: %v", err)
	}
	name := fmt.Sprintf("ownprobe-%d-%d-ns", os.Getpid(), rand.IntN(1e6))
	if out, err := exec.Command("ip", "netns", "add", name).CombinedOutput(); err != nil {
		testenv.Unavailable(t, "ip netns add: %v %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", name).Run() })
	if out, err := exec.Command("ip", "netns", "exec", name, "ip", "link", "set", "lo", "up").CombinedOutput(); err != nil {
		t.Fatalf("lo up: %v %s", err, out)
	}
	return name
}

// nsNginx starts a private nginx inside ns serving index.html (612 B) and
// big.bin (4 MiB) on port 18080 of the namespace's loopback; the process
// group is killed when the test ends.
func nsNginx(t *testing.T, ns string) string {
	t.Helper()
	bin := testenv.RequireTool(t, "nginx")
	d := t.TempDir()
	os.MkdirAll(filepath.Join(d, "html"), 0o755)
	os.WriteFile(filepath.Join(d, "html", "index.html"), []byte(strings.Repeat("x", 612)), 0o644)
	os.WriteFile(filepath.Join(d, "html", "big.bin"), make([]byte, 4<<20), 0o644)
	conf := fmt.Sprintf(`daemon off; master_process on; worker_processes 1; user root;
pid %[1]s/nginx.pid; error_log %[1]s/error.log warn;
events { worker_connections 4096; }
http { access_log off; client_body_temp_path %[1]s/cb; proxy_temp_path %[1]s/p; fastcgi_temp_path %[1]s/f; uwsgi_temp_path %[1]s/u; scgi_temp_path %[1]s/s;
  server { listen 127.0.0.1:18080; root %[1]s/html; location / { } } }
`, d)
	os.WriteFile(filepath.Join(d, "nginx.conf"), []byte(conf), 0o644)
	cmd := exec.Command("ip", "netns", "exec", ns, bin, "-p", d, "-c", filepath.Join(d, "nginx.conf"), "-e", filepath.Join(d, "error.log"))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); cmd.Wait() })
	for i := 0; ; i++ {
		out, err := exec.Command("ip", "netns", "exec", ns, "curl", "-sf", "-o", "/dev/null", "http://127.0.0.1:18080/index.html").CombinedOutput()
		if err == nil {
			break
		}
		if i > 100 {
			b, _ := os.ReadFile(filepath.Join(d, "error.log"))
			t.Fatalf("nginx in %s: %v %s %s", ns, err, out, b)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return "http://127.0.0.1:18080"
}

// tune apply --measure with a named http probe, in a namespace: the
// before/after effects are printed, the namespace is left tuned, and tune
// revert restores every value. The plan keeps to the namespace's own
// knobs (a profile extending web skips the host-wide rules), so the
// shared host is not touched.
func TestOwnProbeTuneApplyMeasureHTTP(t *testing.T) {
	testenv.Short(t)
	testenv.RequireTool(t, "curl")
	t.Setenv("PERFLAB_TUNE_DIR", t.TempDir()) // a journal of its own, not the host's
	ns := ownNetns(t)
	base := nsNginx(t, ns)
	knobs := []string{"net.core.somaxconn", "net.ipv4.tcp_max_syn_backlog", "net.ipv4.tcp_fin_timeout", "net.ipv4.ip_local_port_range", "net.ipv4.tcp_tw_reuse", "net.ipv4.tcp_fastopen"}
	nsSysctl(t, ns, "net.core.somaxconn", "128")
	before := map[string]string{}
	for _, k := range knobs {
		before[k] = nsRead(t, ns, k)
	}
	dir := t.TempDir()
	planOut, errs, code := runPerflab(t, ns, "tune", "plan", "web", "--format", "json")
	if code != 0 {
		t.Fatalf("tune plan: %s", errs)
	}
	var plan struct {
		Items []struct{ Rule string } `json:"items"`
	}
	json.Unmarshal([]byte(planOut), &plan)
	var skip []string
	for _, it := range plan.Items {
		if !strings.HasPrefix(it.Rule, "NET-") {
			skip = append(skip, it.Rule)
		}
	}
	prof := filepath.Join(dir, "nsweb.yaml")
	os.WriteFile(prof, []byte(fmt.Sprintf("name: nsweb\nextends: web\nskip: [%s]\n", strings.Join(skip, ", "))), 0o644)
	probes := filepath.Join(dir, "perflab.yaml")
	os.WriteFile(probes, []byte("probes:\n  web:\n    http: "+base+"/index.html\n    connections: 8\n    duration: 500ms\n"), 0o644)
	// "web" is a suite name too: the named probe must be called otherwise.
	os.WriteFile(probes, []byte("probes:\n  site:\n    http: "+base+"/index.html\n    connections: 8\n    duration: 500ms\n"), 0o644)
	out, errs, code := runPerflab(t, ns, "tune", "apply", prof, "--probes", probes, "--measure", "site", "--blocks", "2", "--budget", "2s", "--yes", "--skip-blocked")
	t.Logf("tune apply --measure site:\n%s\n%s", out, errs)
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	if !strings.Contains(out, "Interleaved effects") || !strings.Contains(out, "requests_per_sec") || !strings.Contains(out, "after vs before") {
		t.Errorf("no measured effect of the http probe:\n%s", out)
	}
	if v := nsRead(t, ns, "net.core.somaxconn"); v == "128" {
		t.Errorf("the namespace was not left tuned: somaxconn %s", v)
	}
	if _, errs, code := runPerflab(t, ns, "tune", "revert"); code != 0 {
		t.Fatalf("tune revert: %s", errs)
	}
	for _, k := range knobs {
		if v := nsRead(t, ns, k); v != before[k] {
			t.Errorf("tune revert left %s = %s, was %s", k, v, before[k])
		}
	}
}

// bisect --good … 'exec:curl …': a 4 MiB download through loopback takes
// about 7 times longer with a tiny TCP receive buffer (0.3 s against
// 0.04 s here). bisect runs end to end on the command's wall time in the
// namespace, measures the speed-up of flipping everything to the good
// values, and restores every value. Whether the screening then names
// tcp_rmem is the bisect engine's statistical power: on this 2-core VM
// with a load average of 30–40 it did in one of three runs (the
// all-flipped CI was [0.12, 1.12] with 4 blocks), so it is logged, not
// asserted.
func TestOwnProbeBisectExec(t *testing.T) {
	testenv.Short(t)
	testenv.RequireTool(t, "curl")
	t.Setenv("PERFLAB_TUNE_DIR", t.TempDir()) // a journal of its own, not the host's
	ns := ownNetns(t)
	base := nsNginx(t, ns)
	nsSysctl(t, ns, "net.ipv4.tcp_rmem", "4096 131072 6291456")
	nsSysctl(t, ns, "net.ipv4.tcp_wmem", "4096 16384 4194304")
	nsSysctl(t, ns, "net.ipv4.tcp_fin_timeout", "60")
	good := filepath.Join(t.TempDir(), "good.json")
	if _, errs, code := runPerflab(t, ns, "snapshot", "-o", good); code != 0 {
		t.Fatalf("snapshot: %s", errs)
	}
	nsSysctl(t, ns, "net.ipv4.tcp_rmem", "4096 4096 4096")
	nsSysctl(t, ns, "net.ipv4.tcp_fin_timeout", "30")
	out, errs, code := runPerflab(t, ns, "bisect", "--good", good, "exec:curl -s -o /dev/null "+base+"/big.bin",
		"--metric", "wall_time", "--budget", "3s", "--blocks", "4", "--format", "json", "--yes")
	if code != 0 {
		t.Fatalf("bisect exit %d: %s\n%s", code, errs, out)
	}
	var doc struct {
		bisectDoc
		Probe string
		All   struct{ Ratio, Lo, Hi float64 }
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if doc.Probe != "exec:curl -s -o /dev/null "+base+"/big.bin" {
		t.Errorf("bisect measured %q", doc.Probe)
	}
	if doc.Runs == 0 || doc.All.Ratio <= 0 || doc.All.Ratio >= 1 {
		t.Errorf("flipping every candidate to the good value: %d runs, wall time ×%.2f; want a speed-up (×<1)", doc.Runs, doc.All.Ratio)
	}
	for _, c := range doc.Causes {
		t.Logf("cause %s: %s", c.Knob, c.Outcome)
	}
	if !doc.Restored || nsRead(t, ns, "net.ipv4.tcp_rmem") != "4096 4096 4096" || nsRead(t, ns, "net.ipv4.tcp_fin_timeout") != "30" {
		t.Errorf("namespace not restored: rmem %s fin %s", nsRead(t, ns, "net.ipv4.tcp_rmem"), nsRead(t, ns, "net.ipv4.tcp_fin_timeout"))
	}
}
