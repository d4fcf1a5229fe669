package knob_test

import (
	"runtime"
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/audit"
	"github.com/perflab/perflab/internal/hostfs"
	"github.com/perflab/perflab/internal/knob"
	"github.com/perflab/perflab/internal/testenv"
	"github.com/perflab/perflab/internal/tune"
	"golang.org/x/sys/unix"
)

// netSysctls are the net sysctls the catalogue has a word on: its listed
// knobs and the host-wide ones.
func netSysctls() []knob.Knob {
	var out []knob.Knob
	for _, k := range knob.All() {
		if k.Method == knob.Sysctl && strings.HasPrefix(k.Name(), "net.") {
			out = append(out, k)
		}
	}
	for _, n := range knob.HostWideNet() {
		out = append(out, knob.MustLookup("sysctl."+n))
	}
	return out
}

// The catalogue's scopes hold on the running kernel: from a fresh network
// namespace (a thread unshared for the test, gone when it ends), a
// host-wide net sysctl is absent, a namespaced one is present and
// writable, and a netns-read-only one cannot be written, which tune's
// plan check says in those words.
func TestScopesOnThisKernel(t *testing.T) {
	testenv.RequireRoot(t)
	live, err := hostfs.New("/")
	if err != nil {
		t.Fatal(err)
	}
	knobs := netSysctls()
	inInit := map[string]bool{}
	for _, k := range knobs {
		inInit[k.Name()] = live.Exists(k.Files()[0])
	}
	type result struct {
		exists, writable bool
		blocked          string
	}
	child := map[string]result{}
	done := make(chan error, 1)
	go func() {
		// The thread stays locked and dies with the goroutine: its
		// namespace goes with it and no other goroutine runs there.
		runtime.LockOSThread()
		if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
			done <- err
			return
		}
		for _, k := range knobs {
			p := k.Files()[0]
			r := result{exists: live.Exists(p)}
			if r.exists {
				r.writable = unix.Access(p, unix.W_OK) == nil
				plan := tune.Plan{Items: []tune.Item{{Change: audit.KnobChange(k, "1", "")}}}
				plan.Check(live)
				r.blocked = plan.Items[0].Blocked
			}
			child[k.Name()] = r
		}
		done <- nil
	}()
	if err := <-done; err != nil {
		testenv.Unavailable(t, "cannot create a network namespace: %v", err)
	}
	checked := 0
	for _, k := range knobs {
		name, r := k.Name(), child[k.Name()]
		if !inInit[name] {
			continue // not on this kernel, or its module is not loaded
		}
		checked++
		switch {
		case k.Scope == knob.Host && r.exists:
			t.Errorf("%s is catalogued host-wide but a new network namespace has its own", name)
		case k.Scope == knob.NetNS && !r.exists:
			t.Errorf("%s is catalogued per network namespace but a new namespace has none: host-wide", name)
		case k.NetNSReadOnly && r.exists && r.writable:
			t.Errorf("%s is catalogued read-only outside the initial namespace but a new namespace may write it", name)
		case k.NetNSReadOnly && r.exists && !strings.Contains(r.blocked, "read-only outside"):
			t.Errorf("%s: tune's plan check says %q, want it to name the namespace", name, r.blocked)
		case k.Scope == knob.NetNS && !k.NetNSReadOnly && r.exists && !r.writable:
			t.Errorf("%s is catalogued writable per namespace but a new namespace cannot write it: NetNSReadOnly", name)
		}
	}
	t.Logf("%d catalogued net sysctls checked against a new network namespace", checked)
	if checked < 10 {
		t.Errorf("only %d catalogued net sysctls exist here: the test checked nearly nothing", checked)
	}
}
