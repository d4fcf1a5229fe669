// Package builtin holds perflab's pure-Go benchmark probes: CPU, memory
// bandwidth and latency, page-fault cost, scheduler wake-up and context
// switch, syscall cost, disk and loopback networking. They need no external
// tool, so `perflab bench` can measure any Linux host it is copied to, and
// each is built to be comparable with the standard tool for its subject
// (sysbench, mbw, perf bench sched, fio, qperf, sockperf); docs/probes.md
// records the ratio measured against each.
//
// Every probe follows the same rules so that the harness in internal/bench
// can repeat it many times and trust the spread:
//   - Setup allocates everything (buffers via mmap, files, sockets, server
//     threads) and Teardown releases all of it, also after a half-done Setup
//     or a cancelled Iterate.
//   - Iterate does one short measurement (about 0.2–2 s with default
//     parameters) without allocating, pins its worker threads, and watches
//     ctx so that Ctrl-C stops it within milliseconds.
//   - Timing-critical loops talk to the kernel with blocking syscalls on
//     locked OS threads rather than through Go's netpoller, so what is timed
//     is the kernel path the reference tools time, not the Go scheduler.
//
// The one parser written here (AnonHugePages of /proc/self/smaps_rollup) is
// local because prometheus/procfs's ProcSMapsRollup does not expose that
// field.
package builtin

import "github.com/perflab/perflab/internal/probe"

// All returns every builtin probe, in the order the full suite runs them.
func All() []probe.Probe {
	return []probe.Probe{
		&CPU{},
		&MemBandwidth{},
		&MemLatency{},
		&PageFault{},
		&SchedWakeup{},
		&SchedCtxSwitch{},
		&Syscall{},
		&Disk{},
		&NetTCP{},
		&NetUDP{},
		&NetPing{},
	}
}

// ByName returns the builtin probe with that name.
func ByName(name string) (probe.Probe, bool) {
	for _, p := range All() {
		if p.Name() == name {
			return p, true
		}
	}
	return nil, false
}
