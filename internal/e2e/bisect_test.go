package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/testenv"
)

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

// perflab builds the binary once for the tests that must run it as a
// process: inside a network namespace, or to kill it.
func perflab(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() {
		dir, err := os.MkdirTemp("", "perflab-e2e-bin-")
		if err != nil {
			binErr = err
			return
		}
		binPath = filepath.Join(dir, "perflab")
		cmd := exec.Command("go", "build", "-o", binPath, "./cmd/perflab")
		cmd.Dir = filepath.Join("..", "..")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			binErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

// run runs the binary (optionally inside netns ns) and returns stdout.
func runPerflab(t *testing.T, ns string, args ...string) (string, string, int) {
	t.Helper()
	bin := perflab(t)
	argv := append([]string{bin}, args...)
	if ns != "" {
		argv = append([]string{"ip", "netns", "exec", ns}, argv...)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), "NO_COLOR=1", "XDG_DATA_HOME="+t.TempDir())
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%v: %v", argv, err)
	}
	return out.String(), errb.String(), code
}

func readKnob(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	v := strings.TrimSpace(string(b))
	if i := strings.IndexByte(v, '['); i >= 0 {
		v = v[i+1 : strings.IndexByte(v, ']')]
	}
	return v
}

func writeKnob(t *testing.T, path, v string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(v+"\n"), 0o644); err != nil {
		t.Fatalf("writing %s: %v", path, err)
	}
}

const (
	swappinessKnob = "/proc/sys/vm/swappiness"
	autogroupKnob  = "/proc/sys/kernel/sched_autogroup_enabled"
)

type bisectDoc struct {
	Metric string
	Causes []struct {
		Knob, Good, Bad, Outcome string
		Confirmed                bool
		Share                    *float64
	}
	Untestable []struct{ Path, Instruction string }
	Runs       int
	NaiveRuns  int `json:"naive_runs"`
	Restored   bool
}

// irrelevant are settings memory.pagefault does not depend on, each with
// two values to flip between.
var irrelevant = []struct{ path, a, b string }{
	{swappinessKnob, "10", "61"},
	{autogroupKnob, "0", "1"},
	{"/proc/sys/net/ipv4/tcp_keepalive_time", "7000", "7100"},
	{"/proc/sys/net/ipv4/tcp_fin_timeout", "50", "55"},
	{"/proc/sys/kernel/printk_ratelimit", "6", "7"},
	{"/proc/sys/kernel/msgmnb", "16000", "16100"},
}

// Issue 15 on this machine: the good snapshot is taken under THP always;
// the host is then set to never plus six irrelevant changes. bisect names
// THP as the confirmed cause with most of the gap, clears the others,
// measures fewer runs than one at a time, and leaves every setting as it
// was before it started.
//
// Six irrelevant knobs, not two: bisection halves, so it only saves runs
// over one-at-a-time when there are enough candidates. With three, its
// best case is 23 runs against 24, and one half whose interval misses its
// parent's (THP's effect on page faults moves between sessions, ×0.16 to
// ×0.24 here, more than a two-block interval) costs four more. With seven
// it needs at most 6 + 3×8 + 9 = 39 runs against 48.
func TestBisectTHP(t *testing.T) {
	testenv.Short(t)
	testenv.RequireRoot(t)
	if _, err := os.Stat(thpKnob); err != nil {
		testenv.Unavailable(t, "kernel without transparent huge pages")
	}
	for _, k := range irrelevant {
		if _, err := os.Stat(k.path); err != nil {
			testenv.Unavailable(t, "no %s", k.path)
		}
	}
	orig := map[string]string{thpKnob: readKnob(t, thpKnob)}
	for _, k := range irrelevant {
		orig[k.path] = readKnob(t, k.path)
	}
	t.Cleanup(func() {
		for k, v := range orig {
			writeKnob(t, k, v)
		}
	})
	writeKnob(t, thpKnob, "always")
	good := filepath.Join(t.TempDir(), "good.json")
	if _, errs, code := runPerflab(t, "", "snapshot", "-o", good); code != 0 {
		t.Fatalf("snapshot: %d %s", code, errs)
	}
	writeKnob(t, thpKnob, "never")
	for _, k := range irrelevant {
		writeKnob(t, k.path, map[bool]string{true: k.a, false: k.b}[orig[k.path] != k.a])
	}
	before := map[string]string{}
	for k := range orig {
		before[k] = readKnob(t, k)
	}

	out, errs, code := runPerflab(t, "", "bisect", "--good", good, "memory.pagefault", "--metric", "ns_per_page.thp",
		"--param", "size=32MiB", "--param", "duration=60ms", "--budget", "3s", "--format", "json", "--yes")
	if code != 0 {
		t.Fatalf("bisect exit %d: %s\n%s", code, errs, out)
	}
	var doc bisectDoc
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	t.Logf("bisect: %s", out)
	var thp bool
	for _, c := range doc.Causes {
		switch {
		case strings.Contains(c.Knob, "transparent_hugepage"):
			thp = true
			share := -1.0
			if c.Share != nil {
				share = *c.Share
			}
			if !c.Confirmed || share < 0.5 || c.Good != "always" || c.Bad != "never" {
				t.Errorf("THP: %+v share %.2f, want confirmed with most of the gap", c, share)
			}
		case c.Outcome != "cleared":
			t.Errorf("%s: %s, want cleared", c.Knob, c.Outcome)
		}
	}
	// The kernel raises vm.min_free_kbytes when THP is enabled (unless it
	// is already above khugepaged's reserve), so the good snapshot may
	// differ there too: one more candidate, also cleared.
	if !thp || len(doc.Causes) < 1+len(irrelevant) {
		t.Errorf("causes %+v, want THP and the %d irrelevant knobs", doc.Causes, len(irrelevant))
	}
	if doc.Runs >= doc.NaiveRuns {
		t.Errorf("%d runs, one at a time would take %d", doc.Runs, doc.NaiveRuns)
	}
	if !doc.Restored {
		t.Error("bisect says the host is not restored")
	}
	for k, v := range before {
		if got := readKnob(t, k); got != v {
			t.Errorf("%s = %s after bisect, %s before", k, got, v)
		}
	}
}

// A bisection killed with SIGKILL mid-search leaves its flips in tune's
// journal; 'perflab tune revert' restores every value.
func TestBisectSIGKILLThenRevert(t *testing.T) {
	testenv.Short(t)
	testenv.RequireRoot(t)
	if _, err := os.Stat(thpKnob); err != nil {
		testenv.Unavailable(t, "kernel without transparent huge pages")
	}
	origTHP, origSwap := readKnob(t, thpKnob), readKnob(t, swappinessKnob)
	t.Cleanup(func() { writeKnob(t, thpKnob, origTHP); writeKnob(t, swappinessKnob, origSwap) })
	writeKnob(t, thpKnob, "always")
	writeKnob(t, swappinessKnob, "60")
	good := filepath.Join(t.TempDir(), "good.json")
	if _, errs, code := runPerflab(t, "", "snapshot", "-o", good); code != 0 {
		t.Fatalf("snapshot: %s", errs)
	}
	writeKnob(t, thpKnob, "never")
	writeKnob(t, swappinessKnob, "13")

	cmd := exec.Command(perflab(t), "bisect", "--good", good, "memory.pagefault", "--budget", "3s", "--yes", "--format", "json")
	cmd.Env = append(os.Environ(), "XDG_DATA_HOME="+t.TempDir())
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Kill it once a flip is in place: THP reads always (the good value)
	// while this host's is never.
	deadline := time.Now().Add(60 * time.Second)
	for readKnob(t, thpKnob) != "always" && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(time.Duration(rand.IntN(300)) * time.Millisecond)
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	_ = cmd.Wait()
	if time.Now().After(deadline) {
		t.Fatal("bisect never flipped THP")
	}
	t.Logf("killed with THP %s, swappiness %s", readKnob(t, thpKnob), readKnob(t, swappinessKnob))
	if _, errs, code := runPerflab(t, "", "tune", "revert"); code != 0 {
		t.Fatalf("tune revert: %d %s", code, errs)
	}
	if a, b := readKnob(t, thpKnob), readKnob(t, swappinessKnob); a != "never" || b != "13" {
		t.Errorf("after tune revert: THP %s swappiness %s, want never and 13", a, b)
	}
}

// netns makes a network namespace with loopback up and removes it at the
// end of the test.
func netns(t *testing.T) string {
	t.Helper()
	testenv.RequireRoot(t)
	if _, err := exec.LookPath("ip"); err != nil {
		testenv.Unavailable(t, "no ip (iproute2)")
	}
	name := fmt.Sprintf("e2e-%d-%d", os.Getpid(), rand.IntN(1e6))
	if out, err := exec.Command("ip", "netns", "add", name).CombinedOutput(); err != nil {
		testenv.Unavailable(t, "ip netns add: %v %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", name).Run() })
	if out, err := exec.Command("ip", "netns", "exec", name, "ip", "link", "set", "lo", "up").CombinedOutput(); err != nil {
		t.Fatalf("lo up: %v %s", err, out)
	}
	return name
}

func nsSysctl(t *testing.T, ns, name, value string) {
	t.Helper()
	if out, err := exec.Command("ip", "netns", "exec", ns, "sysctl", "-qw", name+"="+value).CombinedOutput(); err != nil {
		t.Fatalf("sysctl %s in %s: %v %s", name, ns, err, out)
	}
}

func nsRead(t *testing.T, ns, name string) string {
	t.Helper()
	out, err := exec.Command("ip", "netns", "exec", ns, "sysctl", "-n", name).Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(strings.Fields(string(out)), " ")
}

// Issue 15 in a network namespace: the good snapshot has large TCP buffers,
// the namespace then tiny ones (they matter even on loopback) plus an
// irrelevant fin_timeout difference. Bisect on net.tcp bandwidth names the
// buffers and clears fin_timeout.
func TestBisectTCPBuffersInNetns(t *testing.T) {
	testenv.Short(t)
	ns := netns(t)
	nsSysctl(t, ns, "net.ipv4.tcp_rmem", "4096 131072 6291456")
	nsSysctl(t, ns, "net.ipv4.tcp_wmem", "4096 16384 4194304")
	nsSysctl(t, ns, "net.ipv4.tcp_fin_timeout", "60")
	good := filepath.Join(t.TempDir(), "good.json")
	if _, errs, code := runPerflab(t, ns, "snapshot", "-o", good); code != 0 {
		t.Fatalf("snapshot: %s", errs)
	}
	nsSysctl(t, ns, "net.ipv4.tcp_rmem", "4096 4096 4096")
	nsSysctl(t, ns, "net.ipv4.tcp_wmem", "4096 4096 4096")
	nsSysctl(t, ns, "net.ipv4.tcp_fin_timeout", "30")
	out, errs, code := runPerflab(t, ns, "bisect", "--good", good, "probe:net.tcp", "--metric", "bandwidth",
		"--param", "duration=100ms", "--budget", "3s", "--format", "json", "--yes")
	if code != 0 {
		t.Fatalf("bisect exit %d: %s\n%s", code, errs, out)
	}
	var doc bisectDoc
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	t.Logf("bisect: %s", out)
	var buffers int
	for _, c := range doc.Causes {
		switch c.Knob {
		case "net.ipv4.tcp_rmem", "net.ipv4.tcp_wmem":
			if c.Outcome != "cleared" {
				buffers++
			}
		case "net.ipv4.tcp_fin_timeout":
			if c.Outcome != "cleared" {
				t.Errorf("fin_timeout: %s, want cleared", c.Outcome)
			}
		default:
			t.Errorf("unexpected candidate %s (%s)", c.Knob, c.Outcome)
		}
	}
	if buffers == 0 {
		t.Errorf("no TCP buffer setting found: %+v", doc.Causes)
	}
	if !doc.Restored || nsRead(t, ns, "net.ipv4.tcp_rmem") != "4096 4096 4096" || nsRead(t, ns, "net.ipv4.tcp_fin_timeout") != "30" {
		t.Errorf("namespace not restored: rmem %s fin %s", nsRead(t, ns, "net.ipv4.tcp_rmem"), nsRead(t, ns, "net.ipv4.tcp_fin_timeout"))
	}
}

// Issue 12: tune apply web --measure in a namespace whose TCP buffers are
// tiny prints each measured effect with a CI and leaves the namespace
// tuned; tune revert restores it. (The web plan also has host-wide knobs,
// vm.* and THP: this package runs alone, and revert restores them too.)
func TestTuneApplyMeasureInNetns(t *testing.T) {
	testenv.Short(t)
	ns := netns(t)
	nsSysctl(t, ns, "net.ipv4.tcp_rmem", "4096 4096 4096")
	nsSysctl(t, ns, "net.ipv4.tcp_wmem", "4096 4096 4096")
	out, errs, code := runPerflab(t, ns, "tune", "apply", "web", "--measure", "probe:net.tcp", "--blocks", "3", "--budget", "3s", "--yes", "--skip-blocked")
	t.Logf("tune apply --measure:\n%s\n%s", out, errs)
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	if !strings.Contains(out, "Interleaved effects") || !strings.Contains(out, "after vs before") || !strings.Contains(out, "bandwidth") {
		t.Errorf("no measured effects:\n%s", out)
	}
	if rmem := nsRead(t, ns, "net.ipv4.tcp_rmem"); rmem == "4096 4096 4096" {
		t.Errorf("the namespace was not left tuned: tcp_rmem %s", rmem)
	}
	if _, errs, code := runPerflab(t, ns, "tune", "revert"); code != 0 {
		t.Fatalf("tune revert: %s", errs)
	}
	if rmem := nsRead(t, ns, "net.ipv4.tcp_rmem"); rmem != "4096 4096 4096" {
		t.Errorf("tune revert left tcp_rmem %s", rmem)
	}
}
