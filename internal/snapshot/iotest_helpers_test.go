package snapshot

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/fixture"
	"github.com/perflab/perflab/internal/hostfs"
)

// runAreas runs only the given collectors on a root, so a test of one area
// does not depend on the others (the irq collector is run before net when
// a test needs IRQs mapped to NICs).
func runAreas(t testing.TB, fs hostfs.FS, opt Options, areas ...func(*collector)) *Snapshot {
	t.Helper()
	s := &Snapshot{
		Schema: Schema, Root: fs.Root(),
		Sysctl: map[string]string{}, Services: map[string]Service{},
		Tools: map[string]string{}, Unavailable: map[string]string{},
	}
	c := &collector{fs: fs, opt: opt, s: s}
	var err error
	if c.proc, err = fs.Proc(); err != nil {
		c.miss("proc", hostfs.Reason("/proc", err))
	}
	if c.sys, err = fs.Sys(); err != nil {
		c.miss("sys", hostfs.Reason("/sys", err))
	}
	for _, a := range areas {
		a(c)
	}
	return s
}

// ioParts are the paths of a fixture tree the I/O collectors read.
var ioParts = []string{
	"proc/interrupts", "proc/irq", "proc/net", "proc/self", "proc/1", "proc/4242", "proc/4243",
	"proc/1187", "proc/1254", "proc/modules", "proc/sys/net/netfilter",
	"sys/class/net", "sys/devices/pci*", "sys/devices/virtual/net", "sys/devices/virtual/block",
	"sys/block", "sys/fs/cgroup", "sys/module",
	"usr/bin", "usr/sbin", "bin", "sbin",
}

// tree returns a fixture root for the I/O areas. Without edits the base
// tree is read in place (collectors only read); with edits only the I/O
// parts are copied, then edited as fixture.Tree does, because copying all
// ~2000 files per test is what would make the suite slow.
func tree(t testing.TB, name string, edits map[string]string) hostfs.FS {
	t.Helper()
	if len(edits) == 0 {
		fs, err := hostfs.New(fixture.Dir(name))
		if err != nil {
			t.Fatalf("fixture %s: %v", name, err)
		}
		return fs
	}
	src, dst := fixture.Dir(name), t.TempDir()
	var parts []string
	for _, pat := range ioParts {
		m, _ := filepath.Glob(filepath.Join(src, pat))
		for _, full := range m {
			rel, _ := filepath.Rel(src, full)
			parts = append(parts, rel)
		}
	}
	for _, p := range parts {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dst, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := fixture.Copy(filepath.Join(src, p), filepath.Join(dst, p)); err != nil {
			t.Fatalf("fixture %s: %v", name, err)
		}
	}
	for p, content := range edits {
		full := filepath.Join(dst, p)
		if content == fixture.Delete {
			if err := os.RemoveAll(full); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if fi, err := os.Lstat(full); err == nil && fi.Mode()&os.ModeSymlink != 0 {
			os.Remove(full)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	fs, err := hostfs.New(dst)
	if err != nil {
		t.Fatal(err)
	}
	return fs
}

func wantEq[T any](t *testing.T, what string, got, want T) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s = %#v, want %#v", what, got, want)
	}
}

func wantMissing(t *testing.T, s *Snapshot, fact, contains string) {
	t.Helper()
	r := s.Missing(fact)
	if r == "" {
		t.Errorf("%s not recorded unavailable; unavailable = %v", fact, s.Unavailable)
		return
	}
	if contains != "" && !strings.Contains(r, contains) {
		t.Errorf("%s unavailable because %q, want it to mention %q", fact, r, contains)
	}
}

func wantPresent(t *testing.T, s *Snapshot, fact string) {
	t.Helper()
	if r := s.Missing(fact); r != "" {
		t.Errorf("%s unexpectedly unavailable: %s", fact, r)
	}
}

func nicNamed(s *Snapshot, name string) *NIC {
	for i := range s.Net.Interfaces {
		if s.Net.Interfaces[i].Name == name {
			return &s.Net.Interfaces[i]
		}
	}
	return nil
}

func irqNamed(s *Snapshot, n string) *IRQ {
	for i := range s.IRQs {
		if s.IRQs[i].Number == n {
			return &s.IRQs[i]
		}
	}
	return nil
}
