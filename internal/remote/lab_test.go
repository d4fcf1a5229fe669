package remote_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/remote"
	"github.com/perflab/perflab/internal/testenv"
	"github.com/perflab/perflab/internal/testlab"
)

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// perflabBinary builds cmd/perflab once for the tests that run it in the
// lab (the remote side needs a real perflab executable to copy).
func perflabBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "remote-perflab-bin.")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "perflab")
		c := exec.Command("go", "build", "-o", binPath, "github.com/perflab/perflab/cmd/perflab")
		c.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := c.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build: %v: %s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

func TestMain(m *testing.M) {
	code := m.Run()
	if binPath != "" {
		os.RemoveAll(filepath.Dir(binPath))
	}
	os.Exit(code)
}

// lab starts a lab whose h1 has a listen backlog different from the
// controller's (so remote facts are told from local ones).
func lab(t *testing.T, specs ...testlab.HostSpec) *testlab.Lab {
	t.Helper()
	testenv.Short(t)
	if len(specs) == 0 {
		specs = []testlab.HostSpec{{Name: "h1", Sysctls: map[string]string{"net.core.somaxconn": "123"}}}
	}
	return testlab.Start(t, testlab.Options{Prefix: "remote", Hosts: specs})
}

type result struct {
	stdout, stderr string
	code           int
}

// perflab runs the built perflab in the lab's controller namespace.
func perflab(t *testing.T, l *testlab.Lab, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c := l.Cmd(ctx, perflabBinary(t), args...)
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	err := c.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("perflab %v: %v", args, err)
	}
	return result{out.String(), errb.String(), code}
}

func connectOpts(l *testlab.Lab, accept bool) remote.Options {
	cfg, _ := remote.LoadSSHConfig(filepath.Join(l.Home, ".ssh", "config"))
	return remote.Options{
		KnownHosts: l.KnownHosts(), AcceptNewHostKey: accept, Config: cfg,
		Dial: l.Dial, ConnectTimeout: 5 * time.Second,
	}
}

// The key of a host not in known_hosts is refused with the line to
// review; --accept-new-host-key records it; a changed key is refused even
// with --accept-new-host-key.
func TestHostKeys(t *testing.T) {
	l := lab(t, testlab.HostSpec{Name: "h1"}, testlab.HostSpec{Name: "h2"})
	h1, h2 := l.Host("h1"), l.Host("h2")
	t.Setenv("HOME", l.Home) // identity files and ~/.ssh/config of the lab
	t.Setenv("SSH_AUTH_SOCK", "")
	ctx := context.Background()

	_, err := remote.Connect(ctx, "h1", connectOpts(l, false))
	if remote.KindOf(err) != remote.KindHostKeyUnknown {
		t.Fatalf("unknown host: got %v, want %s", err, remote.KindHostKeyUnknown)
	}
	for _, want := range []string{"ssh-keyscan -t ed25519 " + h1.Addr, h1.KnownHostsLine(), "--accept-new-host-key"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("unknown host message lacks %q: %v", want, err)
		}
	}
	if strings.Contains(err.Error(), "\n") {
		t.Errorf("message is not one line: %q", err)
	}

	c, err := remote.Connect(ctx, "h1", connectOpts(l, true))
	if err != nil {
		t.Fatalf("--accept-new-host-key: %v", err)
	}
	c.Close()
	kh, _ := os.ReadFile(l.KnownHosts())
	if !strings.Contains(string(kh), h1.HostKey) {
		t.Errorf("known_hosts after TOFU lacks h1's key:\n%s", kh)
	}
	if c, err = remote.Connect(ctx, "root@h1", connectOpts(l, false)); err != nil {
		t.Fatalf("recorded key: %v", err)
	}
	c.Close()

	// h1's address now presents h2's key.
	if err := os.WriteFile(l.KnownHosts(), []byte(h1.Addr+" "+h2.HostKey+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, accept := range []bool{false, true} {
		_, err = remote.Connect(ctx, "h1", connectOpts(l, accept))
		if remote.KindOf(err) != remote.KindHostKeyChanged {
			t.Fatalf("changed key (accept=%v): got %v, want %s", accept, err, remote.KindHostKeyChanged)
		}
		if !strings.Contains(err.Error(), "HOST KEY CHANGED") || !strings.Contains(err.Error(), "ssh-keygen -R "+h1.Addr) {
			t.Errorf("changed key message: %v", err)
		}
	}
}

// Wrong user, closed port and a name that does not resolve are each one
// clear line and exit code 3; an unknown host key is refused the same way.
func TestConnectFailuresCLI(t *testing.T) {
	l := lab(t, testlab.HostSpec{Name: "h1"})
	h1 := l.Host("h1")
	r := perflab(t, l, "snapshot", "--on", "h1")
	if r.code != 3 || !strings.Contains(r.stderr, "ssh-keyscan -t ed25519 "+h1.Addr) || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
		t.Errorf("unknown host key: exit %d, stderr %q", r.code, r.stderr)
	}
	if err := l.TrustAll(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ target, want string }{
		{"nosuchuser@h1", `permission denied for user "nosuchuser"`},
		{h1.Addr + ":2222", "connection to " + h1.Addr + ":2222 refused"},
		{"no-such-host.invalid", `cannot resolve host "no-such-host.invalid"`},
	} {
		r := perflab(t, l, "snapshot", "--on", tc.target)
		lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
		if r.code != 3 || len(lines) != 1 || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("--on %s: exit %d, stderr %q; want exit 3 and one line with %q", tc.target, r.code, r.stderr, tc.want)
		}
	}
}

// remoteLeftovers lists perflab processes in the host's namespace and
// private directories perflab left under /tmp (the lab's hosts share the
// file system with the test).
func remoteLeftovers(t *testing.T, h *testlab.Host) []string {
	t.Helper()
	var left []string
	out, _ := exec.Command("ip", "netns", "pids", h.NS).Output()
	for _, p := range strings.Fields(string(out)) {
		cmd, _ := os.ReadFile("/proc/" + p + "/cmdline")
		if bytes.Contains(cmd, []byte("perflab")) {
			left = append(left, "process "+p+": "+strings.ReplaceAll(string(cmd), "\x00", " "))
		}
	}
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), remote.DirPrefix+"*"))
	if os.TempDir() != "/tmp" {
		more, _ := filepath.Glob("/tmp/" + remote.DirPrefix + "*")
		dirs = append(dirs, more...)
	}
	for _, d := range dirs {
		left = append(left, "directory "+d)
	}
	return left
}

// waitClean waits up to d for the remote side to be clean.
func waitClean(t *testing.T, h *testlab.Host, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		left := remoteLeftovers(t, h)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("left on %s after %s: %v", h.Name, d, left)
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// snapshot and audit --on report the remote namespace's facts: its
// hostname and its listen backlog (123 there, the default here).
func TestOnSnapshotAndAudit(t *testing.T) {
	l := lab(t)
	if err := l.TrustAll(); err != nil {
		t.Fatal(err)
	}
	h1 := l.Host("h1")
	r := perflab(t, l, "snapshot", "--on", "h1", "--format", "json")
	if r.code != 0 {
		t.Fatalf("snapshot --on: exit %d: %s", r.code, r.stderr)
	}
	var snap struct {
		Host struct {
			Hostname  string `json:"hostname"`
			MachineID string `json:"machine_id"`
		} `json:"host"`
		Sysctl map[string]string `json:"sysctl"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &snap); err != nil {
		t.Fatalf("snapshot JSON: %v\n%.300s", err, r.stdout)
	}
	if snap.Host.Hostname != "h1" || snap.Host.MachineID == "" {
		t.Errorf("remote snapshot host = %+v, want hostname h1 and a machine id", snap.Host)
	}
	if got := snap.Sysctl["net.core.somaxconn"]; got != "123" {
		t.Errorf("remote somaxconn = %q, want 123 (the lab host's, not the local one)", got)
	}
	local := perflab(t, l, "snapshot", "--format", "json")
	if strings.Contains(local.stdout, `"net.core.somaxconn": "123"`) {
		t.Fatal("the controller has somaxconn 123 too: the test cannot tell the hosts apart")
	}

	out := filepath.Join(t.TempDir(), "audit.json")
	r = perflab(t, l, "audit", "--on", "root@h1", "--workload", "web", "--format", "json", "-o", out)
	if r.code != 0 && r.code != 1 {
		t.Fatalf("audit --on: exit %d: %s", r.code, r.stderr)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatalf("audit -o was not written here: %v", err)
	}
	if !bytes.Contains(b, []byte("NET-SOMAXCONN")) || !bytes.Contains(b, []byte(`"123"`)) {
		t.Errorf("remote audit does not report h1's somaxconn 123:\n%.2000s", b)
	}
	waitClean(t, h1, 20*time.Second)
}

func TestOnBenchStoresRunForTarget(t *testing.T) {
	l := lab(t)
	if err := l.TrustAll(); err != nil {
		t.Fatal(err)
	}
	h1 := l.Host("h1")
	db := filepath.Join(t.TempDir(), "local.db")
	r := perflab(t, l, "bench", "probe:cpu", "--on", "h1", "--db", db, "--min-runs", "2", "--max-runs", "2", "--warmup", "0", "--no-noise-check", "--label", "remote")
	if r.code != 0 {
		t.Fatalf("bench --on: exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stderr, "stored 1 run(s) from h1") || strings.Contains(r.stderr, remote.DirPrefix) && strings.Contains(r.stderr, "perflab.db") {
		t.Errorf("stderr does not say the run was stored: %s", r.stderr)
	}
	r = perflab(t, l, "runs", "list", "--db", db, "--format", "json")
	if r.code != 0 {
		t.Fatalf("runs list: %d %s", r.code, r.stderr)
	}
	var runs []map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &runs); err != nil {
		t.Fatalf("runs list JSON: %v\n%s", err, r.stdout)
	}
	if len(runs) != 1 || runs[0]["host"] != "h1" {
		t.Errorf("stored runs = %v, want one run attributed to h1", runs)
	}
	waitClean(t, h1, 20*time.Second)
}

// startLongBench starts a long remote bench and waits until the remote
// agent runs.
func startLongBench(t *testing.T, l *testlab.Lab, h *testlab.Host) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	c := l.Cmd(context.Background(), perflabBinary(t), "bench", "probe:cpu", "--on", h.Name, "--db", filepath.Join(t.TempDir(), "l.db"),
		"--budget", "2m", "--min-runs", "1000", "--max-runs", "1000", "--precision", "0")
	var errb bytes.Buffer
	c.Stderr = &errb
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		out, _ := exec.Command("ip", "netns", "pids", h.NS).Output()
		running := false
		for _, p := range strings.Fields(string(out)) {
			cmd, _ := os.ReadFile("/proc/" + p + "/cmdline")
			if bytes.Contains(cmd, []byte("bench\x00probe:cpu")) && !bytes.Contains(cmd, []byte(remote.AgentName)) {
				running = true
			}
		}
		if running {
			break
		}
		if time.Now().After(deadline) {
			c.Process.Kill()
			c.Wait()
			t.Fatalf("remote bench did not start: %s", errb.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(time.Second) // well into the run
	return c, &errb
}

func waitExit(t *testing.T, c *exec.Cmd, d time.Duration) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- c.Wait() }()
	select {
	case err := <-done:
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode()
		}
		return 0
	case <-time.After(d):
		c.Process.Kill()
		<-done
		t.Fatalf("local perflab still running after %s", d)
		return -1
	}
}

func TestOnCtrlCCleansRemote(t *testing.T) {
	l := lab(t)
	if err := l.TrustAll(); err != nil {
		t.Fatal(err)
	}
	h1 := l.Host("h1")
	c, errb := startLongBench(t, l, h1)
	c.Process.Signal(syscall.SIGINT)
	code := waitExit(t, c, 30*time.Second)
	if code != 3 || !strings.Contains(errb.String(), "interrupted") {
		t.Errorf("after Ctrl-C: exit %d, want 3 and 'interrupted'; stderr %s", code, errb)
	}
	t.Logf("stderr after Ctrl-C:\n%s", errb)
	waitClean(t, h1, 15*time.Second)
}

func TestOnLinkCutCleansRemote(t *testing.T) {
	for _, cut := range []string{"nft drop", "link down"} {
		t.Run(strings.ReplaceAll(cut, " ", "_"), func(t *testing.T) {
			l := lab(t)
			if err := l.TrustAll(); err != nil {
				t.Fatal(err)
			}
			h1 := l.Host("h1")
			c, errb := startLongBench(t, l, h1)
			ctx := context.Background()
			var err error
			if cut == "nft drop" {
				err = h1.Cut(ctx)
			} else {
				err = h1.LinkDown(ctx)
			}
			if err != nil {
				t.Fatal(err)
			}
			code := waitExit(t, c, 60*time.Second)
			t.Logf("stderr after the cut:\n%s", errb)
			if code != 3 || !strings.Contains(errb.String(), "connection lost") {
				t.Errorf("after the cut: exit %d, stderr %s; want exit 3 and 'connection lost'", code, errb)
			}
			// The agent's heartbeat (20 s) ends the remote run without
			// any help from the network.
			waitClean(t, h1, 40*time.Second)
		})
	}
}

// bench SUITE --on A --on B alternates the hosts probe by probe, stores
// both and prints them side by side with ~= rows and B's differing
// settings (cgroup quota, buffers) among the likely causes.
func TestBenchOnTwoHosts(t *testing.T) {
	l := lab(t, testlab.HostSpec{Name: "a"}, testlab.HostSpec{Name: "b", CPUQuota: 1, Sysctls: map[string]string{
		"net.core.somaxconn": "128", "net.ipv4.tcp_rmem": "4096 16384 65536", "net.ipv4.tcp_wmem": "4096 16384 65536"}})
	if err := l.TrustAll(); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(t.TempDir(), "l.db")
	r := perflab(t, l, "bench", "quick", "--on", "a", "--on", "b", "--db", db, "--min-runs", "6", "--max-runs", "6", "--warmup", "0", "--no-noise-check", "--budget", "20s")
	t.Logf("stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	if r.code != 0 {
		t.Fatalf("exit %d", r.code)
	}
	// alternation: the progress lines go a, b, a, b …
	var order []string
	for _, line := range strings.Split(r.stderr, "\n") {
		if m := regexp.MustCompile(`^\[\d+/\d+\] \S+ on (\S+)$`).FindStringSubmatch(line); m != nil {
			order = append(order, m[1])
		}
	}
	if len(order) < 4 {
		t.Fatalf("progress shows %d steps: %v", len(order), order)
	}
	for i, h := range order {
		if want := []string{"a", "b"}[i%2]; h != want {
			t.Fatalf("step %d ran on %s, want %s (alternating): %v", i+1, h, want, order)
		}
	}
	for _, want := range []string{"cpu", "cgroup CPU quota", "cgroup.cpu_quota_us: -1 → 100000", "somaxconn: 4096 → 128", "tcp_rmem"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("side-by-side report does not mention %q", want)
		}
	}
	list := perflab(t, l, "runs", "list", "--db", db, "--format", "json")
	var runs []map[string]any
	json.Unmarshal([]byte(list.stdout), &runs)
	hosts := map[any]int{}
	for _, r := range runs {
		hosts[r["host"]]++
	}
	if hosts["a"] == 0 || hosts["a"] != hosts["b"] {
		t.Errorf("stored runs by host = %v, want the same number for a and b", hosts)
	}
	for _, h := range l.Hosts {
		waitClean(t, h, 30*time.Second)
	}
}

// A Host of ~/.ssh/config with ProxyJump is reached through its jump
// host, whose key is checked too.
func TestProxyJump(t *testing.T) {
	l := lab(t, testlab.HostSpec{Name: "jump"}, testlab.HostSpec{Name: "inner"})
	if err := l.TrustAll(); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", l.Home)
	t.Setenv("SSH_AUTH_SOCK", "")
	cfgPath := filepath.Join(l.Home, ".ssh", "config")
	f, err := os.OpenFile(cfgPath, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(f, "Host behind\n  HostName %s\n  User root\n  ProxyJump jump\n", l.Host("inner").Addr)
	f.Close()
	// Only the jump host is reachable from here: the dialer refuses any
	// other first hop, so a success proves the path went through it.
	o := connectOpts(l, false)
	o.Config, _ = remote.LoadSSHConfig(cfgPath)
	dial := o.Dial
	o.Dial = func(ctx context.Context, network, addr string) (net.Conn, error) {
		if addr != l.Host("jump").Addr+":22" {
			return nil, fmt.Errorf("test dialer: %s is not the jump host", addr)
		}
		return dial(ctx, network, addr)
	}
	c, err := remote.Connect(context.Background(), "behind", o)
	if err != nil {
		t.Fatalf("through the jump host: %v", err)
	}
	defer c.Close()
	s, err := c.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	out, err := s.Output("hostname")
	if err != nil || strings.TrimSpace(string(out)) != "inner" {
		t.Errorf("hostname behind the jump host = %q, %v; want inner", out, err)
	}
}
