package compare

import (
	"math"

	"github.com/perflab/perflab/internal/run"
	"github.com/perflab/perflab/internal/stats"
)

// MonDelta compares one monitor series (1-second host activity samples
// recorded during the runs) between the baseline and another side.
type MonDelta struct {
	Field  string  `json:"field"` // JSON name in run.MonitorPoint: steal_pct, ctxt_per_s …
	Unit   string  `json:"unit"`
	Base   float64 `json:"base"`  // mean over all points of the side's runs
	Other  float64 `json:"other"` // idem
	Points [2]int  `json:"points"`
	// P is a Mann–Whitney p-value over the points. Points one second apart
	// are autocorrelated, so it overstates significance; Notable also
	// requires a change large enough to matter (see monFields).
	P       float64 `json:"p"`
	Notable bool    `json:"notable"`
}

// monField is a monitored quantity and the smallest change that matters:
// an absolute change in percentage points for shares, relative for rates.
type monField struct {
	name   string
	unit   string
	get    func(run.MonitorPoint) (v float64, ok bool) // ok: recorded in this point
	absMin float64                                     // minimum |other − base|
	relMin float64                                     // minimum |other/base − 1| (0: not checked)
	// replacedBy names the field that supersedes this one when it can be
	// compared: the lagging PSI avg10 gives way to the exact share.
	replacedBy string
}

func always(get func(run.MonitorPoint) float64) func(run.MonitorPoint) (float64, bool) {
	return func(p run.MonitorPoint) (float64, bool) { return get(p), true }
}

func optional(get func(run.MonitorPoint) *float64) func(run.MonitorPoint) (float64, bool) {
	return func(p run.MonitorPoint) (float64, bool) {
		if v := get(p); v != nil {
			return *v, true
		}
		return 0, false
	}
}

func optionalKiB(get func(run.MonitorPoint) *int64) func(run.MonitorPoint) (float64, bool) {
	return func(p run.MonitorPoint) (float64, bool) {
		if v := get(p); v != nil {
			return float64(*v), true
		}
		return 0, false
	}
}

// monFields are the series compared. Every one of them is one where more
// means a busier or more constrained host (cpu_mhz aside, which explain
// inverts), because a notable increase is taken to explain metrics that
// got worse. page_cache_kib and mem_available_kib are therefore not here:
// more of either is a handicap removed, not added; a cache that misses
// shows as pgpgin_kib_per_s instead.
var monFields = []monField{
	{name: "steal_pct", unit: "%", get: always(func(p run.MonitorPoint) float64 { return p.StealPct }), absMin: 1},
	{name: "cpu_mhz", unit: "MHz", get: always(func(p run.MonitorPoint) float64 { return p.CPUMHz }), relMin: 0.03},
	{name: "ctxt_per_s", unit: "/s", get: always(func(p run.MonitorPoint) float64 { return p.CtxSwitches }), relMin: 0.2},
	{name: "softirq_pct", unit: "%", get: always(func(p run.MonitorPoint) float64 { return p.SoftIRQPct }), absMin: 1},
	{name: "softirq_per_s", unit: "/s", get: always(func(p run.MonitorPoint) float64 { return p.SoftIRQs }), relMin: 0.2},
	{name: "intr_per_s", unit: "/s", get: always(func(p run.MonitorPoint) float64 { return p.Interrupts }), relMin: 0.2},
	{name: "irq_pct", unit: "%", get: always(func(p run.MonitorPoint) float64 { return p.IRQPct }), absMin: 1},
	{name: "system_pct", unit: "%", get: always(func(p run.MonitorPoint) float64 { return p.SystemPct }), absMin: 3},
	{name: "iowait_pct", unit: "%", get: always(func(p run.MonitorPoint) float64 { return p.IOWaitPct }), absMin: 2},
	{name: "procs_running", unit: "tasks", get: always(func(p run.MonitorPoint) float64 { return float64(p.RunQueue) }), absMin: 1, relMin: 0.25},
	{name: "procs_blocked", unit: "tasks", get: always(func(p run.MonitorPoint) float64 { return float64(p.Blocked) }), absMin: 1},

	// Pressure: 2 points of the time stalled, as for avg10. The exact
	// share is compared when every run of both sides recorded it, the
	// avg10 otherwise (runs stored before it existed), never both.
	{name: "psi_cpu_pct", unit: "%", get: optional(func(p run.MonitorPoint) *float64 { return p.PSICPUPct }), absMin: 2},
	{name: "psi_memory_pct", unit: "%", get: optional(func(p run.MonitorPoint) *float64 { return p.PSIMemoryPct }), absMin: 2},
	{name: "psi_io_pct", unit: "%", get: optional(func(p run.MonitorPoint) *float64 { return p.PSIIOPct }), absMin: 2},
	{name: "psi_cpu_avg10", unit: "%", get: always(func(p run.MonitorPoint) float64 { return p.PSICPU }), absMin: 2, replacedBy: "psi_cpu_pct"},
	{name: "psi_memory_avg10", unit: "%", get: always(func(p run.MonitorPoint) float64 { return p.PSIMemory }), absMin: 2, replacedBy: "psi_memory_pct"},
	{name: "psi_io_avg10", unit: "%", get: always(func(p run.MonitorPoint) float64 { return p.PSIIO }), absMin: 2, replacedBy: "psi_io_pct"},

	// Dirty pages and writeback (seed 001: writeback aggressive enough to
	// slow an mmap writer 2×). Dirty rises and falls with the flusher's
	// 5-second cycle by tens of percent on an idle host, so only +50% and
	// at least 32 MiB count; pages under writeback are ~0 on a quiet host,
	// and 8 MiB in flight on average is a sustained stream.
	{name: "dirty_kib", unit: "KiB", get: optionalKiB(func(p run.MonitorPoint) *int64 { return p.DirtyKiB }), absMin: 32 << 10, relMin: 0.5},
	{name: "writeback_kib", unit: "KiB", get: optionalKiB(func(p run.MonitorPoint) *int64 { return p.WritebackKiB }), absMin: 8 << 10, relMin: 0.5},
	// Block I/O comes in flusher bursts, so per-second rates swing widely:
	// +50% and at least 1 MiB/s, a rate any disk notices.
	{name: "pgpgout_kib_per_s", unit: "KiB/s", get: optional(func(p run.MonitorPoint) *float64 { return p.PgpgOutKiBPerS }), absMin: 1 << 10, relMin: 0.5},
	{name: "pgpgin_kib_per_s", unit: "KiB/s", get: optional(func(p run.MonitorPoint) *float64 { return p.PgpgInKiBPerS }), absMin: 1 << 10, relMin: 0.5},
	// A major fault waits for a read (0.1–10 ms); 10 more a second is
	// up to a tenth of a CPU-second spent waiting.
	{name: "pgmajfault_per_s", unit: "/s", get: optional(func(p run.MonitorPoint) *float64 { return p.MajFaultsPerS }), absMin: 10, relMin: 0.5},
	// Reclaim. kswapd scanning in the background is normal on a host whose
	// page cache has filled memory, so scanning and reclaiming count from
	// 1000 pages/s (~4 MiB/s) and +50%. Direct reclaim stalls the
	// allocating task, so it counts from one batch a second (32 pages,
	// SWAP_CLUSTER_MAX) and from one stall a second.
	{name: "pgscan_per_s", unit: "pages/s", get: optional(func(p run.MonitorPoint) *float64 { return p.PgScanPerS }), absMin: 1000, relMin: 0.5},
	{name: "pgsteal_per_s", unit: "pages/s", get: optional(func(p run.MonitorPoint) *float64 { return p.PgStealPerS }), absMin: 1000, relMin: 0.5},
	{name: "pgscan_direct_per_s", unit: "pages/s", get: optional(func(p run.MonitorPoint) *float64 { return p.PgScanDirectPerS }), absMin: 32, relMin: 0.5},
	{name: "allocstall_per_s", unit: "/s", get: optional(func(p run.MonitorPoint) *float64 { return p.AllocStallsPerS }), absMin: 1, relMin: 0.5},
}

// DiffMonitor compares the monitor series of two sets of runs. A field is
// compared only when every run with a series, on both sides, recorded it:
// a run from before a field existed (or from a host without its source)
// has not measured 0. Fields with no points on either side, or all zero on
// both (cpu_mhz on a VM without cpufreq), are left out.
func DiffMonitor(base, other []*run.Run) []MonDelta {
	usable := func(f monField) bool { return recordedByAll(base, f) && recordedByAll(other, f) }
	byName := map[string]monField{}
	for _, f := range monFields {
		byName[f.name] = f
	}
	var out []MonDelta
	for _, f := range monFields {
		if !usable(f) {
			continue
		}
		if r, ok := byName[f.replacedBy]; ok && usable(r) {
			continue
		}
		a, b := monValues(base, f), monValues(other, f)
		if len(a) == 0 || len(b) == 0 || (allZero(a) && allZero(b)) {
			continue
		}
		d := MonDelta{Field: f.name, Unit: f.unit, Base: mean(a), Other: mean(b), Points: [2]int{len(a), len(b)}}
		_, d.P = stats.MannWhitney(a, b)
		diff := math.Abs(d.Other - d.Base)
		big := diff >= f.absMin
		if f.relMin > 0 {
			rel := math.Inf(1)
			if d.Base != 0 {
				rel = diff / math.Abs(d.Base)
			}
			big = big && rel >= f.relMin
		}
		d.Notable = big && diff > 0 && d.P < 0.05
		out = append(out, d)
	}
	return out
}

// recordedByAll reports whether every run that has a monitor series has
// f in at least one of its points (a read that failed once leaves a gap,
// not a run without the field).
func recordedByAll(runs []*run.Run, f monField) bool {
	for _, r := range runs {
		if len(r.Monitor) == 0 {
			continue
		}
		has := false
		for _, p := range r.Monitor {
			if _, ok := f.get(p); ok {
				has = true
				break
			}
		}
		if !has {
			return false
		}
	}
	return true
}

func monValues(runs []*run.Run, f monField) []float64 {
	var v []float64
	for _, r := range runs {
		for _, p := range r.Monitor {
			if x, ok := f.get(p); ok {
				v = append(v, x)
			}
		}
	}
	return v
}

func allZero(xs []float64) bool {
	for _, x := range xs {
		if x != 0 {
			return false
		}
	}
	return true
}

func mean(xs []float64) float64 {
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}
