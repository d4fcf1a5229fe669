package container

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/audit"
	"github.com/perflab/perflab/internal/hostfs"
	"github.com/perflab/perflab/internal/snapshot"
	"github.com/perflab/perflab/internal/testenv"
	"github.com/perflab/perflab/internal/tune"
)

// Live tests start real containers with Podman (Debian's, installed by
// scripts/test) from an overlay of the host's own root, so no image is
// pulled. On the CI machine's hybrid cgroups crun refuses to start (runc),
// PID 1 is not systemd (cgroupfs manager) and the default ulimits fail.
// Containers are named perflab-test-*; a sweep at the start removes any a
// killed test run left.

var sweepOnce sync.Once

func podman(t *testing.T) string {
	t.Helper()
	testenv.Short(t)
	testenv.RequireRoot(t)
	bin := testenv.RequireTool(t, "podman")
	testenv.RequireTool(t, "runc")
	sweepOnce.Do(func() {
		out, _ := exec.Command(bin, "ps", "-a", "--format", "{{.Names}}").Output()
		for _, n := range strings.Fields(string(out)) {
			if strings.HasPrefix(n, "perflab-test-") {
				_ = exec.Command(bin, "rm", "-f", "-t", "0", n).Run()
			}
		}
	})
	return bin
}

// startContainer runs `podman run -d` with the options this host needs
// before the caller's, and removes the container when the test ends.
func startContainer(t *testing.T, name string, opts []string, cmd ...string) string {
	t.Helper()
	bin := podman(t)
	name = "perflab-test-" + name
	args := append([]string{"--runtime", "runc", "--cgroup-manager=cgroupfs", "run", "-d", "--name", name,
		"--ulimit", "nofile=1024:1024", "--ulimit", "nproc=4096:4096"}, opts...)
	args = append(args, "--rootfs", "/:O")
	args = append(args, cmd...)
	out, err := exec.Command(bin, args...).CombinedOutput()
	t.Cleanup(func() { _ = exec.Command(bin, "rm", "-f", "-t", "0", name).Run() })
	if err != nil {
		testenv.Unavailable(t, "podman run: %v: %s", err, out)
	}
	return name
}

func hostRoot(t *testing.T) hostfs.FS {
	fs, err := hostfs.New("/")
	if err != nil {
		t.Fatal(err)
	}
	return fs
}

func hostSomaxconn(t *testing.T) string {
	b, err := os.ReadFile("/proc/sys/net/core/somaxconn")
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

// The host at 4096 (set and restored if it is not), the container at 128.
func TestLiveSomaxconnIsTheContainers(t *testing.T) {
	name := startContainer(t, "somaxconn", []string{"--sysctl", "net.core.somaxconn=128"}, "sleep", "infinity")
	if old := hostSomaxconn(t); old != "4096" {
		if err := os.WriteFile("/proc/sys/net/core/somaxconn", []byte("4096"), 0); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = os.WriteFile("/proc/sys/net/core/somaxconn", []byte(old), 0) })
	}
	tgt, err := Open(hostRoot(t), name)
	if err != nil {
		t.Fatal(err)
	}
	s, err := tgt.Snapshot(snapshot.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if s.Sysctl["net.core.somaxconn"] != "128" || s.Container.HostSysctl["net.core.somaxconn"] != "4096" {
		t.Fatalf("container %q, host %q", s.Sysctl["net.core.somaxconn"], s.Container.HostSysctl["net.core.somaxconn"])
	}
	w, _ := audit.LookupWorkload("web")
	var somax audit.Finding
	for _, f := range audit.Run(s, w) {
		if f.Rule == "NET-SOMAXCONN" {
			somax = f
		}
	}
	want := "net.core.somaxconn = 128 in container " + name + "'s network namespace; the host has 4096"
	if !strings.Contains(somax.Observed, want) {
		t.Errorf("audit: %q, want %q", somax.Observed, want)
	}

	// tune apply --container: inside only; revert restores 128; the host
	// keeps 4096 throughout.
	h := tgt.TuneHost()
	h.Dir = t.TempDir()
	p := tune.MakePlan(s, w)
	h.Check(&p)
	var items []tune.Item
	for _, it := range p.Items {
		if it.Blocked == "" && it.Change.Target == "net.core.somaxconn" {
			items = append(items, it)
		}
	}
	if len(items) != 1 {
		t.Fatalf("plan has no writable somaxconn item: %+v", p.Items)
	}
	p.Items = items
	if _, err := h.Apply(context.Background(), p, tune.ApplyOptions{Source: "test"}); err != nil {
		t.Fatal(err)
	}
	inside := func() string {
		v, err := tgt.View().ReadString("/proc/sys/net/core/somaxconn")
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	if got := inside(); got != "65535" || hostSomaxconn(t) != "4096" {
		t.Fatalf("after apply: container %s, host %s", got, hostSomaxconn(t))
	}
	j, _ := h.Status()
	if j == nil || len(j.Entries) != 1 || j.Entries[0].NS.Net != tgt.NetNSInode() || j.Entries[0].NS.Net == hostRoot(t).WithNetNS(1).NetNSInode() {
		t.Fatalf("journal entry not bound to the container's netns: %+v", j)
	}
	// A later perflab (a new process after a kill -9) reverts from the
	// journal alone.
	again, err := Open(hostRoot(t), name)
	if err != nil {
		t.Fatal(err)
	}
	h2 := again.TuneHost()
	h2.Dir = h.Dir
	if _, err := h2.Revert(tune.RevertOptions{Discard: true}); err != nil {
		t.Fatal(err)
	}
	if got := inside(); got != "128" || hostSomaxconn(t) != "4096" {
		t.Fatalf("after revert: container %s, host %s", got, hostSomaxconn(t))
	}
}

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

// perflabBin builds perflab once for the tests that run it as a user would.
func perflabBin(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() {
		dir, err := os.MkdirTemp("", "perflab-test-bin-")
		if err != nil {
			binErr = err
			return
		}
		binPath = filepath.Join(dir, "perflab")
		out, err := exec.Command("go", "build", "-o", binPath, "github.com/perflab/perflab/cmd/perflab").CombinedOutput()
		if err != nil {
			binErr = &exec.Error{Name: string(out), Err: err}
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	t.Cleanup(func() {}) // the binary's directory is removed by TestMain
	return binPath
}

func TestMain(m *testing.M) {
	code := m.Run()
	if binPath != "" {
		os.RemoveAll(filepath.Dir(binPath))
	}
	os.Exit(code)
}

func cpuUsageNS(t *testing.T, name string) int64 {
	t.Helper()
	tgt, err := Open(hostRoot(t), name)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/sys/fs/cgroup/cpuacct" + tgt.C.Cgroup + "/cpuacct.usage", "/sys/fs/cgroup/cpu,cpuacct" + tgt.C.Cgroup + "/cpuacct.usage"} {
		if b, err := os.ReadFile(p); err == nil {
			v, _ := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
			return v
		}
	}
	if b, err := os.ReadFile("/sys/fs/cgroup" + tgt.C.Cgroup + "/cpu.stat"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(l, "usage_usec "); ok {
				n, _ := strconv.ParseInt(v, 10, 64)
				return n * 1000
			}
		}
	}
	t.Fatal("no CPU usage file for the container's cgroup")
	return 0
}

// --cpus 0.5: the audit names the throttling; bench --container runs its
// probe under the quota (the cgroup's CPU time over the bench stays within
// 0.5 CPU, which the kernel guarantees whatever else runs); compare names
// the quota first.
func TestLiveQuotaBenchCompare(t *testing.T) {
	name := startContainer(t, "quota", []string{"--cpus", "0.5"}, "sh", "-c", "while :; do :; done")
	bin := perflabBin(t)
	time.Sleep(1500 * time.Millisecond)
	tgt, err := Open(hostRoot(t), name)
	if err != nil {
		t.Fatal(err)
	}
	s, err := tgt.Snapshot(snapshot.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cg := s.Cgroup
	if cg.CPUQuotaUS != 50000 || cg.CPUPeriodUS != 100000 || cg.NrPeriods == 0 {
		t.Fatalf("cgroup %+v", cg)
	}
	w, _ := audit.LookupWorkload("latency")
	for _, f := range audit.Run(s, w) {
		if f.Rule == "CGROUP-CPU-THROTTLED" {
			if !strings.Contains(f.Observed, "throttled in ") || !strings.Contains(f.Observed, "s in total") || !strings.Contains(f.Observed, "quota 0.50 CPUs") {
				t.Errorf("throttling finding: %s %q", f.Status, f.Observed)
			}
		}
	}

	db := filepath.Join(t.TempDir(), "runs.db")
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(bin, args...)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil {
			t.Fatalf("perflab %s: %v\n%s%s", strings.Join(args, " "), err, out.String(), errb.String())
		}
		return out.String()
	}
	common := []string{"--db", db, "--budget", "4s", "--no-noise-check", "--max-runs", "8"}
	run(append([]string{"bench", "probe:cpu", "--label", "host"}, common...)...)
	before, start := cpuUsageNS(t, name), time.Now()
	run(append([]string{"bench", "probe:cpu", "--label", "container", "--container", name}, common...)...)
	used, wall := cpuUsageNS(t, name)-before, time.Since(start)
	// The quota bounds the cgroup to 0.5 CPU per 100 ms period; allow one
	// period of burst at each end.
	if limit := wall.Nanoseconds()/2 + 2*50_000_000; used > limit {
		t.Errorf("the container's cgroup used %v CPU in %v: more than its 0.5-CPU quota allows (%v) — the probe ran outside it", time.Duration(used), wall, time.Duration(limit))
	}
	out := run("compare", "host", "container", "--db", db)
	if cause := firstSettingCause(out); !strings.Contains(cause, "cgroup CPU quota") || !strings.Contains(cause, "cgroup.cpu_quota_us: -1 → 50000") {
		t.Errorf("first setting named as a cause %q, want the CPU quota:\n%s", cause, out)
	}
}

// firstSettingCause is the first "Likely causes" line of a compare report
// that names a setting: on a shared VM the host's own drift, noise or
// pressure may rank above it, and then they are the truer explanation of
// the gap.
func firstSettingCause(report string) string {
	i := strings.Index(report, "Likely causes")
	if i < 0 {
		return ""
	}
	for _, l := range strings.Split(report[i:], "\n")[1:] {
		l = strings.TrimSpace(l)
		if l == "" {
			break
		}
		n := strings.IndexByte(l, '.')
		if n < 1 || strings.Trim(l[:n], "0123456789") != "" {
			continue
		}
		c := strings.TrimSpace(l[n+1:])
		if strings.HasPrefix(c, "host drift") || strings.HasPrefix(c, "host noise") || strings.Contains(c, "(monitor)") {
			continue
		}
		return c
	}
	return ""
}

// A container that stops mid-run ends the run with one clear line and exit
// 3; Ctrl-C ends it like any bench; nothing of perflab stays in its cgroup.
func TestLiveStopAndInterrupt(t *testing.T) {
	bin := perflabBin(t)
	for _, how := range []string{"stop", "interrupt"} {
		t.Run(how, func(t *testing.T) {
			name := startContainer(t, how, nil, "sleep", "infinity")
			tgt, err := Open(hostRoot(t), name)
			if err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(bin, "bench", "probe:cpu", "--container", name, "--no-store", "--budget", "60s", "--min-runs", "50", "--max-runs", "50", "--no-noise-check")
			var errb bytes.Buffer
			cmd.Stderr = &errb
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			// Mid-run: once perflab's copy is in the container's cgroup
			// (however long a loaded machine takes to get it there).
			procs := cgroupProcs(t, tgt)
			for start := time.Now(); len(procs) < 2 && time.Since(start) < time.Minute; procs = cgroupProcs(t, tgt) {
				time.Sleep(100 * time.Millisecond)
			}
			time.Sleep(500 * time.Millisecond)
			if how == "stop" {
				_ = exec.Command("podman", "rm", "-f", "-t", "0", name).Run()
			} else {
				_ = cmd.Process.Signal(syscall.SIGINT)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case <-time.After(60 * time.Second):
				_ = cmd.Process.Kill()
				t.Fatal("perflab did not end")
			case <-done:
			}
			code := cmd.ProcessState.ExitCode()
			msg := strings.TrimSpace(errb.String())
			if how == "stop" {
				lines := strings.Split(msg, "\n")
				last := lines[len(lines)-1]
				if code != 3 || !strings.Contains(last, "container "+name+" stopped") {
					t.Errorf("exit %d, last line %q (all: %q)", code, last, msg)
				}
			}
			if len(procs) < 2 {
				t.Errorf("perflab's copy was not in the container's cgroup: %v", procs)
			}
			// The copy is gone: no process of those in the cgroup during
			// the run is alive except the container's own.
			// (Exits are reaped asynchronously: allowed 10 s.)
			if how == "stop" {
				for _, p := range procs {
					if p != tgt.C.PID && !gone(func() bool { _, err := os.Stat("/proc/" + strconv.Itoa(p)); return err != nil }) {
						t.Errorf("process %d of the run is still alive", p)
					}
				}
			}
			if how == "interrupt" && !gone(func() bool { ps := cgroupProcs(t, tgt); return len(ps) == 1 && ps[0] == tgt.C.PID }) {
				t.Errorf("processes left in the container's cgroup after Ctrl-C: %v", cgroupProcs(t, tgt))
			}
		})
	}
}

// gone polls cond for up to 10 s.
func gone(cond func() bool) bool {
	for start := time.Now(); time.Since(start) < 10*time.Second; time.Sleep(50 * time.Millisecond) {
		if cond() {
			return true
		}
	}
	return false
}

func cgroupProcs(t *testing.T, tgt *Target) []int {
	t.Helper()
	for _, d := range []string{"/sys/fs/cgroup/cpu" + tgt.C.Cgroup, "/sys/fs/cgroup" + tgt.C.Cgroup} {
		b, err := os.ReadFile(d + "/cgroup.procs")
		if err != nil {
			continue
		}
		var out []int
		for _, f := range strings.Fields(string(b)) {
			n, _ := strconv.Atoi(f)
			out = append(out, n)
		}
		return out
	}
	return nil
}
