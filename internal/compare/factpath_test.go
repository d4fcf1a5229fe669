package compare

import (
	"testing"

	"github.com/perflab/perflab/internal/fixture/fixturesnap"
	"github.com/perflab/perflab/internal/run"
	"github.com/perflab/perflab/internal/snapshot"
	"github.com/perflab/perflab/internal/snapshot/factpath"
)

// Every path compare puts in a difference (snapshot diff, run diff,
// monitor diff) names a fact of the catalogue, so the knowledge base and
// the kinds can be looked up for it.
func TestDiffPathsAreCatalogued(t *testing.T) {
	var snaps []*snapshot.Snapshot
	for _, s := range fixturesnap.All(t) {
		snaps = append(snaps, s)
	}
	var paths []string
	for i := range snaps {
		for j := range snaps {
			if i != j {
				for _, d := range DiffSnapshots(snaps[i], snaps[j]) {
					paths = append(paths, d.Path)
				}
			}
		}
		for _, d := range DiffSnapshots(snaps[i], &snapshot.Snapshot{}) {
			paths = append(paths, d.Path)
		}
	}
	a := &run.Run{Probe: "sysbench.cpu", Params: map[string]string{"threads": "1"}, CPUs: "0", Tool: "sysbench", ToolVersion: "1.0"}
	b := &run.Run{Probe: "sysbench.cpu", Params: map[string]string{"threads": "2", "time": "5"}, CPUs: "1", Tool: "sysbench", ToolVersion: "1.1"}
	for _, d := range DiffRuns([]*run.Run{a}, []*run.Run{b}) {
		paths = append(paths, d.Path)
	}
	for _, f := range monFields {
		paths = append(paths, "monitor."+f.name)
	}
	if len(paths) < 200 {
		t.Fatalf("only %d diff paths: the test checks too little", len(paths))
	}
	for _, p := range paths {
		if err := factpath.Check(p); err != nil {
			t.Errorf("compare emits %q: %v", p, err)
		}
		if _, ok := factpath.KindOf(p); !ok {
			t.Errorf("compare emits %q, which has no kind", p)
		}
	}
}
