package tune

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/audit"
	"github.com/perflab/perflab/internal/hostfs"
	"github.com/perflab/perflab/internal/testenv"
)

// TestLiveNetnsSysctls applies, verifies, drifts and reverts real net
// sysctls inside a network namespace created for the test, so the host's own
// network settings are never touched.
func TestLiveNetnsSysctls(t *testing.T) {
	if os.Getenv("PERFLAB_TUNE_NETNS_CHILD") != "" {
		return
	}
	testenv.RequireRoot(t)
	unshare := testenv.RequireTool(t, "unshare")
	cmd := exec.Command(unshare, "--net", os.Args[0], "-test.run=^TestNetnsChild$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), "PERFLAB_TUNE_NETNS_CHILD="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "netns cycle ok") {
		t.Fatalf("netns child: %v\n%s", err, out)
	}
}

func TestNetnsChild(t *testing.T) {
	dir := os.Getenv("PERFLAB_TUNE_NETNS_CHILD")
	if dir == "" {
		return // only meaningful as the child of TestLiveNetnsSysctls
	}
	fs, err := hostfs.New("/")
	if err != nil {
		t.Fatal(err)
	}
	h := Host{FS: fs, Dir: filepath.Join(dir, "journal")}
	p := Plan{Workload: "web", Items: []Item{
		{Change: audit.Change{Kind: audit.KindSysctl, Target: "net.core.somaxconn", Value: "12345"}},
		{Change: audit.Change{Kind: audit.KindSysctl, Target: "net.ipv4.tcp_fin_timeout", Value: "15"}},
		{Change: audit.Change{Kind: audit.KindSysctl, Target: "net.ipv4.ip_local_port_range", Value: "2048 64000"}},
	}}
	before := snapshotValues(t, fs, p)
	if _, err := h.Apply(context.Background(), p, ApplyOptions{Source: "test"}); err != nil {
		t.Fatal(err)
	}
	if got := snapshotValues(t, fs, p); got[0] != "12345" || got[1] != "15" || got[2] != "2048 64000" {
		t.Fatalf("after apply: %q", got)
	}
	if err := fs.WriteFile("/proc/sys/net/ipv4/tcp_fin_timeout", []byte("30")); err != nil {
		t.Fatal(err)
	}
	drift, err := h.Verify()
	if err != nil {
		t.Fatal(err)
	}
	bad := 0
	for _, d := range drift {
		if !d.OK {
			bad++
			if d.Target != "net.ipv4.tcp_fin_timeout" || d.Current != "30" {
				t.Errorf("unexpected drift %+v", d)
			}
		}
	}
	if bad != 1 {
		t.Errorf("%d drifted knobs, want 1", bad)
	}
	if _, err := h.Revert(RevertOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := snapshotValues(t, fs, p); strings.Join(got, "|") != strings.Join(before, "|") {
		t.Fatalf("after revert %q, want %q", got, before)
	}
	t.Log("netns cycle ok")
}

// TestLiveTHP flips this machine's THP policy and restores it.
func TestLiveTHP(t *testing.T) {
	testenv.RequireRoot(t)
	fs, err := hostfs.New("/")
	if err != nil {
		t.Fatal(err)
	}
	const knob = "/sys/kernel/mm/transparent_hugepage/enabled"
	if !fs.Exists(knob) {
		testenv.Unavailable(t, "kernel without THP")
	}
	c := audit.Change{Kind: audit.KindFile, Target: knob}
	orig := readN(t, fs, c)
	c.Value = "never"
	if orig == "never" {
		c.Value = "madvise"
	}
	h := Host{FS: fs, Dir: filepath.Join(t.TempDir(), "journal")}
	t.Cleanup(func() { _ = fs.WriteFile(knob, []byte(orig)) }) // belt and braces
	if _, err := h.Apply(context.Background(), Plan{Items: []Item{{Change: c}}}, ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := readN(t, fs, c); got != c.Value {
		t.Fatalf("THP = %q after apply, want %q", got, c.Value)
	}
	if _, err := h.Revert(RevertOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := readN(t, fs, c); got != orig {
		t.Fatalf("THP = %q after revert, want %q", got, orig)
	}
}
