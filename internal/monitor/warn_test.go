package monitor

import (
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/run"
)

func TestWarnings(t *testing.T) {
	quiet := []run.MonitorPoint{
		{UserPct: 50, PSICPU: 2, RunQueue: 2, PSICPUPct: ptr(1.0), AllocStallsPerS: ptr(0.0), PgScanDirectPerS: ptr(0.0), PgScanPerS: ptr(5000.0)},
		{UserPct: 50, PSICPU: 3, RunQueue: 2, PSICPUPct: ptr(2.0), AllocStallsPerS: ptr(0.0), PgScanDirectPerS: ptr(0.0), PgScanPerS: ptr(3000.0)},
	}
	if w := Warnings(quiet); len(w) != 0 {
		t.Errorf("quiet host (kswapd reclaiming in the background is quiet) warned: %v", w)
	}
	busy := []run.MonitorPoint{
		{PSICPU: 90, RunQueue: 9, StealPct: 12, PSIMemory: 20, IOWaitPct: 30},
		{PSICPU: 96, RunQueue: 8, StealPct: 8, PSIMemory: 10, IOWaitPct: 20},
	}
	w := strings.Join(Warnings(busy), "\n")
	for _, want := range []string{"10.0% CPU steal", "93% of the time (PSI cpu), run queue 8.5", "stalled on memory 15%", "25% iowait"} {
		if !strings.Contains(w, want) {
			t.Errorf("warnings lack %q:\n%s", want, w)
		}
	}
	if Warnings(nil) != nil {
		t.Error("warnings without a series")
	}
}

// Exact pressure, where a run has it, decides; avg10 is ignored.
func TestWarningsPreferExactPressure(t *testing.T) {
	pts := []run.MonitorPoint{
		{PSICPU: 29, PSIMemory: 12, PSICPUPct: ptr(0.0), PSIMemoryPct: ptr(0.0)},
		{PSICPU: 26, PSIMemory: 11, PSICPUPct: ptr(0.0), PSIMemoryPct: ptr(0.0)},
	}
	if w := Warnings(pts); len(w) != 0 {
		t.Errorf("lagging avg10 warned although nothing stalled: %v", w)
	}
	pts[0].PSIMemoryPct, pts[1].PSIMemoryPct = ptr(9.0), ptr(7.0)
	if w := strings.Join(Warnings(pts), "\n"); !strings.Contains(w, "stalled on memory 8%") {
		t.Errorf("exact memory pressure: %q", w)
	}
}

func TestWarningsDirectReclaim(t *testing.T) {
	// One allocation in 4 s entered direct reclaim and scanned 32 pages.
	pts := []run.MonitorPoint{
		{AllocStallsPerS: ptr(0.0), PgScanDirectPerS: ptr(0.0)},
		{AllocStallsPerS: ptr(1.0), PgScanDirectPerS: ptr(32.0)},
		{AllocStallsPerS: ptr(0.0), PgScanDirectPerS: ptr(0.0)},
		{AllocStallsPerS: ptr(0.0), PgScanDirectPerS: ptr(0.0)},
	}
	w := strings.Join(Warnings(pts), "\n")
	if !strings.Contains(w, "memory reclaim stalled tasks: 0.25 allocations/s entered direct reclaim (allocstall), 8 pages/s scanned by it on average — the host was short of free memory; results include reclaim") {
		t.Errorf("direct reclaim: %q", w)
	}
	// Direct scanning without an allocstall (node reclaim with
	// vm.zone_reclaim_mode) is still reclaim in the allocating task.
	pts = []run.MonitorPoint{{AllocStallsPerS: ptr(0.0), PgScanDirectPerS: ptr(64.0)}}
	if w := strings.Join(Warnings(pts), "\n"); !strings.Contains(w, "0 allocations/s entered direct reclaim (allocstall), 64 pages/s") {
		t.Errorf("direct scanning: %q", w)
	}
	// A run stored before the field existed says nothing about reclaim.
	if w := Warnings([]run.MonitorPoint{{UserPct: 10}}); len(w) != 0 {
		t.Errorf("old run: %v", w)
	}
}
