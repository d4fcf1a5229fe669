package compare

import (
	"math/rand/v2"
	"testing"

	"github.com/perflab/perflab/internal/run"
)

// vmPoints is a 20-second series with the page-cache and reclaim fields
// recorded, around the given dirty KiB, writeback KiB, pgpgout KiB/s and
// direct-reclaim stalls per second.
func vmPoints(rng *rand.Rand, dirty, writeback, pgpgout, stalls float64) []run.MonitorPoint {
	var pts []run.MonitorPoint
	for i := 0; i < 20; i++ {
		j := func(x float64) float64 { return x * (0.8 + 0.4*rng.Float64()) }
		pts = append(pts, run.MonitorPoint{
			T: float64(i), CtxSwitches: 1000 + 10*rng.Float64(),
			PSICPU: 1, PSICPUPct: ptr(rng.Float64()),
			DirtyKiB: ptr(int64(j(dirty))), WritebackKiB: ptr(int64(j(writeback))), PageCacheKiB: ptr(int64(4 << 20)),
			PgpgOutKiBPerS: ptr(j(pgpgout)), PgpgInKiBPerS: ptr(j(100)), MajFaultsPerS: ptr(j(1)),
			PgScanPerS: ptr(j(stalls * 200)), PgStealPerS: ptr(j(stalls * 150)),
			PgScanDirectPerS: ptr(j(stalls * 64)), AllocStallsPerS: ptr(j(stalls)),
		})
	}
	return pts
}

func monDelta(ds []MonDelta, field string) *MonDelta {
	for i := range ds {
		if ds[i].Field == field {
			return &ds[i]
		}
	}
	return nil
}

// Seed 001: writeback aggressive enough to slow an application 2×. Dirty
// pages, pages under writeback, block writes and direct reclaim all grew;
// compare must mark them notable, and keep quiet about what did not move.
func TestDiffMonitorWritebackAndReclaim(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	base := &run.Run{ID: "a", Monitor: vmPoints(rng, 40<<10, 0, 2<<10, 0)}
	other := &run.Run{ID: "b", Monitor: vmPoints(rng, 400<<10, 30<<10, 80<<10, 20)}
	ds := DiffMonitor([]*run.Run{base}, []*run.Run{other})
	for _, f := range []string{"dirty_kib", "writeback_kib", "pgpgout_kib_per_s", "pgscan_per_s", "pgsteal_per_s", "pgscan_direct_per_s", "allocstall_per_s"} {
		if d := monDelta(ds, f); d == nil || !d.Notable || !(d.Other > d.Base) {
			t.Errorf("%s: %+v, want a notable increase", f, d)
		}
	}
	for _, f := range []string{"ctxt_per_s", "pgpgin_kib_per_s", "pgmajfault_per_s", "psi_cpu_pct"} {
		if d := monDelta(ds, f); d == nil || d.Notable {
			t.Errorf("%s did not change: %+v", f, d)
		}
	}
	// More page cache is not a handicap, so it is not a series that can
	// explain a slowdown.
	if d := monDelta(ds, "page_cache_kib"); d != nil {
		t.Errorf("page_cache_kib compared: %+v", d)
	}
}

// Small moves in a quiet host's dirty pages (the flusher's cycle) are not
// notable even when consistent.
func TestDiffMonitorDirtyNoise(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 2))
	base := &run.Run{ID: "a", Monitor: vmPoints(rng, 40<<10, 0, 1<<10, 0)}
	other := &run.Run{ID: "b", Monitor: vmPoints(rng, 55<<10, 0, 1<<10, 0)} // +37%, +15 MiB
	if d := monDelta(DiffMonitor([]*run.Run{base}, []*run.Run{other}), "dirty_kib"); d == nil || d.Notable {
		t.Errorf("dirty +15 MiB: %+v", d)
	}
}

// A run stored before the new fields existed has not measured 0 dirty
// pages or 0% CPU pressure: the fields are not compared, and PSI falls
// back to avg10 on both sides.
func TestDiffMonitorOldRuns(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	var old []run.MonitorPoint
	for i := 0; i < 20; i++ {
		old = append(old, run.MonitorPoint{T: float64(i), CtxSwitches: 1000 + 10*rng.Float64(), PSICPU: 30 + rng.Float64()})
	}
	cur := vmPoints(rng, 400<<10, 30<<10, 80<<10, 20) // PSICPU (avg10) 1, PSICPUPct < 1
	ds := DiffMonitor([]*run.Run{{ID: "old", Monitor: old}}, []*run.Run{{ID: "new", Monitor: cur}})
	for _, f := range []string{"dirty_kib", "writeback_kib", "pgpgout_kib_per_s", "allocstall_per_s", "psi_cpu_pct"} {
		if d := monDelta(ds, f); d != nil {
			t.Errorf("%s compared with a run that did not record it: %+v", f, d)
		}
	}
	if d := monDelta(ds, "psi_cpu_avg10"); d == nil || !d.Notable || d.Base < 30 || d.Other != 1 {
		t.Errorf("psi_cpu_avg10 fallback: %+v", d)
	}
	// Nor when only some runs of a side recorded it: the mean would be
	// of other runs than the side's.
	mixed := []*run.Run{{ID: "old", Monitor: old}, {ID: "a", Monitor: vmPoints(rng, 40<<10, 0, 2<<10, 0)}}
	if d := monDelta(DiffMonitor(mixed, []*run.Run{{ID: "new", Monitor: cur}}), "dirty_kib"); d != nil {
		t.Errorf("dirty_kib compared although one base run lacks it: %+v", d)
	}
	// A run without any series (monitoring off) does not block the rest.
	ds = DiffMonitor([]*run.Run{{ID: "a", Monitor: vmPoints(rng, 40<<10, 0, 2<<10, 0)}, {ID: "off"}}, []*run.Run{{ID: "b", Monitor: cur}})
	if d := monDelta(ds, "dirty_kib"); d == nil || !d.Notable {
		t.Errorf("dirty_kib with an unmonitored run on the side: %+v", d)
	}
}

// When both sides have the exact pressure share, the lagging avg10 is not
// compared: the other side's avg10 is high only because a busy probe ran
// just before, and no task waited during these runs.
func TestDiffMonitorPrefersExactPSI(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	a, b := vmPoints(rng, 40<<10, 0, 1<<10, 0), vmPoints(rng, 40<<10, 0, 1<<10, 0)
	for i := range b {
		b[i].PSICPU = 28 - float64(i)
	}
	ds := DiffMonitor([]*run.Run{{ID: "a", Monitor: a}}, []*run.Run{{ID: "b", Monitor: b}})
	if d := monDelta(ds, "psi_cpu_avg10"); d != nil {
		t.Errorf("avg10 compared although the exact share exists: %+v", d)
	}
	if d := monDelta(ds, "psi_cpu_pct"); d == nil || d.Notable {
		t.Errorf("psi_cpu_pct: %+v", d)
	}
}

// The knowledge base must turn those deltas into named causes: a disk
// slowdown with writeback growing is put down to writeback, a memory
// slowdown with direct reclaim to reclaim.
func TestExplainNamesWritebackAndReclaim(t *testing.T) {
	for _, tc := range []struct {
		probe, metric, unit string
		dirty, wb, out, st  float64
		want                string
	}{
		{"disk", "rand_write", "IOPS", 400 << 10, 30 << 10, 80 << 10, 0, "writeback"},
		{"memory.bandwidth", "read.t1", "GB/s", 40 << 10, 0, 2 << 10, 20, "reclaim"},
	} {
		rng := rand.New(rand.NewPCG(3, 3))
		a := mkRun("a", tc.probe, "h", metricSpec{tc.metric, tc.unit, run.Higher, noisy(rng, 10, 1000, 0.003)})
		b := mkRun("b", tc.probe, "h", metricSpec{tc.metric, tc.unit, run.Higher, noisy(rng, 10, 700, 0.003)})
		a.Monitor = vmPoints(rng, 40<<10, 0, 2<<10, 0)
		b.Monitor = vmPoints(rng, tc.dirty, tc.wb, tc.out, tc.st)
		c, err := Compare([]Side{side("A", replicate(a, 3, 0.003, 1)...), side("B", replicate(b, 3, 0.003, 2)...)}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		var knobs []string
		found := false
		for _, cause := range c.Pairs[0].Causes {
			knobs = append(knobs, cause.Knob)
			if cause.Knob == tc.want && cause.Source == "monitor" && cause.Supported() {
				found = true
			}
		}
		if !found {
			t.Errorf("%s slowdown: causes %v, want a supported %q", tc.probe, knobs, tc.want)
		}
	}
}
