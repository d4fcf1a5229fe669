package deps

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/hostfs"
)

func osRelease(t *testing.T, content string) hostfs.FS {
	dir := t.TempDir()
	for _, d := range []string{"proc", "sys", "etc"} {
		os.MkdirAll(filepath.Join(dir, d), 0o755)
	}
	if content != "" {
		os.WriteFile(filepath.Join(dir, "etc/os-release"), []byte(content), 0o644)
	}
	fs, err := hostfs.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	return fs
}

func TestPackageManager(t *testing.T) {
	for _, tc := range []struct{ release, want string }{
		{"PRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\nID=debian\nVERSION_ID=\"12\"\n", "apt"},
		{"NAME=\"Ubuntu\"\nID=ubuntu\nID_LIKE=debian\n", "apt"},
		{"NAME=\"openEuler\"\nVERSION=\"22.03 (LTS-SP3)\"\nID=\"openEuler\"\nVERSION_ID=\"22.03\"\n", "dnf"},
		{"NAME=\"Alibaba Cloud Linux\"\nID=\"alinux\"\nID_LIKE=\"rhel fedora centos anolis\"\nVERSION_ID=\"3\"\n", "dnf"},
		{"NAME=\"CentOS Linux\"\nVERSION=\"7 (Core)\"\nID=\"centos\"\nID_LIKE=\"rhel fedora\"\nVERSION_ID=\"7\"\n", "yum"},
		{"NAME=\"openSUSE Leap\"\nID=\"opensuse-leap\"\nID_LIKE=\"suse opensuse\"\n", "zypper"},
		{"", "apt"},
	} {
		if got := PackageManager(osRelease(t, tc.release)); got != tc.want {
			t.Errorf("%q → %s, want %s", firstLine(tc.release), got, tc.want)
		}
	}
}

func TestInstallCommand(t *testing.T) {
	got := strings.Join(InstallCommand("apt", ForSuite("kv")), " ")
	if got != "apt-get install -y --no-install-recommends redis-server redis-tools" {
		t.Errorf("apt kv: %s", got)
	}
	// dnf ships redis-benchmark inside the redis package: asked once.
	if got := strings.Join(InstallCommand("dnf", ForSuite("kv")), " "); got != "dnf install -y redis" {
		t.Errorf("dnf kv: %s", got)
	}
	if got := strings.Join(InstallCommand("zypper", ForSuite("disk")), " "); got != "zypper --non-interactive install sysbench fio coreutils" {
		t.Errorf("zypper disk: %s", got)
	}
}

func TestParseVersion(t *testing.T) {
	for banner, want := range map[string]string{
		"sysbench 1.0.20\n":             "1.0.20",
		"fio-3.33\n":                    "3.33",
		"nginx version: nginx/1.22.1\n": "1.22.1",
		"Redis server v=7.0.15 sha=00000000:0 malloc=jemalloc-5.3.0 bits=64 build=c4ae1ea0ae8b4c29\n": "7.0.15",
		"iperf 3.12 (cJSON 1.7.15)\nLinux host 6.1.0 #1 SMP\n":                                        "3.12",
		"wrk 4.1.0 [epoll] Copyright (C) 2012 Will Glozer\nUsage: wrk <options> <url>\n":              "4.1.0",
		"perf version 6.1.158\n": "6.1.158",
	} {
		if got, err := ParseVersion(banner); err != nil || got != want {
			t.Errorf("ParseVersion(%q) = %q, %v; want %q", banner, got, err, want)
		}
	}
	if _, err := ParseVersion("command not found"); err == nil {
		t.Error("ParseVersion accepted a banner without a version")
	}
}

func TestLookup(t *testing.T) {
	if tl, ok := Lookup("mysqld"); !ok || tl.Name != "mariadb" {
		t.Errorf("Lookup(mysqld) = %v, %v", tl.Name, ok)
	}
	if _, ok := Lookup("nope"); ok {
		t.Error("Lookup(nope) found something")
	}
}
