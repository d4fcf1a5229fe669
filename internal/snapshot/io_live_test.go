package snapshot

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/perflab/perflab/internal/hostfs"
	"github.com/perflab/perflab/internal/testenv"
)

func liveFS(t testing.TB) hostfs.FS {
	t.Helper()
	if _, err := os.Stat("/proc/self/mountinfo"); err != nil {
		testenv.Unavailable(t, "needs a Linux /proc")
	}
	fs, err := hostfs.New("/")
	if err != nil {
		t.Fatal(err)
	}
	return fs
}

// TestIOLive collects the I/O areas of the machine running the tests and
// checks them against what the test can see by other means.
func TestIOLive(t *testing.T) {
	fs := liveFS(t)
	// A process whose comm is a watched daemon's, to be found by the scan.
	dir := t.TempDir()
	fake := filepath.Join(dir, "irqbalance")
	copyExec(t, "sleep", fake)
	cmd := exec.Command(fake, "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })

	s := runAreas(t, fs, Options{}, collectIRQ, collectNet, collectBlock, collectMounts, collectCgroup, collectServices, collectTools)

	if !slices.Contains(s.Services["irqbalance"].PIDs, cmd.Process.Pid) {
		t.Errorf("process %d with comm irqbalance not found: %+v", cmd.Process.Pid, s.Services["irqbalance"])
	}
	if len(s.IRQs) == 0 && s.Missing("irqs") == "" {
		t.Error("no IRQs and no reason")
	}
	lo := nicNamed(s, "lo")
	if lo == nil || !lo.Virtual {
		t.Errorf("lo missing or not virtual: %+v", lo)
	}
	for _, n := range s.Net.Interfaces {
		if n.Virtual {
			continue
		}
		// ethtool answered, or said why not.
		if n.Channels == nil && s.Missing(ElemPath("net.interfaces", n.Name, "channels")) == "" {
			t.Errorf("%s: no channels and no reason", n.Name)
		}
	}
	if v := s.Cgroup.Version; v != 1 && v != 2 && s.Missing("cgroup") == "" {
		t.Errorf("cgroup version %d without a reason", v)
	}
	if mountAt(s, "/") == nil {
		t.Errorf("no / mount: %+v", s.Mounts)
	}
	for name, p := range s.Tools {
		if lp, err := exec.LookPath(p); err != nil || lp != p {
			t.Errorf("tool %s at %s is not executable: %v", name, p, err)
		}
	}
}

func copyExec(t *testing.T, tool, dst string) {
	t.Helper()
	src, err := exec.LookPath(tool)
	if err != nil {
		testenv.Unavailable(t, "%s not installed", tool)
	}
	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

// Benchmarks of the I/O collectors on the live host; the whole snapshot
// plus audit must stay well under 50 ms.
func benchArea(b *testing.B, areas ...func(*collector)) {
	fs := liveFS(b)
	b.ReportAllocs()
	for b.Loop() {
		runAreas(b, fs, Options{}, areas...)
	}
}

func BenchmarkLiveIRQ(b *testing.B)      { benchArea(b, collectIRQ) }
func BenchmarkLiveNet(b *testing.B)      { benchArea(b, collectIRQ, collectNet) }
func BenchmarkLiveBlock(b *testing.B)    { benchArea(b, collectBlock) }
func BenchmarkLiveMounts(b *testing.B)   { benchArea(b, collectMounts) }
func BenchmarkLiveCgroup(b *testing.B)   { benchArea(b, collectCgroup) }
func BenchmarkLiveServices(b *testing.B) { benchArea(b, collectServices) }
func BenchmarkLiveTools(b *testing.B)    { benchArea(b, collectTools) }
