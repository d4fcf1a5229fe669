package fleet

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/perflab/perflab/internal/audit"
	"github.com/perflab/perflab/internal/compare"
	"github.com/perflab/perflab/internal/snapshot"
	"github.com/perflab/perflab/internal/snapshot/factpath"
	"github.com/perflab/perflab/internal/store"
)

// summaryVersion is the version of what FactSet holds and means. Bump it
// when the fact set's fields, which facts are kept (keepFact, factpath's
// kinds, compare's flattening) or the audit rules change, and add a store
// migration whose hook is backfillSnapshotFacts, which re-summarizes every
// stored snapshot when the store is next opened for writing. Until then a
// report ignores the sets of another version and reads those snapshots
// themselves, as it reads snapshots stored before schema 5.
const summaryVersion = 1

func init() { store.RegisterSummarizer(summaryVersion, Summarize) }

// FactSet is what a fleet report needs of one snapshot, made when the
// snapshot is stored (store.RegisterSummarizer) and by Build from
// snapshots in memory, by the same code: its grouping identity, its
// setting and identity facts flattened as compare diffs them (without the
// facts that name a host), and its audit outcomes under every built-in
// workload.
type FactSet struct {
	CPUModel  string         `json:"cpu_model"`
	Microcode string         `json:"microcode"`
	Kernel    string         `json:"kernel"`
	Virt      string         `json:"virt"`
	Facts     []compare.Leaf `json:"-"`
	// Paths and Values are Facts as stored: two lists of strings decode
	// at a third of the cost of a list of objects.
	Paths  []string `json:"paths"`
	Values []string `json:"values"`
	// Audit: workloadKey → the rules that passed or failed.
	Audit map[string][]outcome `json:"audit"`
}

// outcome is one decided audit finding, as much as a report keeps.
type outcome struct {
	Rule     string       `json:"r"`
	Title    string       `json:"t"`
	Severity int          `json:"s"`
	Status   audit.Status `json:"x"`
}

// keepFact: the facts a report compares across hosts. Remembered per path
// (bounded, as device names make paths without limit): classifying the
// ~2,000 leaves of a snapshot was most of the cost of storing one.
func keepFact(p string) bool {
	if v, ok := keepSeen.Load(p); ok {
		return v.(bool)
	}
	k, ok := factpath.KindOf(p)
	keep := ok && (k == factpath.Setting || k == factpath.Identity) && !isPerHost(p)
	if keepSeenN.Add(1) <= 1<<16 {
		keepSeen.Store(p, keep)
	}
	return keep
}

var (
	keepSeen  sync.Map // path → bool
	keepSeenN atomic.Int64
)

// Summarize is a snapshot's FactSet as stored (JSON).
func Summarize(s *snapshot.Snapshot) ([]byte, error) {
	f := factSetOf(s, builtinWorkloads())
	f.Paths, f.Values = make([]string, len(f.Facts)), make([]string, len(f.Facts))
	for i, l := range f.Facts {
		f.Paths[i], f.Values[i] = l.Path, l.Value
	}
	return json.Marshal(f)
}

func factSetOf(s *snapshot.Snapshot, ws []*audit.Workload) *FactSet {
	f := &FactSet{CPUModel: s.CPU.Model, Microcode: s.CPU.Microcode, Kernel: s.Kernel.Release, Virt: s.Host.Virtualization,
		Facts: compare.Leaves(s, keepFact), Audit: map[string][]outcome{}}
	for _, w := range ws {
		o := []outcome{}
		for _, x := range audit.Run(s, w) {
			if x.Status == audit.Fail || x.Status == audit.Pass {
				o = append(o, outcome{Rule: x.Rule, Title: x.Title, Severity: int(x.Severity), Status: x.Status})
			}
		}
		f.Audit[workloadKey(w)] = o
	}
	return f
}

// parseFactSet reads a stored FactSet.
func parseFactSet(doc []byte) (*FactSet, error) {
	var f FactSet
	if err := json.Unmarshal(doc, &f); err != nil {
		return nil, fmt.Errorf("stored snapshot facts: %w", err)
	}
	if len(f.Paths) != len(f.Values) {
		return nil, fmt.Errorf("stored snapshot facts: %d paths but %d values", len(f.Paths), len(f.Values))
	}
	f.Facts = make([]compare.Leaf, len(f.Paths))
	for i, p := range f.Paths {
		f.Facts[i] = compare.Leaf{Path: p, Value: f.Values[i]}
	}
	f.Paths, f.Values = nil, nil
	f.Facts = compare.SortLeaves(f.Facts)
	return &f, nil
}

func builtinWorkloads() []*audit.Workload {
	var out []*audit.Workload
	for _, n := range audit.Workloads() {
		if w, err := audit.LookupWorkload(n); err == nil {
			out = append(out, w)
		}
	}
	return out
}

// workloadKey names what an audit outcome depends on of its workload: a
// user profile that changes one target gets another key, and so is
// audited from the snapshot itself.
func workloadKey(w *audit.Workload) string {
	data, _ := json.Marshal(struct {
		Name, Base string
		Trusted    bool
		Targets    map[string]string
		Skip       map[string]bool
	}{w.Name, w.Base(), w.Trusted, w.Targets, w.Skip})
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:12])
}
