// Package monitor samples host activity from /proc while a benchmark runs,
// so that a run carries the evidence needed to trust or distrust its
// numbers: a probe that measured 20% less on a host with 15% steal, heavy
// iowait, a memory-pressure stall or another process on the run queue is
// explained by the series recorded next to it, not by guesswork afterwards.
//
// Each point is the difference of two readings of cumulative kernel counters
// (/proc/stat CPU time by state, context switches, interrupts, softirqs)
// plus instantaneous values (procs_running, procs_blocked, MemAvailable, PSI
// avg10, cpufreq scaling_cur_freq). Everything is read through hostfs and
// parsed by prometheus/procfs; only scaling_cur_freq, a one-number sysfs file
// procfs/sysfs would read with far more work than needed, is read directly.
//
// Cost: one sample reads seven small files and is measured by
// BenchmarkSample (docs/bench.md records the figure); at one sample per
// second it stays far under 1% of one CPU.
package monitor

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/perflab/perflab/internal/hostfs"
	"github.com/perflab/perflab/internal/run"
	"github.com/prometheus/procfs"
)

// Sampler reads the host's activity counters.
type Sampler struct {
	fs        hostfs.FS
	proc      procfs.FS
	freqFiles []string
	psi       bool
	missing   []string
}

// Reading is one raw reading of the counters at a moment.
type Reading struct {
	At                                              time.Time
	User, System, IOWait, IRQ, SoftIRQ, Steal, Idle float64 // CPU seconds, all CPUs
	Ctxt, Intr, SoftIRQs                            uint64
	Running, Blocked                                int64
	MemAvailKiB                                     int64
	PSICPU, PSIMemory, PSIIO                        float64
	MHz                                             float64
}

// New returns a Sampler for the host behind fs. It fails only when
// /proc/stat cannot be read, since without it there is no CPU series at all;
// other missing sources (PSI on kernels without CONFIG_PSI, cpufreq on VMs)
// are reported by Missing and left at zero.
func New(fs hostfs.FS) (*Sampler, error) {
	proc, err := fs.Proc()
	if err != nil {
		return nil, fmt.Errorf("monitor: %s", hostfs.Reason("/proc", err))
	}
	s := &Sampler{fs: fs, proc: proc}
	if _, err := proc.Stat(); err != nil {
		return nil, fmt.Errorf("monitor: %s", hostfs.Reason("/proc/stat", err))
	}
	if _, err := proc.PSIStatsForResource("cpu"); err == nil {
		s.psi = true
	} else {
		s.missing = append(s.missing, "PSI (/proc/pressure) is unavailable on this kernel; psi_* are zero")
	}
	s.freqFiles, _ = fs.Glob("/sys/devices/system/cpu/cpu[0-9]*/cpufreq/scaling_cur_freq")
	if len(s.freqFiles) == 0 {
		s.missing = append(s.missing, "cpufreq is unavailable (no scaling_cur_freq); cpu_mhz is not recorded")
	}
	return s, nil
}

// Missing lists the sources this host lacks, as notes for the run.
func (s *Sampler) Missing() []string { return s.missing }

// Read takes one reading, stamped with at.
func (s *Sampler) Read(at time.Time) (Reading, error) {
	st, err := s.proc.Stat()
	if err != nil {
		return Reading{}, err
	}
	c := st.CPUTotal
	r := Reading{
		At: at,
		// The kernel already counts guest time inside user; nice is user
		// time at another priority, and both load the CPU the same way.
		User: c.User + c.Nice, System: c.System, IOWait: c.Iowait,
		IRQ: c.IRQ, SoftIRQ: c.SoftIRQ, Steal: c.Steal, Idle: c.Idle,
		Ctxt: st.ContextSwitches, Intr: st.IRQTotal, SoftIRQs: st.SoftIRQTotal,
		Running: int64(st.ProcessesRunning), Blocked: int64(st.ProcessesBlocked),
	}
	if mi, err := s.proc.Meminfo(); err == nil && mi.MemAvailable != nil {
		r.MemAvailKiB = int64(*mi.MemAvailable)
	}
	if s.psi {
		r.PSICPU = s.psiAvg10("cpu")
		r.PSIMemory = s.psiAvg10("memory")
		r.PSIIO = s.psiAvg10("io")
	}
	r.MHz = s.meanMHz()
	return r, nil
}

func (s *Sampler) psiAvg10(res string) float64 {
	p, err := s.proc.PSIStatsForResource(res)
	if err != nil || p.Some == nil {
		return 0
	}
	return p.Some.Avg10
}

func (s *Sampler) meanMHz() float64 {
	var sum float64
	n := 0
	for _, f := range s.freqFiles {
		b, err := s.fs.ReadFile(f)
		if err != nil {
			continue
		}
		khz, err := strconv.ParseFloat(strings.TrimSpace(string(b)), 64)
		if err != nil {
			continue
		}
		sum += khz / 1000
		n++
	}
	if n == 0 {
		return 0
	}
	return sum / float64(n)
}

// Point is the activity between two readings; t0 is the run's start, from
// which the point's T is counted. CPU shares are of the total CPU time that
// passed (all CPUs), rates are per second of wall time.
func Point(prev, cur Reading, t0 time.Time) run.MonitorPoint {
	dt := cur.At.Sub(prev.At).Seconds()
	p := run.MonitorPoint{
		T:           cur.At.Sub(t0).Seconds(),
		RunQueue:    cur.Running,
		Blocked:     cur.Blocked,
		MemAvailKiB: cur.MemAvailKiB,
		PSICPU:      cur.PSICPU,
		PSIMemory:   cur.PSIMemory,
		PSIIO:       cur.PSIIO,
		CPUMHz:      cur.MHz,
	}
	du, ds, dw := cur.User-prev.User, cur.System-prev.System, cur.IOWait-prev.IOWait
	di, dsi, dst, did := cur.IRQ-prev.IRQ, cur.SoftIRQ-prev.SoftIRQ, cur.Steal-prev.Steal, cur.Idle-prev.Idle
	if total := du + ds + dw + di + dsi + dst + did; total > 0 {
		pct := func(x float64) float64 { return 100 * x / total }
		p.UserPct, p.SystemPct, p.IOWaitPct = pct(du), pct(ds), pct(dw)
		p.IRQPct, p.SoftIRQPct, p.StealPct, p.IdlePct = pct(di), pct(dsi), pct(dst), pct(did)
	}
	if dt > 0 {
		p.CtxSwitches = rate(prev.Ctxt, cur.Ctxt, dt)
		p.Interrupts = rate(prev.Intr, cur.Intr, dt)
		p.SoftIRQs = rate(prev.SoftIRQs, cur.SoftIRQs, dt)
	}
	return p
}

// rate is a counter's increase per second; a counter that went backwards
// (a wrap or a different host) yields 0 rather than a huge bogus rate.
func rate(a, b uint64, dt float64) float64 {
	if b < a {
		return 0
	}
	return float64(b-a) / dt
}
