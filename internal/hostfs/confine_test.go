package hostfs

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

const secret = "OUTSIDE-SECRET-7f3a"

// hostile builds a tree beside a directory outside it holding the secret,
// with every kind of link that leaves a tree and the files that hang or
// exhaust a naive reader.
func hostile(t testing.TB) (FS, string) {
	t.Helper()
	base := t.TempDir()
	out, root := filepath.Join(base, "outside"), filepath.Join(base, "tree")
	for _, d := range []string{out + "/vm", root + "/proc/sys", root + "/sys/kernel", root + "/etc", root + "/usr/share/zoneinfo"} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(p, c string) {
		if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(out+"/secret", secret+"\n")
	write(out+"/vm/swappiness", secret+"\n")
	write(root+"/usr/share/zoneinfo/UTC", "TZif-tree\n")
	link := func(target, at string) {
		if err := os.Symlink(target, filepath.Join(root, at)); err != nil {
			t.Fatal(err)
		}
	}
	link(out+"/secret", "etc/machine-id")                             // absolute, out
	link("../../../../../../../../../"+out+"/secret", "etc/hostname") // relative escape
	link(out+"/vm", "proc/sys/vm")                                    // directory link out
	link("/usr/share/zoneinfo/UTC", "etc/localtime")                  // absolute, inside the tree
	link("../../etc/machine-id", "sys/kernel/chain")                  // in-tree link to an escaping link
	link("loop", "etc/loop")
	if err := syscall.Mkfifo(filepath.Join(root, "proc/meminfo"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(root, "proc/cpuinfo"))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(2 << 30); err != nil { // sparse 2 GiB
		t.Fatal(err)
	}
	f.Close()
	fs, err := New(root)
	if err != nil {
		t.Fatal(err)
	}
	return fs, out
}

// modes runs a test with openat2 and with the walk older kernels use.
func modes(t *testing.T, fn func(t *testing.T)) {
	for _, m := range []bool{true, false} {
		name := map[bool]string{true: "openat2", false: "walk"}[m]
		t.Run(name, func(t *testing.T) {
			old := useOpenat2
			useOpenat2 = m
			defer func() { useOpenat2 = old }()
			fn(t)
		})
	}
}

func TestTreeReadsStayInside(t *testing.T) {
	modes(t, func(t *testing.T) {
		fs, _ := hostile(t)
		for _, tc := range []struct {
			path string
			want error
		}{
			{"/etc/machine-id", ErrOutsideRoot},
			{"/etc/hostname", ErrOutsideRoot},
			{"/proc/sys/vm/swappiness", ErrOutsideRoot},
			{"/sys/kernel/chain", ErrOutsideRoot},
			{"/etc/loop", ErrOutsideRoot},
			{"/proc/meminfo", ErrNotRegular},
			{"/proc/cpuinfo", ErrTooLarge},
		} {
			done := make(chan struct{})
			var b []byte
			var err error
			go func() { b, err = fs.ReadFile(tc.path); close(done) }()
			select {
			case <-done:
			case <-time.After(30 * time.Second):
				t.Fatalf("ReadFile(%s) hangs", tc.path)
			}
			if !errors.Is(err, tc.want) {
				t.Errorf("ReadFile(%s) = %q, %v; want %v", tc.path, b, err, tc.want)
			}
			if bytes.Contains(b, []byte(secret)) {
				t.Errorf("ReadFile(%s) read the outside file", tc.path)
			}
			if r := Reason(tc.path, err); !strings.Contains(r, tc.path) || !strings.Contains(r, "not read") {
				t.Errorf("Reason(%s) = %q", tc.path, r)
			}
		}
		if v, err := fs.ReadString("/etc/localtime"); err != nil || v != "TZif-tree" {
			t.Errorf("absolute link inside the tree = %q, %v; want the tree's file", v, err)
		}
		if fs.Exists("/proc/sys/vm/swappiness") || fs.Exists("/etc/machine-id") {
			t.Error("Exists follows links out of the tree")
		}
		if ents, err := fs.ReadDir("/proc/sys/vm"); err == nil {
			t.Errorf("ReadDir through a link out of the tree listed %d entries", len(ents))
		}
		if m, _ := fs.Glob("/proc/sys/vm/*"); len(m) != 0 {
			t.Errorf("Glob through a link out of the tree = %v", m)
		}
		if r, err := fs.Resolve("/etc/localtime"); err != nil || r != "/usr/share/zoneinfo/UTC" {
			t.Errorf("Resolve(localtime) = %q, %v", r, err)
		}
		if r, err := fs.Resolve("/etc/machine-id"); err == nil {
			t.Errorf("Resolve of a link out of the tree = %q", r)
		}
	})
}

func TestTreeWritesStayInside(t *testing.T) {
	modes(t, func(t *testing.T) {
		fs, out := hostile(t)
		if err := fs.WriteFile("/proc/sys/vm/swappiness", []byte("1\n")); err == nil {
			t.Error("a write through a directory link out of the tree succeeded")
		}
		if err := fs.WriteFile("/etc/machine-id", []byte("x\n")); err == nil {
			t.Error("a write through a link out of the tree succeeded")
		}
		if err := fs.WriteFile("/proc/meminfo", []byte("x\n")); err == nil {
			t.Error("a write to a FIFO succeeded")
		}
		for _, p := range []string{"secret", "vm/swappiness"} {
			if b, _ := os.ReadFile(filepath.Join(out, p)); string(b) != secret+"\n" {
				t.Errorf("outside %s = %q after writes", p, b)
			}
		}
		if err := fs.MkdirAll("/proc/sys/vm/new", 0o700); err == nil {
			t.Error("MkdirAll through a link out of the tree succeeded")
		}
		if _, err := os.Stat(filepath.Join(out, "vm/new")); err == nil {
			t.Error("MkdirAll created a directory outside the tree")
		}
		if err := fs.Replace("/proc/sys/vm/planted", []byte("x"), 0o644); err == nil {
			t.Error("Replace through a link out of the tree succeeded")
		}
		if err := fs.Remove("/proc/sys/vm/swappiness"); err == nil {
			t.Error("Remove through a link out of the tree succeeded")
		}
	})
}

// TestCheckRefusesEscapingProc: procfs follows links itself, so it gets a
// tree's proc/ only when nothing in it leads out.
func TestCheckRefusesEscapingProc(t *testing.T) {
	fs, _ := hostile(t)
	if _, err := fs.Proc(); err == nil {
		t.Error("Proc() accepted a proc/ with a link out of the tree and a FIFO")
	}
	root := t.TempDir()
	os.Mkdir(filepath.Join(root, "sys"), 0o755)
	if err := os.Symlink("/proc", filepath.Join(root, "proc")); err != nil {
		t.Fatal(err)
	}
	tree, err := New(root)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tree.Proc(); !errors.Is(err, ErrOutsideRoot) {
		t.Errorf("proc -> /proc: Proc() = %v, want ErrOutsideRoot", err)
	}
	if b, err := tree.ReadFile("/proc/self/status"); err == nil {
		t.Errorf("proc -> /proc read the live host: %.40q", b)
	}
	// The per-process links of a copied proc/ are data, not a way out.
	root = t.TempDir()
	os.MkdirAll(filepath.Join(root, "proc/42/fd"), 0o755)
	os.Symlink("/usr/bin/vim", filepath.Join(root, "proc/42/exe"))
	os.Symlink("/", filepath.Join(root, "proc/42/root"))
	os.Symlink("/dev/null", filepath.Join(root, "proc/42/fd/0"))
	os.Symlink("42", filepath.Join(root, "proc/self"))
	tree, _ = New(root)
	if _, err := tree.Proc(); err != nil {
		t.Errorf("a copied proc/ with process links refused: %v", err)
	}
}

func TestLiveRootFollowsKernelLinks(t *testing.T) {
	fs, err := New("/")
	if err != nil {
		t.Fatal(err)
	}
	if !fs.Live() {
		t.Fatal("/ is not live")
	}
	if _, err := fs.ReadString("/proc/self/status"); err != nil {
		t.Errorf("live /proc/self (a kernel link) unreadable: %v", err)
	}
}

// FuzzConfinedPath: whatever path is asked of a tree, nothing outside it
// is read.
func FuzzConfinedPath(f *testing.F) {
	for _, s := range []string{"/etc/machine-id", "../../outside/secret", "/proc/sys/vm/../vm/swappiness", "etc/./hostname", "//", "..", "sys/kernel/chain/x"} {
		f.Add(s)
	}
	fs, _ := hostile(f)
	f.Fuzz(func(t *testing.T, p string) {
		if strings.Contains(p, "cpuinfo") || strings.Contains(p, "meminfo") {
			return // proven above; keeps the fuzzer off 2 GiB reads
		}
		b, _ := fs.ReadFile(p)
		if bytes.Contains(b, []byte(secret)) {
			t.Fatalf("ReadFile(%q) read outside the tree", p)
		}
		for _, m := range []bool{true, false} {
			useOpenat2 = m
			b, _ := fs.ReadFile(p)
			useOpenat2 = true
			if bytes.Contains(b, []byte(secret)) {
				t.Fatalf("ReadFile(%q) (openat2=%v) read outside the tree", p, m)
			}
		}
	})
}
