package testlab

import (
	"context"
	"os/exec"
	"testing"

	"github.com/perflab/perflab/internal/testenv"
)

// Start builds a lab for a test: it needs root and the lab's tools (skip
// locally, fail in CI), sweeps labs of killed runs with the same prefix,
// and removes the lab when the test ends.
func Start(t testing.TB, o Options) *Lab {
	t.Helper()
	testenv.RequireRoot(t)
	for _, tool := range []string{"ip", "tc", "nft", "ethtool", "ssh-keygen", "unshare", SSHD} {
		if _, err := exec.LookPath(tool); err != nil {
			testenv.Unavailable(t, "%s not installed (scripts/test installs openssh-server, iproute2, nftables)", tool)
		}
	}
	if o.Prefix == "" {
		o.Prefix = "plab"
	}
	if err := Sweep(o.Prefix); err != nil {
		t.Logf("sweeping old labs: %v", err)
	}
	l, err := New(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := l.Close(); err != nil {
			t.Errorf("lab teardown: %v", err)
		}
	})
	return l
}
