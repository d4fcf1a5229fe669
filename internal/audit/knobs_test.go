package audit_test

import (
	"encoding/json"
	"sort"
	"testing"

	"github.com/perflab/perflab/internal/audit"
	"github.com/perflab/perflab/internal/fixture/fixturesnap"
	"github.com/perflab/perflab/internal/knob"
	"github.com/perflab/perflab/internal/snapshot"
)

// badKnobs sets the settings the issue names to values some workload
// fails: THP always, powersave, a tiny read-ahead, RPS/XPS unset.
func badKnobs(s *snapshot.Snapshot) {
	s.Memory.THP.Enabled, s.Memory.THP.Defrag = "always", "always"
	s.CPU.Governors = map[string][]int{"powersave": s.CPU.Online}
	for i := range s.Block {
		s.Block[i].ReadAheadKiB = 8
	}
	for i := range s.Net.Interfaces {
		for j := range s.Net.Interfaces[i].RxQueues {
			s.Net.Interfaces[i].RxQueues[j].RPS = "0"
		}
		for j := range s.Net.Interfaces[i].TxQueues {
			s.Net.Interfaces[i].TxQueues[j].XPS = "0"
		}
	}
}

// Every fix the audit can apply is a knob of the catalogue, named as the
// catalogue names it, with values its format accepts: the audit's fixes
// for THP, governor, read-ahead, sysctls and RPS/XPS come from the one
// catalogue (issue 21).
func TestChangesComeFromTheCatalogue(t *testing.T) {
	seen := map[string]bool{}
	for tree, s := range fixturesnap.All(t) {
		for _, mutate := range []func(*snapshot.Snapshot){func(*snapshot.Snapshot) {}, badKnobs} {
			s := clone(t, s)
			mutate(s)
			for _, name := range audit.Workloads() {
				w, err := audit.LookupWorkload(name)
				if err != nil {
					t.Fatal(err)
				}
				for _, f := range audit.Run(s, w) {
					for _, c := range f.Changes {
						if c.Kind != audit.KindSysctl && c.Kind != audit.KindFile {
							continue
						}
						k, ok := c.Knob()
						if !ok {
							t.Errorf("%s/%s %s: %s %s is not in the knob catalogue", tree, name, f.Rule, c.Kind, c.Target)
							continue
						}
						if !k.Bound() || k.Name() != c.Target && k.Files()[0] != c.Target {
							t.Errorf("%s/%s %s: %s resolves to %s (bound %v)", tree, name, f.Rule, c.Target, k.Name(), k.Bound())
						}
						if _, err := knob.Encode(k.Sources[0].Format, c.Value); err != nil {
							t.Errorf("%s/%s %s: %s value %q: %v", tree, name, f.Rule, c.Target, c.Value, err)
						}
						seen[k.Path] = true
					}
				}
			}
		}
	}
	for _, want := range []string{"memory.thp.enabled", "memory.thp.defrag", "cpu.governors", "block[*].read_ahead_kib",
		"net.interfaces[*].rx_queues[*].rps_cpus", "net.interfaces[*].tx_queues[*].xps_cpus", "sysctl.net.core.somaxconn"} {
		if !seen[want] {
			t.Errorf("no audit fix on any fixture tree sets %s", want)
		}
	}
	var got []string
	for p := range seen {
		got = append(got, p)
	}
	sort.Strings(got)
	t.Logf("knobs the audit fixes: %v", got)
}

// clone deep-copies a snapshot through JSON, so a mutation stays local.
func clone(t *testing.T, s *snapshot.Snapshot) *snapshot.Snapshot {
	t.Helper()
	data, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var c snapshot.Snapshot
	if err := json.Unmarshal(data, &c); err != nil {
		t.Fatal(err)
	}
	return &c
}
