package monitor

import (
	"fmt"

	"github.com/perflab/perflab/internal/run"
)

// Thresholds above which a run's series says the host was not quiet. They
// are deliberately loose: the point is to flag runs whose spread is
// explained by something else on the host, not to grade every percent.
const (
	warnStealPct  = 5  // mean steal: the hypervisor gave the CPU to another guest
	warnPSICPU    = 25 // mean PSI cpu some avg10: runnable tasks waited for a CPU
	warnIOWaitPct = 10 // mean iowait outside disk probes: someone else is doing I/O
	warnPSIMemory = 5  // mean PSI memory some: reclaim or swapping stalled tasks
)

// Warnings reads a run's monitor series and says, in one line each, what
// on the host competed with the probe. The probe's own load also shows in
// the series, so only signals the probe cannot cause by itself on an
// otherwise idle host are used (steal, memory stalls), plus CPU pressure
// and iowait, which a probe can cause, and whose lines say so.
func Warnings(points []run.MonitorPoint) []string {
	if len(points) == 0 {
		return nil
	}
	var steal, psiCPU, psiMem, iowait, rq float64
	for _, p := range points {
		steal += p.StealPct
		psiCPU += p.PSICPU
		psiMem += p.PSIMemory
		iowait += p.IOWaitPct
		rq += float64(p.RunQueue)
	}
	n := float64(len(points))
	steal, psiCPU, psiMem, iowait, rq = steal/n, psiCPU/n, psiMem/n, iowait/n, rq/n
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
	if iowait > warnIOWaitPct {
		out = append(out, fmt.Sprintf("%.0f%% iowait on average — expected for a disk probe, otherwise other I/O ran alongside", iowait))
	}
	return out
}
