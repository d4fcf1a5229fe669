package hostfs

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func tree(t testing.TB) FS {
	dir := t.TempDir()
	for _, p := range []string{"proc/sys/vm", "sys/kernel", "etc"} {
		os.MkdirAll(filepath.Join(dir, p), 0o755)
	}
	os.WriteFile(filepath.Join(dir, "proc/sys/vm/swappiness"), []byte("60\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "etc/hostname"), []byte("perflab-test\n"), 0o644)
	fs, err := New(dir)
	if err != nil {
		t.Fatal(err)
	}
	return fs
}

func TestReadHelpers(t *testing.T) {
	fs := tree(t)
	if v, err := fs.ReadInt("/proc/sys/vm/swappiness"); err != nil || v != 60 {
		t.Errorf("ReadInt = %d, %v", v, err)
	}
	if v, err := fs.ReadString("etc/hostname"); err != nil || v != "perflab-test" {
		t.Errorf("ReadString = %q, %v", v, err)
	}
	if _, err := fs.ReadInt("/etc/hostname"); err == nil {
		t.Error("ReadInt parsed a hostname")
	}
	if fs.Live() {
		t.Error("a temp tree claims to be the live root")
	}
}

// TestPathStaysUnderRoot: a crafted path (e.g. a mount point read from a
// foreign tree) must not reach files outside the root.
func TestPathStaysUnderRoot(t *testing.T) {
	fs := tree(t)
	for _, p := range []string{"/../../etc/passwd", "../etc/hostname", "/proc/../../../../etc/hostname"} {
		got := fs.Path(p)
		if !strings.HasPrefix(got, fs.Root()+"/") {
			t.Errorf("Path(%q) = %s escapes root %s", p, got, fs.Root())
		}
	}
	if v, _ := fs.ReadString("/../etc/hostname"); v != "perflab-test" {
		t.Errorf("/../etc/hostname read %q, want the root's own file", v)
	}
}

func TestNewRejectsNonLinuxRoot(t *testing.T) {
	if _, err := New(t.TempDir()); !errors.Is(err, ErrNotLinuxRoot) {
		t.Errorf("empty dir: %v", err)
	}
	f := filepath.Join(t.TempDir(), "file")
	os.WriteFile(f, nil, 0o644)
	if _, err := New(f); !errors.Is(err, ErrNotLinuxRoot) {
		t.Errorf("a file: %v", err)
	}
	if _, err := New("/nonexistent/perflab"); err == nil {
		t.Error("missing dir accepted")
	}
}

func TestReason(t *testing.T) {
	fs := tree(t)
	_, err := fs.ReadFile("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor")
	if r := Reason("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", err); !strings.Contains(r, "does not exist on this host") {
		t.Errorf("Reason = %q", r)
	}
}

func TestWriteFileInPlace(t *testing.T) {
	fs := tree(t)
	if err := fs.WriteFile("/proc/sys/vm/swappiness", []byte("10")); err != nil {
		t.Fatal(err)
	}
	if v, _ := fs.ReadInt("/proc/sys/vm/swappiness"); v != 10 {
		t.Errorf("after write: %d", v)
	}
	// Knobs are never created: a missing one is an error, as in /proc/sys.
	if err := fs.WriteFile("/proc/sys/vm/nonexistent", []byte("1")); err == nil {
		t.Error("WriteFile created a knob")
	}
}

// FuzzPathAsCleanJoin: Path's fast path (a clean absolute path on the live
// root is used as is) gives what it did before it: the root joined to the
// cleaned path, for any input, live or in a tree.
func FuzzPathAsCleanJoin(f *testing.F) {
	for _, p := range []string{"/proc/loadavg", "proc/stat", "//sys//block/", "/proc/../../etc", "", ".", "/", "/a/./b", "/a/b/", "\x00/x"} {
		f.Add(p)
	}
	live, err := New("/")
	if err != nil {
		f.Fatal(err)
	}
	root := tree(f)
	f.Fuzz(func(t *testing.T, p string) {
		for _, fs := range []FS{live, root} {
			want := filepath.Join(fs.Root(), filepath.Clean("/"+p))
			if got := fs.Path(p); got != want {
				t.Errorf("root %s: Path(%q) = %q, want %q", fs.Root(), p, got, want)
			}
		}
	})
}
