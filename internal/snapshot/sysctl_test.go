package snapshot

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/perflab/perflab/internal/fixture"
)

func TestSysctlKVM(t *testing.T) {
	fs := tree(t, "kvm", nil)
	s := runAreas(t, fs, Options{}, collectSysctl)
	// Every regular file of the tree's kernel, vm, fs and net is a sysctl.
	var want int
	for _, top := range sysctlTops {
		filepath.WalkDir(fs.Path("/proc/sys/"+top), func(p string, d os.DirEntry, err error) error {
			if err == nil && d.Type().IsRegular() {
				want++
			}
			return nil
		})
	}
	wantEq(t, "count", len(s.Sysctl), want)
	v, _ := fs.ReadString("/proc/sys/net/ipv4/tcp_rmem")
	wantEq(t, "tcp_rmem keeps its tabs", s.Sysctl["net.ipv4.tcp_rmem"], v)
	if v == "" || !containsTab(v) {
		t.Fatalf("fixture tcp_rmem %q is not the kernel's tab-separated triple", v)
	}
	wantEq(t, "hostname", s.Sysctl["kernel.hostname"], "perflab-kvm")
	if _, ok := s.Sysctl["net.ipv4.conf.all.rp_filter"]; !ok {
		t.Error("net.ipv4.conf.all.rp_filter missing")
	}
}

func containsTab(s string) bool {
	for _, r := range s {
		if r == '\t' {
			return true
		}
	}
	return false
}

func TestSysctlSkips(t *testing.T) {
	fs := overlay(t, "metal", map[string]string{
		"/proc/sys/vm/stat_refresh":                   "0\n",
		"/proc/sys/fs/binfmt_misc/status":             "enabled\n",
		"/proc/sys/net/ipv4/conf/veth1234/rp_filter":  "2\n",
		"/proc/sys/net/ipv4/conf/eth0/rp_filter":      "1\n",
		"/proc/sys/net/ipv4/neigh/eth0/gc_stale_time": "60\n",
		"/proc/sys/kernel/unreadable":                 "secret\n",
	})
	if err := os.Chmod(fs.Path("/proc/sys/kernel/unreadable"), 0o200); err != nil {
		t.Fatal(err)
	}
	s := runAreas(t, fs, Options{}, collectSysctl)
	for _, k := range []string{"vm.stat_refresh", "fs.binfmt_misc.status", "net.ipv4.conf.veth1234.rp_filter", "net.ipv4.neigh.eth0.gc_stale_time"} {
		if v, ok := s.Sysctl[k]; ok {
			t.Errorf("%s = %q recorded, want it skipped", k, v)
		}
	}
	// eth0 is hardware in the metal tree (it has a device link).
	wantEq(t, "eth0 rp_filter", s.Sysctl["net.ipv4.conf.eth0.rp_filter"], "1")
	if os.Geteuid() != 0 {
		if _, ok := s.Sysctl["kernel.unreadable"]; ok {
			t.Error("an unreadable file was recorded")
		}
	}
	wantEq(t, "nf_conntrack_max", s.Sysctl["net.netfilter.nf_conntrack_max"] != "", true)
}

func TestSysctlNoProcSys(t *testing.T) {
	s := runAreas(t, overlay(t, "kvm", map[string]string{"/proc/sys": fixture.Delete}), Options{}, collectSysctl)
	wantMissing(t, s, "sysctl", "/proc/sys does not exist")
	wantEq(t, "sysctls", len(s.Sysctl), 0)
}

func TestReadSysctlAt(t *testing.T) {
	dir := t.TempDir()
	long := make([]byte, 3000)
	for i := range long {
		long[i] = 'a' + byte(i%26)
	}
	if err := os.WriteFile(filepath.Join(dir, "v"), append(long, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	d, err := os.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	got, ok := readSysctlAt(int(d.Fd()), "v", make([]byte, 1024))
	wantEq(t, "ok", ok, true)
	wantEq(t, "len", len(got), 1024) // cut at the buffer, never past it
	got, _ = readSysctlAt(int(d.Fd()), "v", make([]byte, 8192))
	wantEq(t, "whole", got, string(long))
	if _, ok := readSysctlAt(int(d.Fd()), "absent", make([]byte, 8)); ok {
		t.Error("a missing file read ok")
	}
}
