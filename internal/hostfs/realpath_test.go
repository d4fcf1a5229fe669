package hostfs

import (
	"os"
	"path/filepath"
	"testing"
)

// TestRealPathAsEvalSymlinks: the kernel's resolution answers what
// filepath.EvalSymlinks answers on the paths the collectors resolve (every
// /sys/class/net and /sys/block entry, their device links), on a link
// chain and a dangling link in a temporary tree, and fails where it fails.
func TestRealPathAsEvalSymlinks(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "a", "b"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, l := range [][2]string{{"a/b", "l1"}, {filepath.Join(dir, "l1"), "l2"}, {"missing", "dangling"}, {"l2/../b", "up"}} {
		if err := os.Symlink(l[0], filepath.Join(dir, l[1])); err != nil {
			t.Fatal(err)
		}
	}
	paths := []string{dir, filepath.Join(dir, "l1"), filepath.Join(dir, "l2"), filepath.Join(dir, "dangling"),
		filepath.Join(dir, "up"), filepath.Join(dir, "nothing"), "/etc/os-release", "/proc/self/exe/x"}
	for _, d := range []string{"/sys/class/net", "/sys/block"} {
		ents, err := os.ReadDir(d)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			paths = append(paths, filepath.Join(d, e.Name()), filepath.Join(d, e.Name(), "device"))
		}
	}
	resolved := 0
	for _, p := range paths {
		want, werr := filepath.EvalSymlinks(p)
		got, gerr := realPath(p)
		if (werr == nil) != (gerr == nil) || got != want {
			t.Errorf("realPath(%s) = %q, %v; EvalSymlinks %q, %v", p, got, gerr, want, werr)
		}
		if werr == nil {
			resolved++
		}
	}
	if resolved < 6 {
		t.Errorf("only %d of %d paths resolved: the comparison proves little", resolved, len(paths))
	}
}
