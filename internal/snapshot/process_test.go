package snapshot

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/fixture"
	"github.com/perflab/perflab/internal/hostfs"
	"github.com/perflab/perflab/internal/testenv"
)

func TestProcessJemallocPreload(t *testing.T) {
	fs := tree(t, "kvm", nil)
	s := runAreas(t, fs, Options{PID: 4243}, collectProcess)
	p := s.Process
	if p == nil {
		t.Fatalf("no process; unavailable = %v", s.Unavailable)
	}
	wantEq(t, "comm", p.Comm, "sleep")
	wantEq(t, "cmdline", p.Cmdline, []string{"sleep", "60"})
	wantEq(t, "ld_preload", p.LDPreload, "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2")
	wantEq(t, "allocators", p.Allocators, []string{"jemalloc"})
	wantEq(t, "thp disabled", p.THPDisabled, false)
	wantEq(t, "cpus", p.CPUsAllowed, []int{0, 1})
	wantEq(t, "mems", p.MemsAllowed, []int{0})
	wantEq(t, "threads", p.Threads, int64(1))
	var rss int64
	rollup, _ := fs.ReadFile("/proc/4243/smaps_rollup")
	for _, line := range strings.Split(string(rollup), "\n") {
		fmt.Sscanf(line, "Rss: %d kB", &rss)
	}
	if rss == 0 {
		t.Fatal("fixture smaps_rollup has no Rss line")
	}
	wantEq(t, "rss from smaps_rollup", p.RssKiB, rss)
	if p.NofileSoft <= 0 {
		t.Errorf("nofile = %d", p.NofileSoft)
	}
	wantEq(t, "cgroup (v2 line)", p.Cgroup, "/")
}

func TestProcessPlain(t *testing.T) {
	s := runAreas(t, tree(t, "metal", nil), Options{PID: 4242}, collectProcess)
	wantEq(t, "allocators", s.Process.Allocators, []string{})
	wantEq(t, "ld_preload", s.Process.LDPreload, "")
	wantEq(t, "cpus", s.Process.CPUsAllowed, []int{0, 1, 2, 3, 4, 5, 6, 7})
	wantEq(t, "mems", s.Process.MemsAllowed, []int{0, 1})
}

func TestProcessTHPAndMappedTcmalloc(t *testing.T) {
	// A JVM-like process: tcmalloc mapped (linked, not preloaded), THP
	// disabled by prctl, 1 GiB of anonymous huge pages before it was.
	base := tree(t, "metal", nil)
	status, _ := base.ReadString("/proc/4243/status")
	status = strings.Replace(status, "THP_enabled:\t1", "THP_enabled:\t0", 1)
	smaps, _ := base.ReadString("/proc/4243/smaps_rollup")
	smaps = strings.Replace(smaps, "AnonHugePages:         0 kB", "AnonHugePages:   1048576 kB", 1)
	maps := "7f0000000000-7f0000040000 r-xp 00000000 fe:00 123 /usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4.5.9\n"
	s := runAreas(t, overlay(t, "metal", map[string]string{
		"/proc/4243/status":       status + "\n",
		"/proc/4243/smaps_rollup": smaps + "\n",
		"/proc/4243/maps":         maps,
		"/proc/4243/environ":      "PATH=/usr/bin\x00",
	}), Options{PID: 4243}, collectProcess)
	p := s.Process
	wantEq(t, "thp disabled", p.THPDisabled, true)
	wantEq(t, "anon huge", p.AnonHugePagesKiB, int64(1048576))
	wantEq(t, "allocators", p.Allocators, []string{"tcmalloc"})
	wantEq(t, "cgroup", p.Cgroup, "/system.slice/app.service")
}

func TestProcessMissing(t *testing.T) {
	s := runAreas(t, tree(t, "kvm", nil), Options{PID: 999999}, collectProcess)
	if s.Process != nil {
		t.Errorf("process = %+v for a PID that does not exist", s.Process)
	}
	wantMissing(t, s, "process", "no process 999999")
	wantMissing(t, s, "process.allocators", "no process 999999")

	s = runAreas(t, tree(t, "kvm", nil), Options{}, collectProcess)
	if s.Process != nil || len(s.Unavailable) != 0 {
		t.Errorf("without --pid: process %+v, unavailable %v", s.Process, s.Unavailable)
	}

	// An old kernel: no THP_enabled line, no smaps_rollup.
	base := tree(t, "kvm", nil)
	status, _ := base.ReadString("/proc/4242/status")
	var kept []string
	for _, l := range strings.Split(status, "\n") {
		if !strings.HasPrefix(l, "THP_enabled") {
			kept = append(kept, l)
		}
	}
	s = runAreas(t, overlay(t, "kvm", map[string]string{
		"/proc/4242/status":       strings.Join(kept, "\n") + "\n",
		"/proc/4242/smaps_rollup": fixture.Delete,
	}), Options{PID: 4242}, collectProcess)
	wantMissing(t, s, "process.thp_disabled", "kernel before 5.0")
	wantMissing(t, s, "process.anon_hugepages_kib", "smaps_rollup does not exist")
	wantEq(t, "rss from VmRSS", s.Process.RssKiB > 0, true)
}

func TestProcessLiveSelf(t *testing.T) {
	// This test process itself, through the live /proc.
	fs, err := hostfs.New("/")
	if err != nil {
		t.Fatal(err)
	}
	if !fs.Exists("/proc/self/smaps_rollup") {
		testenv.Unavailable(t, "kernel without /proc/PID/smaps_rollup")
	}
	s := runAreas(t, fs, Options{PID: os.Getpid()}, collectProcess)
	p := s.Process
	if p == nil {
		t.Fatalf("no process: %v", s.Unavailable)
	}
	exe, _ := os.Readlink("/proc/self/exe")
	if !strings.HasSuffix(exe, p.Comm) && !strings.HasPrefix(exe[strings.LastIndex(exe, "/")+1:], p.Comm) {
		t.Errorf("comm %q is not this test binary %q", p.Comm, exe)
	}
	if p.Threads < 2 || p.RssKiB <= 0 || len(p.CPUsAllowed) == 0 {
		t.Errorf("threads %d, rss %d KiB, cpus %v: want a Go process's values", p.Threads, p.RssKiB, p.CPUsAllowed)
	}
	for f, r := range s.Unavailable {
		t.Errorf("live process fact %s unavailable: %s (pid %s)", f, r, strconv.Itoa(os.Getpid()))
	}
}
