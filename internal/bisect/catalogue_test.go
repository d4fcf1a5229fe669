package bisect

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/perflab/perflab/internal/fixture"
	"github.com/perflab/perflab/internal/fixture/fixturesnap"
	"github.com/perflab/perflab/internal/knob"
	"github.com/perflab/perflab/internal/snapshot"
	"github.com/perflab/perflab/internal/tune"
)

// goodOf is a "good host" that differs from s in the settings the issue
// names: THP, the governor, read-ahead, a sysctl, RPS and XPS.
func goodOf(t *testing.T, s *snapshot.Snapshot) *snapshot.Snapshot {
	t.Helper()
	data, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var g snapshot.Snapshot
	if err := json.Unmarshal(data, &g); err != nil {
		t.Fatal(err)
	}
	g.Memory.THP.Enabled = map[string]string{"never": "always"}[s.Memory.THP.Enabled]
	if g.Memory.THP.Enabled == "" {
		g.Memory.THP.Enabled = "never"
	}
	if len(s.CPU.Governors) > 0 {
		g.CPU.Governors = map[string][]int{"userspace": s.CPU.Online}
	}
	for i := range g.Block {
		g.Block[i].ReadAheadKiB = s.Block[i].ReadAheadKiB*2 + 4
	}
	if v, ok := s.Sysctl["net.core.somaxconn"]; ok {
		g.Sysctl["net.core.somaxconn"] = v + "1"
	}
	for i := range g.Net.Interfaces {
		for j := range g.Net.Interfaces[i].RxQueues {
			g.Net.Interfaces[i].RxQueues[j].RPS = "1"
		}
		for j := range g.Net.Interfaces[i].TxQueues {
			g.Net.Interfaces[i].TxQueues[j].XPS = "1"
		}
	}
	return &g
}

// Bisect's candidates come from the one catalogue: on every fixture tree
// each candidate's changes are the catalogue knob of its fact, and tune
// applies them (journalling the knob) and reverts them on a copy of the
// tree, leaving every file as it was.
func TestCandidatesComeFromTheCatalogue(t *testing.T) {
	seen := map[string]bool{}
	for _, tree := range fixture.Names() {
		bad := fixturesnap.Collect(t, tree)
		cands, _ := Candidates(goodOf(t, bad), bad)
		fs := fixture.Tree(t, tree, nil)
		var plan tune.Plan
		before := map[string]string{}
		for _, c := range cands {
			want, ok := knob.Lookup(c.Path)
			if !ok {
				t.Errorf("%s: candidate %s has no catalogue knob", tree, c.Path)
				continue
			}
			for _, ch := range c.Changes {
				k, ok := ch.Knob()
				if !ok || k.Path != want.Path || !k.Bound() {
					t.Errorf("%s: %s change %s %s is not the catalogue's %s", tree, c.Path, ch.Kind, ch.Target, want.Path)
					continue
				}
				seen[k.Path] = true
				if v, err := tune.Read(fs, ch); err == nil {
					before[ch.Target] = v
					plan.Items = append(plan.Items, tune.Item{Rule: "bisect", Change: ch})
				}
			}
		}
		if len(plan.Items) == 0 {
			continue
		}
		h := tune.Host{FS: fs, Dir: t.TempDir()}
		applied, err := h.Apply(context.Background(), plan, tune.ApplyOptions{Source: "test"})
		if err != nil {
			t.Fatalf("%s: apply: %v", tree, err)
		}
		if len(applied) == 0 {
			t.Errorf("%s: %d candidate changes, none applied", tree, len(plan.Items))
		}
		for _, e := range applied {
			if k, _ := e.Change.Knob(); e.Knob == "" || e.Knob != k.Path {
				t.Errorf("%s: journal entry for %s records knob %q, want %q", tree, e.Change.Target, e.Knob, k.Path)
			}
		}
		if _, err := h.Revert(tune.RevertOptions{Discard: true}); err != nil {
			t.Fatalf("%s: revert: %v", tree, err)
		}
		for _, it := range plan.Items {
			if v, err := tune.Read(fs, it.Change); err != nil || v != before[it.Change.Target] {
				t.Errorf("%s: %s reads %q after revert (%v), want %q", tree, it.Change.Target, v, err, before[it.Change.Target])
			}
		}
	}
	for _, want := range []string{"memory.thp.enabled", "cpu.governors", "block[*].read_ahead_kib", "sysctl.net.core.somaxconn",
		"net.interfaces[*].rx_queues[*].rps_cpus", "net.interfaces[*].tx_queues[*].xps_cpus"} {
		if !seen[want] {
			t.Errorf("no fixture tree gave a %s candidate", want)
		}
	}
}
