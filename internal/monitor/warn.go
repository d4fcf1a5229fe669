package monitor

import (
	"fmt"

	"github.com/perflab/perflab/internal/run"
)

// Thresholds above which a run's series says the host was not quiet. They
// are deliberately loose: the point is to flag runs whose spread is
// explained by something else on the host, not to grade every percent.
// Direct reclaim has no threshold: on a host with enough free memory it
// does not happen at all, and each occurrence stalled an allocating task.
const (
	warnStealPct  = 5  // mean steal: the hypervisor gave the CPU to another guest
	warnPSICPU    = 25 // mean PSI cpu some: runnable tasks waited for a CPU
	warnIOWaitPct = 10 // mean iowait outside disk probes: someone else is doing I/O
	warnPSIMemory = 5  // mean PSI memory some: reclaim or swapping stalled tasks
)

// Warnings reads a run's monitor series and says, in one line each, what
// on the host competed with the probe. The probe's own load also shows in
// the series, so only signals the probe cannot cause by itself on an
// otherwise idle host are used (steal, memory stalls, direct reclaim),
// plus CPU pressure and iowait, which a probe can cause, and whose lines
// say so. Pressure is the exact share of each interval when the run has
// it, else (runs stored before it was recorded) the lagging avg10.
func Warnings(points []run.MonitorPoint) []string {
	if len(points) == 0 {
		return nil
	}
	steal := mean(points, "steal_pct")
	iowait := mean(points, "iowait_pct")
	rq := mean(points, "procs_running")
	psiCPU := mean(points, "psi_cpu_pct")
	psiMem := mean(points, "psi_memory_pct")
	stalls := mean(points, "allocstall_per_s")
	direct := mean(points, "pgscan_direct_per_s")
	var out []string
	if steal > warnStealPct {
		out = append(out, fmt.Sprintf("host busy: %.1f%% CPU steal on average — the hypervisor ran other guests on these CPUs; results vary with the neighbours", steal))
	}
	if psiCPU > warnPSICPU {
		out = append(out, fmt.Sprintf("host busy: tasks waited for a CPU %.0f%% of the time (PSI cpu), run queue %.1f on average — unless the probe itself runs more threads than CPUs, other work competed with it; rerun on a quiet host", psiCPU, rq))
	}
	if psiMem > warnPSIMemory {
		out = append(out, fmt.Sprintf("memory pressure: tasks stalled on memory %.0f%% of the time (PSI memory) — reclaim or swapping during the run", psiMem))
	}
	if stalls > 0 || direct > 0 {
		out = append(out, fmt.Sprintf("memory reclaim stalled tasks: %.3g allocations/s entered direct reclaim (allocstall), %.3g pages/s scanned by it on average — the host was short of free memory; results include reclaim", stalls, direct))
	}
	if iowait > warnIOWaitPct {
		out = append(out, fmt.Sprintf("%.0f%% iowait on average — expected for a disk probe, otherwise other I/O ran alongside", iowait))
	}
	return out
}

// mean is the mean of a field over the points that recorded it, read the
// one way every reader does (Field.In: the exact PSI share, or avg10 for
// runs stored before it); 0 when the series has neither.
func mean(points []run.MonitorPoint, name string) float64 {
	f, ok := MustField(name).In(points)
	if !ok {
		return 0
	}
	m, _ := f.Mean(points)
	return m
}
