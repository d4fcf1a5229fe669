package knowledge

import "strings"

// Area is a class of workload a knob can move.
type Area string

const (
	All     Area = "all"     // anything: the CPU model, steal, a cgroup quota
	CPU     Area = "cpu"     // CPU-bound computation
	Memory  Area = "memory"  // memory latency and bandwidth, page faults
	Disk    Area = "disk"    // block I/O
	Network Area = "network" // packets, connections, request rates over TCP
	Syscall Area = "syscall" // kernel entries, context switches, IPC
	Timer   Area = "timer"   // clock reads, timers
)

// areaWords maps words found in a probe, metric or unit to areas. The
// first matching rule of each area counts; a metric can be in several
// areas (nginx requests are network and syscall heavy).
var areaWords = []struct {
	area  Area
	words []string
}{
	{Network, []string{"net", "tcp", "udp", "iperf", "qperf", "sockperf", "wrk", "nginx", "redis", "http", "ping", "pps", "req/s", "rps", "gbit", "mbit", "mysql"}},
	{Disk, []string{"fio", "disk", "fileio", "iops", "block", "dd.", "mib/s", "fsync", "mysql"}},
	{Memory, []string{"mem", "stream", "mlc", "latency.", "bandwidth", "page", "gb/s", "tlb", "alloc", "b/op", "java", "jvm", "gc"}},
	{Syscall, []string{"syscall", "ctxsw", "context", "pipe", "futex", "sched", "getpid", "switch", "nginx", "redis", "wrk", "mysql", "fork", "exec"}},
	{Timer, []string{"clock", "time", "gettimeofday", "timer", "tsc"}},
	{CPU, []string{"cpu", "prime", "events", "sec/op", "ns/op", "hash", "compress", "crypto", "superpi", "super_pi", "java", "jvm"}},
}

// AreasOf classifies a metric by its probe, name and unit. A metric that
// matches nothing is CPU-bound by default: most unknown benchmarks are
// computation (Go benchmarks, scripts).
func AreasOf(probe, metric, unit string) []Area {
	text := strings.ToLower(probe + " " + metric + " " + unit)
	var out []Area
	for _, aw := range areaWords {
		for _, w := range aw.words {
			if strings.Contains(text, w) {
				out = append(out, aw.area)
				break
			}
		}
	}
	if len(out) == 0 {
		out = []Area{CPU}
	}
	return out
}

// Affects reports whether a knob touching areas can move a metric in
// metricAreas.
func Affects(areas, metricAreas []Area) bool {
	for _, a := range areas {
		if a == All {
			return true
		}
		for _, m := range metricAreas {
			if a == m {
				return true
			}
		}
	}
	return false
}
