package search_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/search"
	"github.com/perflab/perflab/internal/testenv"
)

// These tests run the real perflab binary inside a network namespace
// ("search-" prefix) whose buffers and queues are deliberately bad, so the
// gain is real and known, and nothing outside the namespace changes: the
// search sees it is outside the host's namespace and searches namespaced
// knobs only; its journal lives in a temp dir (PERFLAB_TUNE_DIR).

var bad = map[string]string{
	"net.ipv4.tcp_rmem":            "4096 4096 4096",
	"net.ipv4.tcp_wmem":            "4096 4096 4096",
	"net.core.somaxconn":           "16",
	"net.ipv4.tcp_max_syn_backlog": "16",
	"net.ipv4.tcp_fin_timeout":     "60",
}

type lab struct {
	t       *testing.T
	ns, bin string
	journal string
}

func newLab(t *testing.T) *lab {
	testenv.Short(t)
	testenv.RequireRoot(t)
	testenv.RequireTool(t, "ip")
	testenv.RequireTool(t, "go")
	dir := t.TempDir()
	bin := filepath.Join(dir, "perflab")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/perflab/perflab/cmd/perflab").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	removeStaleLabs()
	l := &lab{t: t, ns: fmt.Sprintf("search-%d-%d", os.Getpid(), time.Now().UnixNano()%1e6), bin: bin, journal: filepath.Join(dir, "journal")}
	if out, err := exec.Command("ip", "netns", "add", l.ns).CombinedOutput(); err != nil {
		t.Fatalf("ip netns add: %v: %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", l.ns).Run() })
	l.in("ip", "link", "set", "lo", "up")
	for k, v := range bad {
		l.in("sysctl", "-qw", k+"="+v)
	}
	return l
}

func (l *lab) cmd(ctx context.Context, args ...string) *exec.Cmd {
	c := exec.CommandContext(ctx, "ip", append([]string{"netns", "exec", l.ns}, args...)...)
	c.Env = append(os.Environ(), "PERFLAB_TUNE_DIR="+l.journal, "NO_COLOR=1")
	return c
}

func (l *lab) in(args ...string) string {
	l.t.Helper()
	out, err := l.cmd(context.Background(), args...).CombinedOutput()
	if err != nil {
		l.t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func (l *lab) sysctl(name string) string {
	return strings.Join(strings.Fields(l.in("sysctl", "-n", name)), " ")
}

func (l *lab) search(args ...string) *search.Result {
	l.t.Helper()
	var out, errb bytes.Buffer
	c := l.cmd(context.Background(), append([]string{l.bin, "tune", "search", "web", "--measure", "net.tcp", "--yes", "--no-store", "--format", "json", "--run-budget", "2s"}, args...)...)
	c.Stdout, c.Stderr = &out, &errb
	if err := c.Run(); err != nil {
		l.t.Fatalf("tune search: %v\n%s", err, errb.String())
	}
	res, err := search.Decode(out.Bytes())
	if err != nil {
		l.t.Fatalf("decoding: %v\n%s", err, out.String())
	}
	l.t.Logf("%s: %s; %d runs, %d blocks, %.0f s", l.ns, res.Conclusion, res.Runs, res.Blocks, res.Seconds)
	return res
}

func (l *lab) restored() {
	l.t.Helper()
	for k, v := range bad {
		if got := l.sysctl(k); got != v {
			l.t.Errorf("%s reads %q after the search, was %q", k, got, v)
		}
	}
}

// Real gains: tiny socket buffers throttle loopback bandwidth; the search
// keeps what matters, drops what does not (somaxconn, the SYN backlog and
// fin_timeout do nothing to one stream), confirms the gain on fresh
// blocks, and a direct bench --state A/B of baseline vs winner agrees with
// it within the intervals. On Linux 6.18 neither buffer helps alone
// (tcp_rmem raised alone: 103 → 5 MB/s, delayed ACKs stall the 4 KiB send
// buffer; tcp_wmem alone: → 80 MB/s; both: 1,466 MB/s), so the gain is
// found by trying the catalogue's "tcp buffers" group together. (Bounds are proved in the simulation: on this
// loaded guest a 1-byte ping-pong beside a 4 KiB-buffer stream varies too
// much to bound usefully.)
func TestLiveRealGains(t *testing.T) {
	l := newLab(t)
	// Four blocks a step and 4 s runs: on this shared 2-CPU guest the
	// tiny-buffer bandwidth varies ±40% run to run under load.
	res := l.search("--param", "tests=bandwidth", "--run-budget", "4s",
		"--objective", "max:bandwidth", "--only",
		"--knob", "net.ipv4.tcp_rmem=4096 131072 6291456", "--knob", "net.ipv4.tcp_wmem=4096 16384 4194304",
		"--knob", "net.core.somaxconn=4096", "--knob", "net.ipv4.tcp_max_syn_backlog=4096", "--knob", "net.ipv4.tcp_fin_timeout=15")
	l.restored()
	if !res.Confirmed || !res.Restored || res.Gain == nil {
		t.Fatalf("no confirmed gain: %+v", res)
	}
	win := res.WinnerConfig()
	if win["net.ipv4.tcp_wmem"] == "" || win["net.ipv4.tcp_rmem"] == "" {
		t.Errorf("the winner lacks a socket buffer: %v", win)
	}
	for _, k := range []string{"net.core.somaxconn", "net.ipv4.tcp_max_syn_backlog", "net.ipv4.tcp_fin_timeout"} {
		if _, ok := win[k]; ok {
			t.Errorf("the winner keeps %s, which cannot move one stream's bandwidth: %v", k, win)
		}
	}
	if res.Runs == 0 || res.Blocks == 0 || res.ConfirmBlocks != 6 {
		t.Errorf("budget not reported: runs %d blocks %d confirm %d", res.Runs, res.Blocks, res.ConfirmBlocks)
	}
	// The direct A/B.
	set := func(c map[string]string) string {
		var parts []string
		for k, v := range c {
			parts = append(parts, fmt.Sprintf("%s='%s'", k, v))
		}
		return "sysctl -qw " + strings.Join(parts, " ")
	}
	winAll := map[string]string{}
	for k, v := range bad {
		winAll[k] = v
	}
	for k, v := range win {
		winAll[k] = v
	}
	out := l.in(l.bin, "bench", "net.tcp", "--param", "tests=bandwidth", "--budget", "4s",
		"--state", "base="+set(bad), "--state", "win="+set(winAll), "--blocks", "6", "--no-store", "--format", "json")
	l.in("sh", "-c", set(bad))
	var ab struct {
		Effects []struct {
			Metric string   `json:"metric"`
			Ratio  float64  `json:"ratio"`
			Lo     *float64 `json:"ratio_lo"`
			Hi     *float64 `json:"ratio_hi"`
		} `json:"effects"`
	}
	if i := strings.Index(out, "{\n  \"kind\": \"perflab-interleaved"); i >= 0 {
		out = out[i:]
	}
	if err := json.NewDecoder(strings.NewReader(out)).Decode(&ab); err != nil {
		t.Fatalf("bench --state json: %v\n%s", err, out)
	}
	for _, e := range ab.Effects {
		if e.Metric != "bandwidth" || e.Lo == nil {
			continue
		}
		t.Logf("search: ×%.3f [%.3f, %.3f]; bench --state: ×%.3f [%.3f, %.3f]", res.Gain.Ratio, res.Gain.Lo, res.Gain.Hi, e.Ratio, *e.Lo, *e.Hi)
		// The direct A/B must show the gain too, and of the same order.
		// Not within the intervals: each interval is one session's, and
		// the effect itself moves between sessions minutes apart — the
		// 4 KiB baseline's speed is set by delayed-ACK stalls whose cost
		// depends on what else the machine runs at that moment (×28.6 vs
		// ×22.3 on a quiet VM, ×183 [132, 253] vs ×90 [64, 126] while a
		// changing load ran beside: both right for their session).
		if *e.Lo <= 1+res.MinGain {
			t.Errorf("the direct A/B does not show the gain: ×%.3f [%.3f, %.3f]", e.Ratio, *e.Lo, *e.Hi)
		}
		if r := res.Gain.Ratio / e.Ratio; r < 0.25 || r > 4 {
			t.Errorf("the search's gain ×%.1f and the direct A/B's ×%.1f differ by more than ×4", res.Gain.Ratio, e.Ratio)
		}
		return
	}
	t.Fatalf("no bandwidth effect in bench --state output:\n%s", out)
}

// No false gains on the real host: knobs that cannot move one connection's
// round-trip latency end with "no setting improved".
func TestLiveNoFalseGain(t *testing.T) {
	l := newLab(t)
	res := l.search("--param", "tests=latency", "--param", "duration=200ms", "--only",
		"--knob", "net.ipv4.tcp_fin_timeout=15,30", "--knob", "net.ipv4.tcp_keepalive_time=60,600",
		"--knob", "net.ipv4.tcp_max_syn_backlog=4096")
	l.restored()
	if res.Confirmed || !strings.Contains(res.Conclusion, "no setting improved net.tcp beyond ±2%") {
		t.Fatalf("a false gain: %s (%+v)", res.Conclusion, res.Winner)
	}
}

// kill -9 mid-search leaves a journal 'perflab tune revert' restores from.
func TestLiveKill9ThenRevert(t *testing.T) {
	l := newLab(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := l.cmd(ctx, l.bin, "tune", "search", "web", "--measure", "net.tcp", "--param", "tests=bandwidth", "--yes", "--no-store",
		"--run-budget", "5s", "--only", "--knob", "net.ipv4.tcp_rmem=4096 131072 6291456", "--knob", "net.ipv4.tcp_wmem=4096 16384 4194304")
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(90 * time.Second)
	for {
		b, _ := os.ReadFile(filepath.Join(l.journal, "journal.json"))
		if bytes.Contains(b, []byte(`"applied"`)) {
			break
		}
		if time.Now().After(deadline) {
			_ = c.Process.Kill()
			t.Fatal("the search never applied a knob")
		}
		time.Sleep(50 * time.Millisecond)
	}
	changed := l.sysctl("net.ipv4.tcp_rmem") != bad["net.ipv4.tcp_rmem"] || l.sysctl("net.ipv4.tcp_wmem") != bad["net.ipv4.tcp_wmem"]
	if err := c.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = c.Wait()
	if !changed {
		t.Log("killed between the journal write and the knob write")
	}
	// The next search refuses while the journal holds changes.
	refuse := l.cmd(context.Background(), l.bin, "tune", "search", "web", "--measure", "net.tcp", "--yes", "--no-store")
	if out, err := refuse.CombinedOutput(); err == nil || !strings.Contains(string(out), "tune revert") {
		t.Errorf("a search started over an active journal: %v\n%s", err, out)
	}
	l.in(l.bin, "tune", "revert")
	l.restored()
	if _, err := os.Stat(filepath.Join(l.journal, "journal.json")); err == nil {
		t.Error("the journal is still active after revert")
	}
}

// removeStaleLabs deletes the namespaces of labs whose test process is
// gone (killed before its cleanup ran): "search-PID-N" with no process PID.
func removeStaleLabs() {
	names, _ := filepath.Glob("/run/netns/search-*")
	for _, path := range names {
		ns := filepath.Base(path)
		var pid, n int
		if _, err := fmt.Sscanf(ns, "search-%d-%d", &pid, &n); err != nil {
			continue
		}
		if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); os.IsNotExist(err) {
			_ = exec.Command("ip", "netns", "del", ns).Run()
		}
	}
}

// A lab left by a killed test (its process gone) is removed by the next
// lab; one whose process lives is not.
func TestRemoveStaleLabs(t *testing.T) {
	testenv.RequireRoot(t)
	testenv.RequireTool(t, "ip")
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	stale := fmt.Sprintf("search-%d-1", dead.Process.Pid)
	live := fmt.Sprintf("search-%d-2", os.Getpid())
	for _, ns := range []string{stale, live} {
		if out, err := exec.Command("ip", "netns", "add", ns).CombinedOutput(); err != nil {
			t.Fatalf("ip netns add: %v: %s", err, out)
		}
		t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", ns).Run() })
	}
	removeStaleLabs()
	if _, err := os.Stat("/run/netns/" + stale); !os.IsNotExist(err) {
		t.Errorf("%s (process gone) is still there: %v", stale, err)
	}
	if _, err := os.Stat("/run/netns/" + live); err != nil {
		t.Errorf("%s (this process) was removed: %v", live, err)
	}
}
