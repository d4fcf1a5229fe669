// Package monitor samples host activity from /proc while a benchmark runs,
// so that a run carries the evidence needed to trust or distrust its
// numbers: a probe that measured 20% less on a host with 15% steal, heavy
// iowait, a memory-pressure stall, direct reclaim, a writeback storm or
// another process on the run queue is explained by the series recorded
// next to it, not by guesswork afterwards.
//
// Each point is the difference of two readings of cumulative kernel
// counters — /proc/stat CPU time by state, context switches, interrupts,
// softirqs; PSI stall totals; /proc/vmstat block I/O, major faults and
// reclaim — plus instantaneous values (procs_running, procs_blocked,
// MemAvailable, page cache, Dirty, Writeback, PSI avg10, cpufreq
// scaling_cur_freq).
//
// Pressure is recorded exactly: the share of each interval in which tasks
// stalled is the difference of the PSI "some total" (cumulative µs) over
// the interval's length. The avg10 the kernel also prints decays over ~10
// seconds, so a 1-second point would carry the previous probe's load into
// the next one; it is still recorded (psi_*_avg10) because stored runs
// have only it, and comparisons with them need like for like.
//
// Everything is read through hostfs and, where it has a parser, parsed by
// prometheus/procfs. Two files are parsed here: scaling_cur_freq, one
// number that procfs/sysfs would read with far more work than needed, and
// /proc/vmstat, which procfs (v0.23) does not parse at all (it reads only
// the per-node vmstat under /sys). The vmstat parser reads seven counters,
// each summed over its per-zone and older names (vmstat.go); it is fuzzed.
//
// Sources a host lacks (PSI without CONFIG_PSI, cpufreq on VMs, vmstat
// event counters without CONFIG_VM_EVENT_COUNTERS) are listed by Missing
// as notes for the run. Their fields are left out of the points (nil
// pointers, absent in JSON), so that "not measured" is never read as a
// measured 0; only the fields older than that rule (psi_*_avg10,
// mem_available_kib) stay 0, as stored runs have them.
//
// Cost: one sample reads six small /proc files (and scaling_cur_freq of
// each CPU where cpufreq exists) and is measured by
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
	vmstat    bool
	missing   []string
}

// Reading is one raw reading of the counters at a moment.
type Reading struct {
	At                                              time.Time
	User, System, IOWait, IRQ, SoftIRQ, Steal, Idle float64 // CPU seconds, all CPUs
	Ctxt, Intr, SoftIRQs                            uint64
	Running, Blocked                                int64
	MemAvailKiB                                     int64
	Cache                                           PageCache
	PSICPU, PSIMemory, PSIIO                        Stall
	VM                                              VMStat
	MHz                                             float64
}

// PageCache is the page cache and its writeback state from /proc/meminfo;
// OK is false when meminfo or one of the fields could not be read.
type PageCache struct {
	CachedKiB, DirtyKiB, WritebackKiB int64
	OK                                bool
}

// New returns a Sampler for the host behind fs. It fails only when
// /proc/stat cannot be read, since without it there is no CPU series at all;
// other missing sources (PSI on kernels without CONFIG_PSI, cpufreq on VMs,
// vmstat counters) are reported by Missing and left out of the points.
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
		s.missing = append(s.missing, "PSI (/proc/pressure) is unavailable on this kernel; psi_*_avg10 are zero and psi_*_pct are not recorded")
	}
	s.missing = append(s.missing, s.checkMeminfo()...)
	s.missing = append(s.missing, s.checkVMStat()...)
	s.freqFiles, _ = fs.Glob("/sys/devices/system/cpu/cpu[0-9]*/cpufreq/scaling_cur_freq")
	if len(s.freqFiles) == 0 {
		s.missing = append(s.missing, "cpufreq is unavailable (no scaling_cur_freq); cpu_mhz is not recorded")
	}
	return s, nil
}

func (s *Sampler) checkMeminfo() []string {
	mi, err := s.proc.Meminfo()
	if err != nil {
		return []string{hostfs.Reason("/proc/meminfo", err) + "; mem_available_kib is zero and page_cache_kib, dirty_kib, writeback_kib are not recorded"}
	}
	var out []string
	if mi.MemAvailable == nil {
		out = append(out, "/proc/meminfo has no MemAvailable (kernel before 3.14); mem_available_kib is zero")
	}
	if mi.Cached == nil || mi.Dirty == nil || mi.Writeback == nil {
		out = append(out, "/proc/meminfo lacks Cached, Dirty or Writeback; page_cache_kib, dirty_kib, writeback_kib are not recorded")
	}
	return out
}

func (s *Sampler) checkVMStat() []string {
	b, err := s.fs.ReadFile("/proc/vmstat")
	if err != nil {
		return []string{hostfs.Reason("/proc/vmstat", err) + "; block I/O, major-fault and reclaim rates are not recorded"}
	}
	v, err := parseVMStat(string(b))
	if err != nil {
		return []string{fmt.Sprintf("/proc/vmstat is unreadable (%v); block I/O, major-fault and reclaim rates are not recorded", err)}
	}
	s.vmstat = true
	if m := v.missing(); len(m) > 0 {
		return []string{fmt.Sprintf("/proc/vmstat lacks event counters (kernel without CONFIG_VM_EVENT_COUNTERS?); %s are not recorded", strings.Join(m, ", "))}
	}
	return nil
}

// Missing lists the sources this host lacks, as notes for the run.
func (s *Sampler) Missing() []string { return s.missing }

// Read takes one reading, stamped with at. Only /proc/stat failing is an
// error; another source failing leaves its fields out of this reading.
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
	if mi, err := s.proc.Meminfo(); err == nil {
		if mi.MemAvailable != nil {
			r.MemAvailKiB = int64(*mi.MemAvailable)
		}
		if mi.Cached != nil && mi.Dirty != nil && mi.Writeback != nil {
			r.Cache = PageCache{CachedKiB: int64(*mi.Cached), DirtyKiB: int64(*mi.Dirty), WritebackKiB: int64(*mi.Writeback), OK: true}
		}
	}
	if s.psi {
		r.PSICPU, r.PSIMemory, r.PSIIO = s.stall("cpu"), s.stall("memory"), s.stall("io")
	}
	if s.vmstat {
		if b, err := s.fs.ReadFile("/proc/vmstat"); err == nil {
			r.VM, _ = parseVMStat(string(b)) // a bad read leaves every counter !OK
		}
	}
	r.MHz = s.meanMHz()
	return r, nil
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
// passed (all CPUs), rates are per second of wall time. A field whose
// source is missing from either reading is left nil.
func Point(prev, cur Reading, t0 time.Time) run.MonitorPoint {
	dt := cur.At.Sub(prev.At).Seconds()
	p := run.MonitorPoint{
		T:           cur.At.Sub(t0).Seconds(),
		RunQueue:    cur.Running,
		Blocked:     cur.Blocked,
		MemAvailKiB: cur.MemAvailKiB,
		PSICPU:      cur.PSICPU.Avg10,
		PSIMemory:   cur.PSIMemory.Avg10,
		PSIIO:       cur.PSIIO.Avg10,
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
	p.PSICPUPct = stallPct(prev.PSICPU, cur.PSICPU, dt)
	p.PSIMemoryPct = stallPct(prev.PSIMemory, cur.PSIMemory, dt)
	p.PSIIOPct = stallPct(prev.PSIIO, cur.PSIIO, dt)
	if cur.Cache.OK {
		p.PageCacheKiB, p.DirtyKiB, p.WritebackKiB = ptr(cur.Cache.CachedKiB), ptr(cur.Cache.DirtyKiB), ptr(cur.Cache.WritebackKiB)
	}
	a, b := prev.VM, cur.VM
	p.PgpgInKiBPerS = counterRate(a.PgpgIn, b.PgpgIn, dt)
	p.PgpgOutKiBPerS = counterRate(a.PgpgOut, b.PgpgOut, dt)
	p.MajFaultsPerS = counterRate(a.MajFault, b.MajFault, dt)
	p.PgScanPerS = counterRate(a.Scan, b.Scan, dt)
	p.PgScanDirectPerS = counterRate(a.ScanDirect, b.ScanDirect, dt)
	p.PgStealPerS = counterRate(a.Steal, b.Steal, dt)
	p.AllocStallsPerS = counterRate(a.AllocStall, b.AllocStall, dt)
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

// counterRate is rate for a vmstat counter, nil unless both readings have it.
func counterRate(a, b Counter, dt float64) *float64 {
	if !a.OK || !b.OK || dt <= 0 {
		return nil
	}
	return ptr(rate(a.N, b.N, dt))
}
