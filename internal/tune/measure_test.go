package tune

import (
	"context"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/audit"
	"github.com/perflab/perflab/internal/bench"
	"github.com/perflab/perflab/internal/hostfs"
	"github.com/perflab/perflab/internal/probe"
	"github.com/perflab/perflab/internal/probe/probetest"
	"github.com/perflab/perflab/internal/run"
)

// swapProbe is faster by 10% when vm.swappiness reads 10, on a host that
// drifts ±10% from run to run.
func swapProbe(fs hostfs.FS, rng *rand.Rand) *probetest.Fake {
	return &probetest.Fake{ProbeName: "fake", Rng: rng, Drift: 0.1,
		Metric: []run.Metric{{Name: "ops", Unit: "ops/s", Better: run.Higher}},
		Sample: func(rng *rand.Rand) (map[string]float64, error) {
			b, _ := fs.ReadFile("/proc/sys/vm/swappiness")
			v := 900.0
			if strings.TrimSpace(string(b)) == "10" {
				v = 1000
			}
			return map[string]float64{"ops": v * (1 + 0.005*rng.NormFloat64())}, nil
		}}
}

// tune apply --measure: the measured effect of the plan with its interval,
// and the host left tuned and journaled, so revert restores it.
func TestMeasureApply(t *testing.T) {
	fs := fakeRoot(t)
	h := Host{FS: fs, Dir: t.TempDir()}
	plan := Plan{Workload: "db", Items: []Item{{Rule: "MEM-SWAPPINESS", Change: audit.Change{Kind: audit.KindSysctl, Target: "vm.swappiness", Value: "10"}}}}
	p := swapProbe(fs, rand.New(rand.NewPCG(3, 3)))
	m, err := h.MeasureApply(context.Background(), plan, ApplyOptions{Source: "tune apply db"},
		[]bench.Item{{Probe: p, Params: probe.Params{}, MaxRuns: 6}},
		bench.InterleaveOptions{Blocks: 6, MinBlocks: 6, Seed: 5},
		bench.Options{MinRuns: 6, MaxRuns: 6, Budget: time.Hour, NoNoiseCheck: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Effects) != 1 {
		t.Fatalf("effects %+v", m.Effects)
	}
	e := m.Effects[0]
	if e.State != "after" || e.Base != "before" || !(e.Lo < 1000.0/900 && 1000.0/900 < e.Hi) || e.Lo <= 1 {
		t.Errorf("effect %+v, want after/before ≈ 1.11 with an interval above 1", e)
	}
	if got := readN(t, fs, plan.Items[0].Change); got != "10" || len(m.Applied) != 1 {
		t.Errorf("swappiness %s, applied %v: the host must be left tuned", got, m.Applied)
	}
	if _, err := h.Revert(RevertOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := readN(t, fs, plan.Items[0].Change); got != "60" {
		t.Errorf("swappiness %s after revert, want 60", got)
	}
	// The session's own flips leave no history: only the user's revert is
	// archived.
	if hist, _ := filepath.Glob(filepath.Join(h.Dir, "journal-*.reverted.json")); len(hist) != 1 {
		t.Errorf("%d archived journals, want the one of the user's revert", len(hist))
	}
	// A journal with changes is refused: "before" would revert them.
	if _, err := h.Apply(context.Background(), plan, ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.MeasureApply(context.Background(), plan, ApplyOptions{}, nil, bench.InterleaveOptions{}, bench.Options{}); err == nil || !strings.Contains(err.Error(), "tune revert") {
		t.Errorf("active journal: %v", err)
	}
}
