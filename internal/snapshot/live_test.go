package snapshot

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/hostfs"
)

// hostAreas are the fact prefixes of the collectors in host.go … process.go.
var hostAreas = []string{"host", "cpu", "memory", "kernel", "sysctl", "load", "limits", "process"}

// errorLike are words of parse and I/O failures: a reason holding one means
// a collector failed on a file the host has, not that the host lacks it.
var errorLike = regexp.MustCompile(`(?i)strconv|invalid|syntax|unexpected|parse|EOF|input/output|bad |want \d+ fields`)

// pathInReason finds the host path a reason names.
var pathInReason = regexp.MustCompile(`(/(?:proc|sys|etc|run|usr)/[^\s:,()]+)`)

// TestLiveHostSmoke collects this machine and checks that everything a
// host-area collector reports unavailable really is: a path it says does
// not exist must not exist, and no reason may be a read or parse error of
// a file that is there.
func TestLiveHostSmoke(t *testing.T) {
	fs, err := hostfs.New("/")
	if err != nil {
		t.Fatal(err)
	}
	s, err := Collect(fs, Options{PID: os.Getpid()})
	if err != nil {
		t.Fatal(err)
	}
	if s.CPU.Threads == 0 || s.Memory.TotalKiB == 0 || s.Kernel.Release == "" || len(s.Sysctl) < 100 || s.Process == nil {
		t.Fatalf("live snapshot incomplete: threads %d, mem %d KiB, release %q, %d sysctls, process %v",
			s.CPU.Threads, s.Memory.TotalKiB, s.Kernel.Release, len(s.Sysctl), s.Process)
	}
	if s.Host.Arch == "" || s.Host.Virtualization == "" {
		t.Errorf("arch %q, virtualization %q", s.Host.Arch, s.Host.Virtualization)
	}
	for fact, reason := range s.Unavailable {
		area, _, _ := strings.Cut(fact, ".")
		mine := false
		for _, a := range hostAreas {
			mine = mine || a == area
		}
		if !mine {
			continue
		}
		if errorLike.MatchString(reason) {
			t.Errorf("%s: error-like reason %q", fact, reason)
		}
		if strings.Contains(reason, "permission denied") && os.Geteuid() == 0 {
			t.Errorf("%s: %q as root", fact, reason)
		}
		if strings.Contains(reason, "does not exist") {
			if m := pathInReason.FindString(reason); m != "" && fs.Exists(m) {
				t.Errorf("%s: %q, but %s exists", fact, reason, m)
			}
		}
	}
	// Spot-check values against the files they come from.
	if v, _ := fs.ReadString("/proc/sys/kernel/osrelease"); v != s.Kernel.Release {
		t.Errorf("release %q, osrelease %q", s.Kernel.Release, v)
	}
	if v, _ := fs.ReadString("/proc/sys/vm/swappiness"); v != s.Sysctl["vm.swappiness"] {
		t.Errorf("vm.swappiness %q, file %q", s.Sysctl["vm.swappiness"], v)
	}
	if _, err := os.Stat("/sys/devices/system/cpu/cpufreq/policy0"); err != nil {
		if s.Missing("cpu.governors") == "" {
			t.Error("no cpufreq policy on this host, but cpu.governors is not unavailable")
		}
	} else if len(s.CPU.Governors) == 0 {
		t.Errorf("cpufreq present but no governors: %s", s.Missing("cpu.governors"))
	}
}
