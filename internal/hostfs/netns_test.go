package hostfs

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/testenv"
)

// A captured tree keeps a container's net sysctls under
// /proc/PID/root/proc/sys/net and its /proc/net under /proc/PID/net.
func TestNetNSViewOfATree(t *testing.T) {
	root := t.TempDir()
	for p, v := range map[string]string{
		"proc/sys/net/core/somaxconn":              "4096\n",
		"proc/77/root/proc/sys/net/core/somaxconn": "128\n",
		"proc/net/sockstat":                        "host\n",
		"proc/77/net/sockstat":                     "container\n",
		"proc/sys/vm/swappiness":                   "60\n",
	} {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(v), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	fs, err := New(root)
	if err != nil {
		t.Fatal(err)
	}
	view := fs.WithNetNS(77)
	for p, want := range map[string][2]string{
		"/proc/sys/net/core/somaxconn": {"4096", "128"},
		"/proc/net/sockstat":           {"host", "container"},
		"/proc/sys/vm/swappiness":      {"60", "60"},
	} {
		h, _ := fs.ReadString(p)
		c, _ := view.ReadString(p)
		if h != want[0] || c != want[1] {
			t.Errorf("%s: host %q container %q, want %q", p, h, c, want)
		}
	}
	if view.Host().NetPID() != 0 || view.NetPID() != 77 {
		t.Error("Host() must drop the view")
	}
}

// On the live host the view reads and writes the namespace's own sysctl
// (a namespace made with unshare, its value set with nsenter), the host's
// stays as it was, and a namespace whose process is gone is ErrProcessGone.
func TestNetNSViewLive(t *testing.T) {
	testenv.RequireRoot(t)
	unshare := testenv.RequireTool(t, "unshare")
	nsenter := testenv.RequireTool(t, "nsenter")
	cmd := exec.Command(unshare, "--net", "sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	pid := strconv.Itoa(cmd.Process.Pid)
	// Wait until the child is in its own namespace.
	host, _ := os.Readlink("/proc/self/ns/net")
	for i := 0; i < 100; i++ {
		if l, _ := os.Readlink("/proc/" + pid + "/ns/net"); l != "" && l != host {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if out, err := exec.Command(nsenter, "-t", pid, "-n", "sysctl", "-qw", "net.core.somaxconn=77").CombinedOutput(); err != nil {
		testenv.Unavailable(t, "nsenter sysctl: %v %s", err, out)
	}
	fs, _ := New("/")
	view := fs.WithNetNS(cmd.Process.Pid)
	before, _ := fs.ReadString("/proc/sys/net/core/somaxconn")
	if got, err := view.ReadString("/proc/sys/net/core/somaxconn"); err != nil || got != "77" {
		t.Fatalf("view reads %q, %v; want 77", got, err)
	}
	if err := view.WriteFile("/proc/sys/net/core/somaxconn", []byte("99\n")); err != nil {
		t.Fatal(err)
	}
	out, _ := exec.Command(nsenter, "-t", pid, "-n", "cat", "/proc/sys/net/core/somaxconn").Output()
	if strings.TrimSpace(string(out)) != "99" {
		t.Errorf("inside after write: %q", out)
	}
	if after, _ := fs.ReadString("/proc/sys/net/core/somaxconn"); after != before {
		t.Errorf("host somaxconn %s → %s", before, after)
	}
	if view.NetNSInode() == 0 || view.NetNSInode() == fs.WithNetNS(os.Getpid()).NetNSInode() {
		t.Error("the view's namespace inode is the host's")
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	if _, err := view.ReadString("/proc/sys/net/core/somaxconn"); !errors.Is(err, ErrProcessGone) {
		t.Errorf("gone process: %v", err)
	}
}
