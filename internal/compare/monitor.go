package compare

import (
	"math"

	"github.com/perflab/perflab/internal/monitor"
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

// monField is a monitored quantity (read as monitor.Fields says) and the
// smallest change that matters: an absolute change in percentage points
// for shares, relative for rates.
type monField struct {
	name   string  // monitor.Field name
	absMin float64 // minimum |other − base|
	relMin float64 // minimum |other/base − 1| (0: not checked)
}

// monFields are the series compared. Every one of them is one where more
// means a busier or more constrained host (cpu_mhz aside, which explain
// inverts), because a notable increase is taken to explain metrics that
// got worse. page_cache_kib and mem_available_kib are therefore not here:
// more of either is a handicap removed, not added; a cache that misses
// shows as pgpgin_kib_per_s instead.
var monFields = []monField{
	{name: "steal_pct", absMin: 1},
	{name: "cpu_mhz", relMin: 0.03},
	{name: "ctxt_per_s", relMin: 0.2},
	{name: "softirq_pct", absMin: 1},
	{name: "softirq_per_s", relMin: 0.2},
	{name: "intr_per_s", relMin: 0.2},
	{name: "irq_pct", absMin: 1},
	{name: "system_pct", absMin: 3},
	{name: "iowait_pct", absMin: 2},
	{name: "procs_running", absMin: 1, relMin: 0.25},
	{name: "procs_blocked", absMin: 1},

	// Pressure: 2 points of the time stalled. The exact share is compared
	// when every run of both sides recorded it, else its avg10 fallback
	// (runs stored before it existed), never both (monitor.Field.In).
	{name: "psi_cpu_pct", absMin: 2},
	{name: "psi_memory_pct", absMin: 2},
	{name: "psi_io_pct", absMin: 2},

	// Dirty pages and writeback (seed 001: writeback aggressive enough to
	// slow an mmap writer 2×). Dirty rises and falls with the flusher's
	// 5-second cycle by tens of percent on an idle host, so only +50% and
	// at least 32 MiB count; pages under writeback are ~0 on a quiet host,
	// and 8 MiB in flight on average is a sustained stream.
	{name: "dirty_kib", absMin: 32 << 10, relMin: 0.5},
	{name: "writeback_kib", absMin: 8 << 10, relMin: 0.5},
	// Block I/O comes in flusher bursts, so per-second rates swing widely:
	// +50% and at least 1 MiB/s, a rate any disk notices.
	{name: "pgpgout_kib_per_s", absMin: 1 << 10, relMin: 0.5},
	{name: "pgpgin_kib_per_s", absMin: 1 << 10, relMin: 0.5},
	// A major fault waits for a read (0.1–10 ms); 10 more a second is
	// up to a tenth of a CPU-second spent waiting.
	{name: "pgmajfault_per_s", absMin: 10, relMin: 0.5},
	// Reclaim. kswapd scanning in the background is normal on a host whose
	// page cache has filled memory, so scanning and reclaiming count from
	// 1000 pages/s (~4 MiB/s) and +50%. Direct reclaim stalls the
	// allocating task, so it counts from one batch a second (32 pages,
	// SWAP_CLUSTER_MAX) and from one stall a second.
	{name: "pgscan_per_s", absMin: 1000, relMin: 0.5},
	{name: "pgsteal_per_s", absMin: 1000, relMin: 0.5},
	{name: "pgscan_direct_per_s", absMin: 32, relMin: 0.5},
	{name: "allocstall_per_s", absMin: 1, relMin: 0.5},
}

// DiffMonitor compares the monitor series of two sets of runs. A field is
// compared only when every run with a series, on both sides, recorded it:
// a run from before a field existed (or from a host without its source)
// has not measured 0. Fields with no points on either side, or all zero on
// both (cpu_mhz on a VM without cpufreq), are left out.
func DiffMonitor(base, other []*run.Run) []MonDelta {
	var series [][]run.MonitorPoint
	for _, r := range append(append([]*run.Run(nil), base...), other...) {
		series = append(series, r.Monitor)
	}
	var out []MonDelta
	for _, mf := range monFields {
		f, ok := monitor.MustField(mf.name).In(series...)
		if !ok {
			continue
		}
		a, b := monValues(base, f), monValues(other, f)
		if len(a) == 0 || len(b) == 0 || (allZero(a) && allZero(b)) {
			continue
		}
		d := MonDelta{Field: f.Name, Unit: f.Unit, Base: stats.Mean(a), Other: stats.Mean(b), Points: [2]int{len(a), len(b)}}
		_, d.P = stats.MannWhitney(a, b)
		diff := math.Abs(d.Other - d.Base)
		big := diff >= mf.absMin
		if mf.relMin > 0 {
			rel := math.Inf(1)
			if d.Base != 0 {
				rel = diff / math.Abs(d.Base)
			}
			big = big && rel >= mf.relMin
		}
		d.Notable = big && diff > 0 && d.P < 0.05
		out = append(out, d)
	}
	return out
}

// monValues are f's recorded values over all points of the runs.
func monValues(runs []*run.Run, f monitor.Field) []float64 {
	var v []float64
	for _, r := range runs {
		v = append(v, f.Values(r.Monitor)...)
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
