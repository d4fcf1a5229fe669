package trace

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/perflab/perflab/internal/hostfs"
)

// A /proc tree with two processes: sockets resolve to their owners, an
// unknown inode stays unresolved and is counted once.
func TestSockOwnersFromProcTree(t *testing.T) {
	root := t.TempDir()
	for pid, fds := range map[string]map[string]string{
		"100": {"3": "socket:[555]", "4": "/var/log/app.log"},
		"200": {"7": "socket:[777]", "8": "pipe:[9]"},
	} {
		dir := filepath.Join(root, "proc", pid, "fd")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for fd, target := range fds {
			if err := os.Symlink(target, filepath.Join(dir, fd)); err != nil {
				t.Fatal(err)
			}
		}
		comm := map[string]string{"100": "nginx\n", "200": "redis-server\n"}[pid]
		if err := os.WriteFile(filepath.Join(root, "proc", pid, "comm"), []byte(comm), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(root, "proc", "self"), 0o755); err != nil {
		t.Fatal(err)
	}
	fs, err := hostfs.New(root)
	if err != nil {
		t.Fatal(err)
	}
	o := newSockOwners(fs)
	if pid, comm := o.lookup(777); pid != 200 || comm != "redis-server" {
		t.Errorf("777 → %d %q, want 200 redis-server", pid, comm)
	}
	if pid, comm := o.lookup(555); pid != 100 || comm != "nginx" {
		t.Errorf("555 → %d %q, want 100 nginx", pid, comm)
	}
	for i := 0; i < 3; i++ {
		if pid, _ := o.lookup(999); pid != 0 {
			t.Errorf("unknown inode resolved to %d", pid)
		}
	}
	if o.unresolved != 1 {
		t.Errorf("unresolved = %d, want 1", o.unresolved)
	}
	if pid, _ := o.lookup(0); pid != 0 {
		t.Error("inode 0 (no socket) resolved")
	}
}
