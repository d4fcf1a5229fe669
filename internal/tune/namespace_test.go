package tune

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/audit"
	"github.com/perflab/perflab/internal/hostfs"
	"github.com/perflab/perflab/internal/testenv"
)

// withNS makes the journal see the process in ns until the test ends.
func withNS(t *testing.T, ns NS) {
	t.Helper()
	prev := currentNS
	currentNS = func() NS { return ns }
	t.Cleanup(func() { currentNS = prev })
}

func TestBind(t *testing.T) {
	here := NS{Net: 7, Mnt: 9}
	for _, c := range []struct {
		change audit.Change
		want   NS
	}{
		{audit.Change{Kind: audit.KindSysctl, Target: "net.core.somaxconn"}, NS{Net: 7}},
		{audit.Change{Kind: audit.KindSysctl, Target: "vm.swappiness"}, NS{}},
		{audit.Change{Kind: audit.KindFile, Target: "/sys/class/net/eth0/queues/rx-0/rps_cpus"}, NS{Net: 7}},
		// THP is the host's from any namespace: ip netns exec makes a new
		// mount namespace on every call, which must not strand the entry.
		{audit.Change{Kind: audit.KindFile, Target: "/sys/kernel/mm/transparent_hugepage/enabled"}, NS{}},
		{audit.Change{Kind: audit.KindFile, Target: "/proc/irq/40/smp_affinity_list"}, NS{}},
		{audit.Change{Kind: audit.KindChannels, Target: "eth0"}, NS{Net: 7}},
	} {
		if got := bind(c.change, here); got != c.want {
			t.Errorf("bind(%s %s) = %+v, want %+v", c.change.Kind, c.change.Target, got, c.want)
		}
	}
}

// A journal applied in one network namespace is not reverted from
// another: its net knobs are skipped and named, the rest is restored, and
// the journal stays until a revert in the right namespace finishes it.
func TestRevertSkipsOtherNamespace(t *testing.T) {
	fs := fakeRoot(t)
	h := Host{FS: fs}
	p := Plan{Workload: "web", Items: []Item{
		{Change: audit.Change{Kind: audit.KindSysctl, Target: "net.core.somaxconn", Value: "65535"}},
		{Change: audit.Change{Kind: audit.KindSysctl, Target: "vm.swappiness", Value: "10"}},
	}}
	withNS(t, NS{Net: 100, Mnt: 200})
	applied, err := h.Apply(context.Background(), p, ApplyOptions{Source: "test"})
	if err != nil || len(applied) != 2 {
		t.Fatalf("apply: %v %v", applied, err)
	}
	if applied[0].NS != (NS{Net: 100}) || applied[1].NS != (NS{}) {
		t.Fatalf("bindings %+v %+v", applied[0].NS, applied[1].NS)
	}

	withNS(t, NS{Net: 101, Mnt: 200}) // the host's namespace
	drift, err := h.Verify()
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range drift {
		if d.Target == "net.core.somaxconn" && !strings.Contains(d.Error, "net:[100]") {
			t.Errorf("verify from another netns judged %+v", d)
		}
	}
	restored, err := h.Revert(RevertOptions{})
	var other *ErrOtherNamespace
	if !errors.As(err, &other) || len(other.Skipped) != 1 || other.Skipped[0].Entry.Change.Target != "net.core.somaxconn" {
		t.Fatalf("revert from another netns: %v", err)
	}
	msg := err.Error()
	if strings.Contains(msg, "\n") || !strings.Contains(msg, "net:[100], this is net:[101]") || !strings.Contains(msg, "net.core.somaxconn") {
		t.Errorf("message is not one clear line naming the entry and namespaces: %q", msg)
	}
	if len(restored) != 1 || restored[0].Change.Target != "vm.swappiness" {
		t.Errorf("restored %+v, want only vm.swappiness", restored)
	}
	if v := readN(t, fs, p.Items[0].Change); v != "65535" {
		t.Errorf("somaxconn written from the wrong namespace: %s", v)
	}
	if v := readN(t, fs, p.Items[1].Change); v != "60" {
		t.Errorf("swappiness = %s, want 60 restored", v)
	}
	if j, _ := h.Status(); j == nil {
		t.Fatal("journal archived although an entry was skipped")
	}

	withNS(t, NS{Net: 100, Mnt: 999}) // back in the namespace (mount ns does not bind a sysctl)
	restored, err = h.Revert(RevertOptions{})
	if err != nil || len(restored) != 1 {
		t.Fatalf("revert in the namespace: %v %v", restored, err)
	}
	if v := readN(t, fs, p.Items[0].Change); v != "4096" {
		t.Errorf("somaxconn = %s after revert, want 4096", v)
	}
	if j, _ := h.Status(); j != nil {
		t.Error("journal not archived after a full revert")
	}
}

// The same net knob tuned in two namespaces is two knobs: each keeps its
// own original value.
func TestOriginalPerNamespace(t *testing.T) {
	j := &Journal{Entries: []Entry{{Change: audit.Change{Kind: audit.KindSysctl, Target: "net.core.somaxconn"}, Old: "128", State: Applied, NS: NS{Net: 1}}}}
	c := audit.Change{Kind: audit.KindSysctl, Target: "net.core.somaxconn"}
	if _, ok := j.original(c, NS{Net: 2}); ok {
		t.Error("an entry of netns 1 gave the original value in netns 2")
	}
	if v, ok := j.original(c, NS{Net: 1}); !ok || v != "128" {
		t.Errorf("original in netns 1 = %q %v", v, ok)
	}
}

// TestLiveNetnsJournalBinding does it for real: a child process in a
// network namespace created for the test (ip netns exec, which also gives it
// a mount namespace with that netns's sysfs) applies a net sysctl; a revert
// from the host's namespace is refused and leaves the host's value alone;
// a revert inside restores the namespace's value.
func TestLiveNetnsJournalBinding(t *testing.T) {
	if os.Getenv("PERFLAB_NSBIND_CHILD") != "" {
		return
	}
	testenv.RequireRoot(t)
	ip := testenv.RequireTool(t, "ip")
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	name := "interp-tune-" + hex.EncodeToString(b)
	if out, err := exec.Command(ip, "netns", "add", name).CombinedOutput(); err != nil {
		testenv.Unavailable(t, "cannot create a network namespace: %v: %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command(ip, "netns", "del", name).CombinedOutput(); err != nil {
			t.Errorf("ip netns del %s: %v: %s", name, err, out)
		}
	})
	dir := filepath.Join(t.TempDir(), "journal")
	child := func(mode string) string {
		t.Helper()
		cmd := exec.Command(ip, "netns", "exec", name, os.Args[0], "-test.run=^TestNSBindChild$", "-test.count=1", "-test.v")
		cmd.Env = append(os.Environ(), "PERFLAB_NSBIND_CHILD="+mode, "PERFLAB_NSBIND_DIR="+dir)
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "child "+mode+" ok") {
			t.Fatalf("child %s in netns %s: %v\n%s", mode, name, err, out)
		}
		return string(out)
	}
	inNS := func() string {
		out, err := exec.Command(ip, "netns", "exec", name, "cat", "/proc/sys/net/core/somaxconn").Output()
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(out))
	}
	fs, err := hostfs.New("/")
	if err != nil {
		t.Fatal(err)
	}
	c := audit.Change{Kind: audit.KindSysctl, Target: "net.core.somaxconn"}
	hostBefore := readN(t, fs, c)
	t.Cleanup(func() {
		// Only if the binding failed did anything write the host's value.
		if got, err := read(fs, c); err == nil && got != hostBefore {
			_ = write(fs, c, hostBefore)
		}
	})

	child("apply")
	if got := inNS(); got != "1234" {
		t.Fatalf("somaxconn in %s = %s after apply, want 1234", name, got)
	}
	if got := readN(t, fs, c); got != hostBefore {
		t.Fatalf("apply in the netns changed the host's somaxconn: %s → %s", hostBefore, got)
	}

	h := Host{FS: fs, Dir: dir}
	_, err = h.Revert(RevertOptions{})
	var other *ErrOtherNamespace
	if !errors.As(err, &other) || len(other.Skipped) != 1 {
		t.Fatalf("revert from the host namespace was not refused: %v", err)
	}
	if !strings.Contains(err.Error(), "network namespace") || strings.Contains(err.Error(), "\n") {
		t.Errorf("refusal is not one line naming the namespace: %q", err)
	}
	if got := readN(t, fs, c); got != hostBefore {
		t.Fatalf("revert from the host wrote the host's somaxconn: %s → %s", hostBefore, got)
	}
	if got := inNS(); got != "1234" {
		t.Fatalf("revert from the host changed the namespace's value: %s", got)
	}

	child("revert")
	if got := inNS(); got != "777" {
		t.Errorf("somaxconn in %s = %s after revert inside, want 777 (its value before apply)", name, got)
	}
	if j, _ := h.Status(); j != nil {
		t.Error("journal not archived after the revert inside the namespace")
	}
}

func TestNSBindChild(t *testing.T) {
	mode := os.Getenv("PERFLAB_NSBIND_CHILD")
	if mode == "" {
		return // only meaningful as the child of TestLiveNetnsJournalBinding
	}
	fs, err := hostfs.New("/")
	if err != nil {
		t.Fatal(err)
	}
	h := Host{FS: fs, Dir: os.Getenv("PERFLAB_NSBIND_DIR")}
	switch mode {
	case "apply":
		// An old value unlike the host's default, so that a revert that
		// wrongly reached the host would show there.
		if err := fs.WriteFile("/proc/sys/net/core/somaxconn", []byte("777\n")); err != nil {
			t.Fatal(err)
		}
		p := Plan{Workload: "web", Items: []Item{{Change: audit.Change{Kind: audit.KindSysctl, Target: "net.core.somaxconn", Value: "1234"}}}}
		if _, err := h.Apply(context.Background(), p, ApplyOptions{Source: "test"}); err != nil {
			t.Fatal(err)
		}
	case "revert":
		if _, err := h.Revert(RevertOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("child %s ok", mode)
}

func TestEntryElsewhere(t *testing.T) {
	withNS(t, NS{Net: 5, Mnt: 6})
	e := Entry{NS: NS{Net: 4}}
	if got := e.Elsewhere(); !strings.Contains(got, "net:[4], this is net:[5]") {
		t.Errorf("Elsewhere = %q", got)
	}
	if got := (Entry{NS: NS{Net: 5}}).Elsewhere(); got != "" {
		t.Errorf("same namespace: %q", got)
	}
	if got := (Entry{}).Elsewhere(); got != "" {
		t.Errorf("an unbound (older) entry: %q", got)
	}
}
