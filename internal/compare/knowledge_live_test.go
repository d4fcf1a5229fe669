package compare

import (
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/fixture"
	"github.com/perflab/perflab/internal/hostfs"
	"github.com/perflab/perflab/internal/knowledge"
	"github.com/perflab/perflab/internal/snapshot"
)

// The knowledge patterns for kernel parameters and the container name a
// snapshot of the stock fixture trees never sets are live: on a host whose
// command line sets them, or that runs in a container, DiffSnapshots
// produces paths those patterns match, and Lookup finds their entry.
func TestKnowledgePatternsMatchRealDiffs(t *testing.T) {
	base := collectTree(t, fixture.Tree(t, "metal", nil))
	var params []string
	for _, e := range knowledge.Base {
		for _, p := range e.Paths {
			if strings.HasPrefix(p, "kernel.params.") {
				params = append(params, strings.TrimPrefix(p, "kernel.params."))
			}
		}
	}
	cmdline := "BOOT_IMAGE=/boot/vmlinuz-6.1.0-28-amd64 root=UUID=0f5e6d2c ro quiet"
	for i, p := range params {
		if i%2 == 0 {
			cmdline += " " + p // a flag
		} else {
			cmdline += " " + p + "=1" // a value
		}
	}
	tuned := collectTree(t, fixture.Tree(t, "metal", map[string]string{
		"proc/cmdline":          cmdline + "\n",
		"run/systemd/container": "docker\n",
	}))
	diffs := DiffSnapshots(base, tuned)
	for _, e := range knowledge.Base {
		for _, p := range e.Paths {
			if !strings.HasPrefix(p, "kernel.params.") && p != "host.container" {
				continue
			}
			hit := false
			for _, d := range diffs {
				if knowledge.MatchPrefix(p, d.Path) {
					hit = true
					if got := knowledge.Lookup(d.Path); got == nil || got.ID != e.ID {
						t.Errorf("diff %s: Lookup = %v, want %s", d.Path, got, e.ID)
					}
				}
			}
			if !hit {
				t.Errorf("knowledge %s: %q matches no difference of a host that sets it", e.ID, p)
			}
		}
	}
	if len(params) < 20 {
		t.Errorf("only %d kernel.params patterns", len(params))
	}
}

func collectTree(t *testing.T, fs hostfs.FS) *snapshot.Snapshot {
	t.Helper()
	s, err := snapshot.Collect(fs, snapshot.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}
