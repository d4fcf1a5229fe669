package snapshot

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/fixture"
	"github.com/perflab/perflab/internal/hostfs"
)

// TestEscapingLinksLeakNothing: a fixture tree in which every kind of link
// leads out (absolute, relative escape, directory link, a chain through an
// in-tree link, proc/ itself) plus a FIFO and a sparse 2 GiB file yields a
// snapshot holding no byte of any file outside the tree, and finishes.
func TestEscapingLinksLeakNothing(t *testing.T) {
	const secret = "LEAKED-0xC0FFEE"
	out := t.TempDir()
	for _, d := range []string{"vm", "bin", "dmi"} {
		os.MkdirAll(filepath.Join(out, d), 0o755)
	}
	for _, p := range []string{"secret", "vm/swappiness", "vm/overcommit_memory", "dmi/product_name", "dmi/sys_vendor"} {
		if err := os.WriteFile(filepath.Join(out, p), []byte(secret+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(out, "bin/wrk"), []byte("#!/bin/sh\necho "+secret+"\n"), 0o755)
	fs := fixture.Tree(t, "kvm", nil)
	root := fs.Root()
	up := strings.Repeat("../", 12)
	links := map[string]string{
		"etc/machine-id":           out + "/secret",
		"etc/hostname":             up + out[1:] + "/secret",
		"etc/os-release":           out + "/secret",
		"proc/sys/kernel/hostname": up + out[1:] + "/secret",
		"proc/sys/vm":              out + "/vm",
		"sys/kernel/mm/transparent_hugepage/enabled": "../../../../etc/machine-id",
		"sys/class/dmi/id":                           out + "/dmi",
		"usr/bin":                                    out + "/bin",
		"proc/loadavg":                               out + "/secret",
	}
	for at, to := range links {
		full := filepath.Join(root, at)
		os.RemoveAll(full)
		os.MkdirAll(filepath.Dir(full), 0o755)
		if err := os.Symlink(to, full); err != nil {
			t.Fatal(err)
		}
	}
	os.Remove(filepath.Join(root, "proc/uptime"))
	if err := mkfifo(filepath.Join(root, "proc/uptime")); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(filepath.Join(root, "proc/cpuinfo"), 2<<30); err != nil {
		t.Fatal(err)
	}
	fs, err := hostfs.New(root)
	if err != nil {
		t.Fatal(err)
	}
	s, err := Collect(fs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := s.Encode(&b); err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(b.Bytes(), []byte(secret)) || bytes.Contains(b.Bytes(), []byte("C0FFEE")) {
		t.Fatalf("the snapshot holds bytes from outside the tree:\n%s", b.String())
	}
	if r := s.Missing("host.machine_id"); !strings.Contains(r, "outside") {
		t.Errorf("host.machine_id unavailable because %q, want it to say the link leads outside", r)
	}

	// proc -> /proc: a tree must not describe the live host.
	fs2 := fixture.Tree(t, "kvm", nil)
	os.RemoveAll(filepath.Join(fs2.Root(), "proc"))
	if err := os.Symlink("/proc", filepath.Join(fs2.Root(), "proc")); err != nil {
		t.Fatal(err)
	}
	fs2, _ = hostfs.New(fs2.Root())
	s2, err := Collect(fs2, Options{})
	if err != nil {
		t.Fatal(err)
	}
	b.Reset()
	s2.Encode(&b)
	for _, live := range []string{"/proc/sys/kernel/random/boot_id", "/proc/sys/kernel/hostname"} {
		v, err := os.ReadFile(live)
		if err != nil || len(bytes.TrimSpace(v)) < 4 {
			continue
		}
		if bytes.Contains(b.Bytes(), bytes.TrimSpace(v)) && !bytes.Contains(must(os.ReadFile(filepath.Join(fixture.Dir("kvm"), "etc/hostname"))), bytes.TrimSpace(v)) {
			t.Errorf("proc -> /proc: the tree's snapshot holds the live %s (%s)", live, bytes.TrimSpace(v))
		}
	}
	if s2.Missing("proc") == "" {
		t.Error("proc -> /proc: proc not recorded unavailable")
	}
}

func must(b []byte, _ error) []byte { return b }
