package tune

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/perflab/perflab/internal/audit"
	"github.com/perflab/perflab/internal/fixture"
	"github.com/perflab/perflab/internal/hostfs"
)

// fakeRoot builds a minimal host tree with real file formats.
func fakeRoot(t *testing.T) hostfs.FS {
	t.Helper()
	return fixture.Files(t, map[string]string{
		"proc/sys/net/core/somaxconn":                "4096\n",
		"proc/sys/net/ipv4/tcp_rmem":                 "4096\t131072\t6291456\n",
		"proc/sys/vm/swappiness":                     "60\n",
		"proc/sys/kernel/random/boot_id":             "6a3f2a1e-4b8c-4a51-9d0e-2f1d8d3c0b11\n",
		"sys/kernel/mm/transparent_hugepage/enabled": "always [madvise] never\n",
		"etc/machine-id":                             "0123456789abcdef0123456789abcdef\n",
	})
}

func webPlan() Plan {
	return Plan{Workload: "web", Items: []Item{
		{Rule: "NET-SOMAXCONN", Change: audit.Change{Kind: audit.KindSysctl, Target: "net.core.somaxconn", Value: "65535"}},
		{Rule: "NET-TCP-RMEM", Change: audit.Change{Kind: audit.KindSysctl, Target: "net.ipv4.tcp_rmem", Value: "4096 87380 16777216"}},
		{Rule: "MEM-THP-ENABLED", Change: audit.Change{Kind: audit.KindFile, Target: "/sys/kernel/mm/transparent_hugepage/enabled", Value: "always"}},
	}}
}

func readN(t *testing.T, fs hostfs.FS, c audit.Change) string {
	t.Helper()
	v, err := read(fs, c)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func snapshotValues(t *testing.T, fs hostfs.FS, p Plan) []string {
	var out []string
	for _, it := range p.Items {
		out = append(out, readN(t, fs, it.Change))
	}
	return out
}

func TestApplyVerifyRevertCycle(t *testing.T) {
	fs := fakeRoot(t)
	h := Host{FS: fs}
	p := webPlan()
	before := snapshotValues(t, fs, p)

	applied, err := h.Apply(context.Background(), p, ApplyOptions{Source: "test", Persist: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(applied) != 3 {
		t.Fatalf("applied %d knobs, want 3", len(applied))
	}
	for i, it := range p.Items {
		if got := readN(t, fs, it.Change); got != normalize(it.Change, it.Change.Value) {
			t.Errorf("%s = %q after apply, want %q", it.Change.Target, got, it.Change.Value)
		}
		if applied[i].Old != before[i] {
			t.Errorf("journaled old value of %s = %q, want %q", it.Change.Target, applied[i].Old, before[i])
		}
	}
	conf, err := os.ReadFile(fs.Path(PersistPath))
	if err != nil || !strings.Contains(string(conf), "net.core.somaxconn = 65535") {
		t.Fatalf("persist file: %q, %v", conf, err)
	}

	drift, err := h.Verify()
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range drift {
		if !d.OK {
			t.Errorf("fresh apply drifted: %+v", d)
		}
	}
	// Someone changes a knob behind perflab's back.
	if err := fs.WriteFile("/proc/sys/net/core/somaxconn", []byte("128\n")); err != nil {
		t.Fatal(err)
	}
	drift, _ = h.Verify()
	var drifted []string
	for _, d := range drift {
		if !d.OK {
			drifted = append(drifted, d.Target+"="+d.Current)
		}
	}
	if len(drifted) != 1 || drifted[0] != "net.core.somaxconn=128" {
		t.Errorf("drift = %v, want only net.core.somaxconn=128", drifted)
	}

	if _, err := h.Revert(RevertOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := snapshotValues(t, fs, p); strings.Join(got, "|") != strings.Join(before, "|") {
		t.Errorf("after revert %q, want %q", got, before)
	}
	if _, err := os.Stat(fs.Path(PersistPath)); !os.IsNotExist(err) {
		t.Errorf("persist file not removed by revert: %v", err)
	}
	// Revert is idempotent and there is nothing to verify any more.
	if r, err := h.Revert(RevertOptions{}); err != nil || len(r) != 0 {
		t.Errorf("second revert = %v, %v", r, err)
	}
	if j, _ := h.Status(); j != nil {
		t.Errorf("journal still active after revert: %+v", j)
	}
}

func TestApplyRollsBackOnFailure(t *testing.T) {
	fs := fakeRoot(t)
	h := Host{FS: fs}
	p := webPlan()
	// A knob that passes the writability check but fails on write: a
	// directory where a file should be.
	if err := os.MkdirAll(fs.Path("/proc/sys/net/core/bad"), 0o755); err != nil {
		t.Fatal(err)
	}
	p.Items = append(p.Items[:1], Item{Change: audit.Change{Kind: audit.KindSysctl, Target: "net.core.bad", Value: "1"}}, p.Items[1])
	before := readN(t, fs, p.Items[0].Change)
	_, err := h.Apply(context.Background(), p, ApplyOptions{})
	if err == nil {
		t.Fatal("apply succeeded with an unwritable knob")
	}
	if !strings.Contains(err.Error(), "restored") {
		t.Errorf("error does not say the rollback happened: %v", err)
	}
	if got := readN(t, fs, p.Items[0].Change); got != before {
		t.Errorf("somaxconn = %q after rollback, want %q", got, before)
	}
}

func TestApplyBlockedChangesNothing(t *testing.T) {
	fs := fakeRoot(t)
	h := Host{FS: fs}
	p := webPlan()
	p.Items = append(p.Items, Item{Change: audit.Change{Kind: audit.KindSysctl, Target: "net.core.busy_poll", Value: "50"}})
	_, err := h.Apply(context.Background(), p, ApplyOptions{})
	if !errors.Is(err, ErrBlocked) {
		t.Fatalf("err = %v, want ErrBlocked", err)
	}
	if got := readN(t, fs, p.Items[0].Change); got != "4096" {
		t.Errorf("a blocked plan still wrote somaxconn = %q", got)
	}
	if !strings.Contains(p.Items[3].Blocked, "no /proc/sys/net/core/busy_poll") {
		t.Errorf("blocked reason = %q", p.Items[3].Blocked)
	}
}

func TestApplyInterruptedRollsBack(t *testing.T) {
	fs := fakeRoot(t)
	h := Host{FS: fs}
	ctx, cancel := context.WithCancel(context.Background())
	n := 0
	_, err := h.Apply(ctx, webPlan(), ApplyOptions{Log: func(string, ...any) {
		if n++; n == 1 {
			cancel() // Ctrl-C after the first knob
		}
	}})
	if err == nil || !strings.Contains(err.Error(), "interrupted") {
		t.Fatalf("err = %v", err)
	}
	if got := readN(t, fs, webPlan().Items[0].Change); got != "4096" {
		t.Errorf("somaxconn = %q after interrupted apply, want 4096", got)
	}
}

func TestJournalBoundToHostAndBoot(t *testing.T) {
	fs := fakeRoot(t)
	h := Host{FS: fs}
	if _, err := h.Apply(context.Background(), webPlan(), ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	// Reboot: a new boot id.
	if err := os.WriteFile(fs.Path("/proc/sys/kernel/random/boot_id"), []byte("11111111-2222-3333-4444-555555555555\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Revert(RevertOptions{}); err == nil || !strings.Contains(err.Error(), "earlier boot") {
		t.Fatalf("revert across a reboot: %v", err)
	}
	if _, err := h.Apply(context.Background(), webPlan(), ApplyOptions{}); err == nil {
		t.Fatal("apply on top of a journal from an earlier boot was allowed")
	}
	// Another machine: refused even with --force.
	if err := os.WriteFile(fs.Path("/etc/machine-id"), []byte("ffffffffffffffffffffffffffffffff\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Revert(RevertOptions{Force: true}); err == nil || !strings.Contains(err.Error(), "another host") {
		t.Fatalf("revert on another host: %v", err)
	}
}

func TestCorruptJournal(t *testing.T) {
	fs := fakeRoot(t)
	h := Host{FS: fs}
	if err := os.MkdirAll(h.dir(), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(h.journalPath(), []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Revert(RevertOptions{}); err == nil || !strings.Contains(err.Error(), "corrupt") {
		t.Fatalf("corrupt journal: %v", err)
	}
}

// TestCrashMidApplyThenRevert kills a real perflab apply with SIGKILL after
// its second knob, then reverts from the journal it left.
func TestCrashMidApplyThenRevert(t *testing.T) {
	if os.Getenv("PERFLAB_TUNE_CRASH_ROOT") != "" {
		return // the child half runs in TestCrashChild
	}
	fs := fakeRoot(t)
	p := webPlan()
	before := snapshotValues(t, fs, p)
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), "PERFLAB_TUNE_CRASH_ROOT="+fs.Root())
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("child did not die by SIGKILL: %v", err)
	}
	if got := readN(t, fs, p.Items[0].Change); got != "65535" {
		t.Fatalf("child did not apply before dying: somaxconn = %q", got)
	}
	h := Host{FS: fs}
	if _, err := h.Revert(RevertOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := snapshotValues(t, fs, p); strings.Join(got, "|") != strings.Join(before, "|") {
		t.Errorf("after crash+revert %q, want %q", got, before)
	}
}

func TestCrashChild(t *testing.T) {
	root := os.Getenv("PERFLAB_TUNE_CRASH_ROOT")
	if root == "" {
		return // only meaningful as the child of TestCrashMidApplyThenRevert
	}
	fs, err := hostfs.New(root)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	_, _ = Host{FS: fs}.Apply(context.Background(), webPlan(), ApplyOptions{Log: func(string, ...any) {
		if n++; n == 2 {
			syscall.Kill(os.Getpid(), syscall.SIGKILL)
		}
	}})
}

// One write can move another knob: enabling THP makes the kernel raise
// vm.min_free_kbytes. The journal holds every knob's value from before the
// apply, not from after an earlier item's write — else the moved knob
// reads as already at its target, is never journaled, and revert leaves
// it raised (seen on a 6.18 VM: 19825 before a bisection, 67584 after).
// Two sysctl files sharing an inode stand in for the kernel's coupling.
func TestApplyJournalsValuesFromBeforeTheApply(t *testing.T) {
	fs := fakeRoot(t)
	if err := os.Link(fs.Path("/proc/sys/vm/swappiness"), fs.Path("/proc/sys/vm/min_free_kbytes")); err != nil {
		t.Fatal(err)
	}
	h := Host{FS: fs}
	p := Plan{Workload: "bisect", Items: []Item{
		{Rule: "A", Change: audit.Change{Kind: audit.KindSysctl, Target: "vm.swappiness", Value: "10"}},
		{Rule: "B", Change: audit.Change{Kind: audit.KindSysctl, Target: "vm.min_free_kbytes", Value: "10"}},
	}}
	if _, err := h.Apply(context.Background(), p, ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	j, err := h.Status()
	if err != nil || j == nil {
		t.Fatalf("journal: %v", err)
	}
	olds := map[string]string{}
	for _, e := range j.Entries {
		olds[e.Change.Target] = e.Old
	}
	if olds["vm.swappiness"] != "60" || olds["vm.min_free_kbytes"] != "60" {
		t.Fatalf("journaled old values %v, want both 60 (their values before the apply)", olds)
	}
}
