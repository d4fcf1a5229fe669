package monitor

import "github.com/perflab/perflab/internal/run"

// Field is one quantity of a run's monitor series (run.MonitorPoint),
// interpreted once for every reader: `runs show`, compare's monitor diff
// and the run warnings.
type Field struct {
	Name string // JSON name in run.MonitorPoint: "steal_pct", "psi_cpu_pct"
	Unit string // "%", "/s", "KiB" …
	// Get reads the field from a point; ok is false where the point did
	// not record it (a field added after the run was stored, a source the
	// host lacks). A 0 with ok is a measured 0.
	Get func(run.MonitorPoint) (v float64, ok bool)
	// Fallback names the field that stands in for this one in series
	// recorded before it existed: the exact PSI share falls back to the
	// kernel's avg10, which lags by 10–20 s (see In).
	Fallback string
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

// avg10 reads a PSI avg10 where it is a measurement: in a point that also
// has the exact share (the monitor read the pressure file), or in a point
// of a monitor from before the exact share existed. A newer point without
// the share had no PSI (the kernel lacks it, or the read failed), and its
// avg10 is a placeholder 0.
func avg10(get func(run.MonitorPoint) float64, exact func(run.MonitorPoint) *float64) func(run.MonitorPoint) (float64, bool) {
	return func(p run.MonitorPoint) (float64, bool) {
		return get(p), exact(p) != nil || !newerMonitor(p)
	}
}

// newerMonitor reports whether a point was recorded by a monitor that
// leaves out what it could not read (nil, not 0): the one that added the
// exact PSI share, page cache and vmstat fields. Any of them being present
// says so; a host that lacks PSI still has /proc/meminfo.
func newerMonitor(p run.MonitorPoint) bool {
	return p.PSICPUPct != nil || p.PSIMemoryPct != nil || p.PSIIOPct != nil ||
		p.PageCacheKiB != nil || p.DirtyKiB != nil || p.WritebackKiB != nil ||
		p.PgpgInKiBPerS != nil || p.PgpgOutKiBPerS != nil || p.MajFaultsPerS != nil ||
		p.PgScanPerS != nil || p.PgScanDirectPerS != nil || p.PgStealPerS != nil || p.AllocStallsPerS != nil
}

// Fields is every field of run.MonitorPoint but its time stamp.
var Fields = []Field{
	{Name: "user_pct", Unit: "%", Get: always(func(p run.MonitorPoint) float64 { return p.UserPct })},
	{Name: "system_pct", Unit: "%", Get: always(func(p run.MonitorPoint) float64 { return p.SystemPct })},
	{Name: "iowait_pct", Unit: "%", Get: always(func(p run.MonitorPoint) float64 { return p.IOWaitPct })},
	{Name: "irq_pct", Unit: "%", Get: always(func(p run.MonitorPoint) float64 { return p.IRQPct })},
	{Name: "softirq_pct", Unit: "%", Get: always(func(p run.MonitorPoint) float64 { return p.SoftIRQPct })},
	{Name: "steal_pct", Unit: "%", Get: always(func(p run.MonitorPoint) float64 { return p.StealPct })},
	{Name: "idle_pct", Unit: "%", Get: always(func(p run.MonitorPoint) float64 { return p.IdlePct })},
	{Name: "ctxt_per_s", Unit: "/s", Get: always(func(p run.MonitorPoint) float64 { return p.CtxSwitches })},
	{Name: "intr_per_s", Unit: "/s", Get: always(func(p run.MonitorPoint) float64 { return p.Interrupts })},
	{Name: "softirq_per_s", Unit: "/s", Get: always(func(p run.MonitorPoint) float64 { return p.SoftIRQs })},
	{Name: "procs_running", Unit: "tasks", Get: always(func(p run.MonitorPoint) float64 { return float64(p.RunQueue) })},
	{Name: "procs_blocked", Unit: "tasks", Get: always(func(p run.MonitorPoint) float64 { return float64(p.Blocked) })},
	{Name: "mem_available_kib", Unit: "KiB", Get: always(func(p run.MonitorPoint) float64 { return float64(p.MemAvailKiB) })},
	{Name: "cpu_mhz", Unit: "MHz", Get: always(func(p run.MonitorPoint) float64 { return p.CPUMHz })},

	// Pressure: the exact share of each interval's wall time in which a
	// task stalled, or for runs stored before it existed the avg10.
	{Name: "psi_cpu_pct", Unit: "%", Get: optional(func(p run.MonitorPoint) *float64 { return p.PSICPUPct }), Fallback: "psi_cpu_avg10"},
	{Name: "psi_memory_pct", Unit: "%", Get: optional(func(p run.MonitorPoint) *float64 { return p.PSIMemoryPct }), Fallback: "psi_memory_avg10"},
	{Name: "psi_io_pct", Unit: "%", Get: optional(func(p run.MonitorPoint) *float64 { return p.PSIIOPct }), Fallback: "psi_io_avg10"},
	{Name: "psi_cpu_avg10", Unit: "% (avg10)", Get: avg10(func(p run.MonitorPoint) float64 { return p.PSICPU }, func(p run.MonitorPoint) *float64 { return p.PSICPUPct })},
	{Name: "psi_memory_avg10", Unit: "% (avg10)", Get: avg10(func(p run.MonitorPoint) float64 { return p.PSIMemory }, func(p run.MonitorPoint) *float64 { return p.PSIMemoryPct })},
	{Name: "psi_io_avg10", Unit: "% (avg10)", Get: avg10(func(p run.MonitorPoint) float64 { return p.PSIIO }, func(p run.MonitorPoint) *float64 { return p.PSIIOPct })},

	{Name: "page_cache_kib", Unit: "KiB", Get: optionalKiB(func(p run.MonitorPoint) *int64 { return p.PageCacheKiB })},
	{Name: "dirty_kib", Unit: "KiB", Get: optionalKiB(func(p run.MonitorPoint) *int64 { return p.DirtyKiB })},
	{Name: "writeback_kib", Unit: "KiB", Get: optionalKiB(func(p run.MonitorPoint) *int64 { return p.WritebackKiB })},
	{Name: "pgpgin_kib_per_s", Unit: "KiB/s", Get: optional(func(p run.MonitorPoint) *float64 { return p.PgpgInKiBPerS })},
	{Name: "pgpgout_kib_per_s", Unit: "KiB/s", Get: optional(func(p run.MonitorPoint) *float64 { return p.PgpgOutKiBPerS })},
	{Name: "pgmajfault_per_s", Unit: "/s", Get: optional(func(p run.MonitorPoint) *float64 { return p.MajFaultsPerS })},
	{Name: "pgscan_per_s", Unit: "pages/s", Get: optional(func(p run.MonitorPoint) *float64 { return p.PgScanPerS })},
	{Name: "pgscan_direct_per_s", Unit: "pages/s", Get: optional(func(p run.MonitorPoint) *float64 { return p.PgScanDirectPerS })},
	{Name: "pgsteal_per_s", Unit: "pages/s", Get: optional(func(p run.MonitorPoint) *float64 { return p.PgStealPerS })},
	{Name: "allocstall_per_s", Unit: "/s", Get: optional(func(p run.MonitorPoint) *float64 { return p.AllocStallsPerS })},
}

// FieldByName returns the field with that JSON name.
func FieldByName(name string) (Field, bool) {
	for _, f := range Fields {
		if f.Name == name {
			return f, true
		}
	}
	return Field{}, false
}

// MustField is FieldByName for names fixed in code; it panics on a typo
// (which the package's tests then catch).
func MustField(name string) Field {
	f, ok := FieldByName(name)
	if !ok {
		panic("monitor: no field " + name)
	}
	return f
}

// RecordedIn reports whether every non-empty series recorded f in at least
// one point (a read that failed once leaves a gap, not a series without
// the field). With no non-empty series it is false.
func (f Field) RecordedIn(series ...[]run.MonitorPoint) bool {
	any := false
	for _, s := range series {
		if len(s) == 0 {
			continue
		}
		any = true
		has := false
		for _, p := range s {
			if _, ok := f.Get(p); ok {
				has = true
				break
			}
		}
		if !has {
			return false
		}
	}
	return any
}

// In returns the field to read from these series, all together, and
// whether there is one: f itself when every series recorded it, else its
// fallback when every series recorded that (runs stored before f existed:
// exact PSI → avg10), never a mix, so two sides are compared on the same
// quantity.
func (f Field) In(series ...[]run.MonitorPoint) (Field, bool) {
	if f.RecordedIn(series...) {
		return f, true
	}
	if fb, ok := FieldByName(f.Fallback); ok && fb.RecordedIn(series...) {
		return fb, true
	}
	return Field{}, false
}

// Values returns f's recorded values in a series.
func (f Field) Values(points []run.MonitorPoint) []float64 {
	var out []float64
	for _, p := range points {
		if v, ok := f.Get(p); ok {
			out = append(out, v)
		}
	}
	return out
}

// Mean is the mean of f over the points that recorded it; ok is false
// when none did.
func (f Field) Mean(points []run.MonitorPoint) (mean float64, ok bool) {
	v := f.Values(points)
	if len(v) == 0 {
		return 0, false
	}
	var sum float64
	for _, x := range v {
		sum += x
	}
	return sum / float64(len(v)), true
}
