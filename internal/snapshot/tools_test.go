package snapshot

import (
	"os"
	"path/filepath"
	"testing"
)

func TestToolsMetal(t *testing.T) {
	t.Parallel()
	s := runAreas(t, tree(t, "metal", nil), Options{}, collectTools)
	wantEq(t, "tools", s.Tools, map[string]string{"perf": "/usr/bin/perf", "fio": "/usr/bin/fio", "ethtool": "/usr/sbin/ethtool"})
	wantMissing(t, s, "tools.sysbench", "not found in /usr/local/sbin:")
	wantPresent(t, s, "tools.fio")
}

func TestToolsLinksResolveInsideTheRoot(t *testing.T) {
	t.Parallel()
	fs := tree(t, "metal", map[string]string{
		"/opt/wrk/bin/wrk":  "",
		"/usr/bin/sysbench": "not executable",
	})
	root := fs.Root()
	if err := os.Chmod(filepath.Join(root, "opt/wrk/bin/wrk"), 0o755); err != nil {
		t.Fatal(err)
	}
	// An absolute link, as alternatives make: it must resolve in the tree.
	if err := os.Symlink("/opt/wrk/bin/wrk", filepath.Join(root, "usr/bin/wrk")); err != nil {
		t.Fatal(err)
	}
	// A link to a file that exists on this machine but not in the tree.
	if err := os.Symlink("/bin/sh", filepath.Join(root, "usr/bin/iperf3")); err != nil {
		t.Fatal(err)
	}
	s := runAreas(t, fs, Options{}, collectTools)
	wantEq(t, "wrk via absolute link", s.Tools["wrk"], "/usr/bin/wrk")
	if p, ok := s.Tools["iperf3"]; ok {
		t.Errorf("iperf3 found at %s through a link to the machine running the test", p)
	}
	if p, ok := s.Tools["sysbench"]; ok {
		t.Errorf("non-executable sysbench found at %s", p)
	}
}

func TestToolSearchPath(t *testing.T) {
	wantEq(t, "foreign root ignores $PATH", toolSearchPath(false, "/opt/x/bin"), standardPath)
	got := toolSearchPath(true, "/opt/x/bin:.:relative:/usr/bin:/opt/x/bin/")
	wantEq(t, "live", got, append([]string{"/opt/x/bin", "/usr/bin"}, "/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/sbin", "/bin"))
}
