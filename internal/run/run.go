// Package run defines a benchmark run, the unit that bench produces, the
// store keeps, compare joins and report renders: every raw sample with its
// metric's unit and direction, the parameters and tool version that produced
// it, the monitor series and host-noise readings recorded alongside, and the
// snapshot of the host.
package run

import (
	"time"
)

// Schema is the version of the run export format (docs/formats.md).
const Schema = 1

// Better says which direction of a metric is an improvement.
type Better string

const (
	Higher Better = "higher"
	Lower  Better = "lower"
)

// Metric describes one measured quantity of a probe.
type Metric struct {
	Name   string  `json:"name"`             // unique within the run: "events_per_sec.t4", "latency.64KiB"
	Unit   string  `json:"unit"`             // events/s, GB/s, ns, µs, MB/s, IOPS, req/s
	Better Better  `json:"better"`           // higher or lower
	Series string  `json:"series,omitempty"` // curve this metric belongs to ("latency"), for plots
	X      float64 `json:"x,omitempty"`      // its position on the curve (working-set bytes, threads)
	XUnit  string  `json:"x_unit,omitempty"`
}

// Sample is one measurement of one metric.
type Sample struct {
	Metric    string  `json:"metric"`
	Value     float64 `json:"value"`
	Iteration int     `json:"iteration"` // repetition number, 0-based, warm-up excluded
}

// MonitorPoint is one 1-second sample of host activity during a run. CPU
// shares are percent of all CPUs; rates are per second over the interval.
//
// The pointer fields were added after runs had been stored: nil means "not
// recorded" (an older perflab, or a host without the source), which a
// reader must tell apart from a measured 0 — comparing a run that measured
// 90 MiB of dirty pages with one that never looked is not a change.
type MonitorPoint struct {
	T           float64 `json:"t"` // seconds since the run started
	UserPct     float64 `json:"user_pct"`
	SystemPct   float64 `json:"system_pct"`
	IOWaitPct   float64 `json:"iowait_pct"`
	IRQPct      float64 `json:"irq_pct"`
	SoftIRQPct  float64 `json:"softirq_pct"`
	StealPct    float64 `json:"steal_pct"`
	IdlePct     float64 `json:"idle_pct"`
	CtxSwitches float64 `json:"ctxt_per_s"`
	Interrupts  float64 `json:"intr_per_s"`
	SoftIRQs    float64 `json:"softirq_per_s"`
	RunQueue    int64   `json:"procs_running"`
	Blocked     int64   `json:"procs_blocked"`
	MemAvailKiB int64   `json:"mem_available_kib"`
	// PSI "some" avg10 at the interval's end: a 10-second decaying
	// average, so it still carries the previous 10–20 s (another probe's
	// load). Kept for stored runs; prefer the exact *Pct fields below.
	PSICPU    float64 `json:"psi_cpu_avg10"`
	PSIMemory float64 `json:"psi_memory_avg10"`
	PSIIO     float64 `json:"psi_io_avg10"`
	CPUMHz    float64 `json:"cpu_mhz,omitempty"` // mean scaling_cur_freq when cpufreq exists

	// Exact pressure: percent of this interval's wall time in which at
	// least one task stalled on the resource (Δ PSI "some total" / Δt).
	PSICPUPct    *float64 `json:"psi_cpu_pct,omitempty"`
	PSIMemoryPct *float64 `json:"psi_memory_pct,omitempty"`
	PSIIOPct     *float64 `json:"psi_io_pct,omitempty"`

	// Page cache and writeback at the interval's end (/proc/meminfo).
	PageCacheKiB *int64 `json:"page_cache_kib,omitempty"` // Cached: file pages incl. tmpfs/shmem, excl. swap cache
	DirtyKiB     *int64 `json:"dirty_kib,omitempty"`      // Dirty: waiting to be written back
	WritebackKiB *int64 `json:"writeback_kib,omitempty"`  // Writeback: being written now

	// Block I/O, faults and reclaim over the interval (/proc/vmstat).
	PgpgInKiBPerS    *float64 `json:"pgpgin_kib_per_s,omitempty"`    // read from block devices
	PgpgOutKiBPerS   *float64 `json:"pgpgout_kib_per_s,omitempty"`   // written to block devices
	MajFaultsPerS    *float64 `json:"pgmajfault_per_s,omitempty"`    // page faults that waited for I/O
	PgScanPerS       *float64 `json:"pgscan_per_s,omitempty"`        // pages scanned by kswapd + direct reclaim
	PgScanDirectPerS *float64 `json:"pgscan_direct_per_s,omitempty"` // of which by allocating tasks
	PgStealPerS      *float64 `json:"pgsteal_per_s,omitempty"`       // pages reclaimed by kswapd + direct reclaim
	AllocStallsPerS  *float64 `json:"allocstall_per_s,omitempty"`    // allocations that entered direct reclaim
}

// Noise is what the host-noise sentinel (package hostnoise) saw on the
// run's CPUs just before its first and after its last measured iteration:
// how much of a spinning thread's time the hypervisor or other tasks took.
// The monitor series cannot show this on hypervisors that report no steal.
type Noise struct {
	CPUs        string        `json:"cpus"`         // where the sentinel spun (cpuset list)
	ThresholdUs float64       `json:"threshold_us"` // gaps longer than this counted as lost
	Before      *NoiseReading `json:"before,omitempty"`
	After       *NoiseReading `json:"after,omitempty"` // absent for failed and interrupted runs
}

// NoiseReading is one sentinel reading: over all its CPUs, then per CPU.
type NoiseReading struct {
	Seconds           float64    `json:"seconds"`             // spin time per CPU
	LostPct           float64    `json:"lost_pct"`            // lost time, percent of the spin time
	InterruptionsPerS float64    `json:"interruptions_per_s"` // gaps above the threshold per second per CPU
	MaxGapUs          float64    `json:"max_gap_us"`          // longest gap, above the threshold or not
	PerCPU            []NoiseCPU `json:"per_cpu,omitempty"`
	// Reference is the host-drift reference read with it (absent in runs
	// made before perflab took it).
	Reference *Reference `json:"reference,omitempty"`
}

// Reference is one reading of the host-drift reference (package
// hostnoise): fixed CPU, memory and system-call workloads whose speed
// depends on the host only.
type Reference struct {
	CPUNsPerOp float64 `json:"cpu_ns_per_op"` // dependent integer step
	MemGBps    float64 `json:"mem_gb_per_s"`  // sequential read of 64 MiB
	SyscallNs  float64 `json:"syscall_ns"`    // getppid
	// MemSmallPages: the memory read's buffer was mapped MADV_NOHUGEPAGE,
	// so THP could not move it (false in runs made before).
	MemSmallPages bool `json:"mem_small_pages,omitempty"`
}

// NoiseCPU is one CPU's part of a NoiseReading.
type NoiseCPU struct {
	CPU               int     `json:"cpu"`
	LostPct           float64 `json:"lost_pct"`
	InterruptionsPerS float64 `json:"interruptions_per_s"`
	MaxGapUs          float64 `json:"max_gap_us"`
}

// Stop says why the repetitions ended.
type Stop string

const (
	StopPrecision   Stop = "precision"   // the CI of every metric's median reached ±precision
	StopMaxRuns     Stop = "max-runs"    // the repetition cap was reached first
	StopTimeBudget  Stop = "time-budget" // the time budget ran out first
	StopInterrupted Stop = "interrupted" // Ctrl-C / SIGTERM: the run is partial
	StopFailed      Stop = "failed"      // the probe or tool failed
	StopFixed       Stop = "fixed"       // a fixed repetition count was asked for
)

// Run is one probe (or tool) measured on one host.
type Run struct {
	Schema      int               `json:"schema"`
	ID          string            `json:"id"`
	Label       string            `json:"label,omitempty"`
	Suite       string            `json:"suite,omitempty"`
	Probe       string            `json:"probe"`                  // cpu, memory.latency, sysbench.cpu, wrk.nginx …
	Tool        string            `json:"tool,omitempty"`         // external tool name, "" for builtin probes
	ToolVersion string            `json:"tool_version,omitempty"` // or the perflab version for builtin probes
	Command     []string          `json:"command,omitempty"`      // exact command line of an external tool
	Params      map[string]string `json:"params"`
	CPUs        string            `json:"cpus,omitempty"` // placement (cpuset list) or "" for unpinned
	// State and Block place a run in an interleaved session ('bench
	// --state', 'tune apply --measure'): which state the host was put in
	// before it, and which block of the session it was measured in. Block
	// alone numbers the rounds of 'bench --repeat'. Zero outside them.
	State      string         `json:"state,omitempty"`
	Block      int            `json:"block,omitempty"`
	Host       string         `json:"host"`
	MachineID  string         `json:"machine_id,omitempty"`
	BootID     string         `json:"boot_id,omitempty"`
	SnapshotID string         `json:"snapshot_id,omitempty"`
	Started    time.Time      `json:"started"`
	Ended      time.Time      `json:"ended"`
	Complete   bool           `json:"complete"`
	Stop       Stop           `json:"stop"`
	Precision  float64        `json:"precision,omitempty"` // target relative CI half-width (0.01 = ±1%)
	Metrics    []Metric       `json:"metrics"`
	Samples    []Sample       `json:"samples"`
	Monitor    []MonitorPoint `json:"monitor,omitempty"`
	Noise      *Noise         `json:"noise,omitempty"` // absent when the check was off (--no-noise-check)
	Notes      []string       `json:"notes,omitempty"` // e.g. "builtin probe used: sysbench not installed"
	Error      string         `json:"error,omitempty"`
}

// Values returns the samples of one metric in iteration order.
func (r *Run) Values(metric string) []float64 {
	var v []float64
	for _, s := range r.Samples {
		if s.Metric == metric {
			v = append(v, s.Value)
		}
	}
	return v
}

// Metric returns a metric's description.
func (r *Run) Metric(name string) (Metric, bool) {
	for _, m := range r.Metrics {
		if m.Name == name {
			return m, true
		}
	}
	return Metric{}, false
}
