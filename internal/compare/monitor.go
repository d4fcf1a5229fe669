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
	get    func(run.MonitorPoint) float64
	absMin float64 // minimum |other − base|
	relMin float64 // minimum |other/base − 1| (0: not checked)
}

var monFields = []monField{
	{"steal_pct", "%", func(p run.MonitorPoint) float64 { return p.StealPct }, 1, 0},
	{"cpu_mhz", "MHz", func(p run.MonitorPoint) float64 { return p.CPUMHz }, 0, 0.03},
	{"ctxt_per_s", "/s", func(p run.MonitorPoint) float64 { return p.CtxSwitches }, 0, 0.2},
	{"softirq_pct", "%", func(p run.MonitorPoint) float64 { return p.SoftIRQPct }, 1, 0},
	{"softirq_per_s", "/s", func(p run.MonitorPoint) float64 { return p.SoftIRQs }, 0, 0.2},
	{"intr_per_s", "/s", func(p run.MonitorPoint) float64 { return p.Interrupts }, 0, 0.2},
	{"irq_pct", "%", func(p run.MonitorPoint) float64 { return p.IRQPct }, 1, 0},
	{"system_pct", "%", func(p run.MonitorPoint) float64 { return p.SystemPct }, 3, 0},
	{"iowait_pct", "%", func(p run.MonitorPoint) float64 { return p.IOWaitPct }, 2, 0},
	{"procs_running", "tasks", func(p run.MonitorPoint) float64 { return float64(p.RunQueue) }, 1, 0.25},
	{"procs_blocked", "tasks", func(p run.MonitorPoint) float64 { return float64(p.Blocked) }, 1, 0},
	{"psi_cpu_avg10", "%", func(p run.MonitorPoint) float64 { return p.PSICPU }, 2, 0},
	{"psi_memory_avg10", "%", func(p run.MonitorPoint) float64 { return p.PSIMemory }, 2, 0},
	{"psi_io_avg10", "%", func(p run.MonitorPoint) float64 { return p.PSIIO }, 2, 0},
}

// DiffMonitor compares the monitor series of two sets of runs. Fields
// with no points on either side, or all zero on both (cpu_mhz on a VM
// without cpufreq), are left out.
func DiffMonitor(base, other []*run.Run) []MonDelta {
	var out []MonDelta
	for _, f := range monFields {
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

func monValues(runs []*run.Run, f monField) []float64 {
	var v []float64
	for _, r := range runs {
		for _, p := range r.Monitor {
			v = append(v, f.get(p))
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
