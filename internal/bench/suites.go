package bench

import (
	"time"

	"github.com/perflab/perflab/internal/probe"
)

// SuiteItem is one entry of a suite: which probe, with which parameters,
// for how long. Suites are data so that a tool adapter joins a suite by
// adding an entry, not by changing the harness.
type SuiteItem struct {
	// Probe is the preferred probe: a tool adapter ("sysbench.cpu") or a
	// builtin ("cpu").
	Probe string
	// Fallback is the builtin probe used, with a note saying so, when Probe
	// is not in this build or its tool is not installed. "" means the entry
	// is skipped (with a note) when Probe is unavailable.
	Fallback string
	// Quick starts from the probe's reduced quick defaults.
	Quick bool
	// Params override the probe's defaults (Fallback gets FallbackParams).
	Params, FallbackParams probe.Params
	Budget                 time.Duration
	MaxRuns                int
	// Measures names the row of the reference table (seed 004: a VM and a
	// container of the same hardware compared) that the entry reproduces.
	Measures string
	// NeedsPeer marks an entry whose reference row was measured between
	// two hosts (network rows): without a second host it measures
	// loopback, and the plan says so.
	NeedsPeer bool
}

// Suite is a named list of probes.
type Suite struct {
	Name  string
	Doc   string
	Items []SuiteItem
	// Rows is the reference table the suite reproduces (baseline: seed
	// 004's), in the table's order; compare lists a suite's metrics in
	// this order (RowRank).
	Rows []Row
}

// Suites are the builtin suites, in the order `bench list` shows them.
//
// quick must finish within 90 s on a 2-core host (measured in docs/bench.md)
// and touch every category, so its budgets are small and its parameters the
// probes' quick defaults; baseline reproduces the reference table of seed
// 004 (about 10 minutes); the area suites run one category with the full
// defaults.
var Suites = []Suite{
	{
		Name: "quick",
		Doc:  "Every category in about a minute, with reduced sizes: a first look, or a smoke test after a change.",
		Items: []SuiteItem{
			{Probe: "cpu", Quick: true, Budget: 7 * time.Second, MaxRuns: 30, Measures: "integer CPU throughput"},
			{Probe: "memory.bandwidth", Quick: true, Budget: 9 * time.Second, MaxRuns: 30, Measures: "memory bandwidth"},
			{Probe: "memory.stream", Quick: true, Budget: 7 * time.Second, MaxRuns: 20, Measures: "STREAM Copy/Scale/Add/Triad"},
			{Probe: "memory.latency", Quick: true, Budget: 8 * time.Second, MaxRuns: 30, Measures: "memory latency curve"},
			{Probe: "memory.pagefault", Quick: true, Budget: 5 * time.Second, MaxRuns: 30, Measures: "page-fault cost"},
			{Probe: "sched.wakeup", Quick: true, Budget: 6 * time.Second, MaxRuns: 30, Measures: "scheduler wake-up latency"},
			{Probe: "sched.ctxswitch", Quick: true, Budget: 5 * time.Second, MaxRuns: 30, Measures: "context-switch cost"},
			{Probe: "syscall", Quick: true, Budget: 4 * time.Second, MaxRuns: 30, Measures: "system-call cost"},
			{Probe: "disk", Quick: true, Budget: 10 * time.Second, MaxRuns: 20, Measures: "filesystem I/O"},
			{Probe: "net.tcp", Quick: true, Budget: 8 * time.Second, MaxRuns: 30, Measures: "loopback TCP"},
			{Probe: "net.udp", Quick: true, Budget: 8 * time.Second, MaxRuns: 30, Measures: "loopback UDP"},
		},
	},
	{
		Name: "baseline",
		Doc: "Seed 004's pre-production baseline table, row by row (about 13 minutes): sysbench prime at 1/2/4 " +
			"threads, scheduler wake-up latency at 1/2/4 threads, STREAM Copy/Scale/Add/Triad, memory latency, " +
			"sysbench memory and fileio, dd, packet rate, bandwidth, one-way and ping latency, nginx short and " +
			"keep-alive, MySQL, Redis SET/GET and etcd. Standard tools are preferred; the builtin probe runs where " +
			"the tool is missing, and the run says which. The network rows measure loopback here: the seed " +
			"measured between two hosts.",
		Items: []SuiteItem{
			{Probe: "sysbench.cpu", Fallback: "cpu", Params: probe.Params{"threads": "1,2,4"}, FallbackParams: probe.Params{"threads": "1,2,4"},
				Budget: 60 * time.Second, Measures: "sysbench prime, 1/2/4 threads"},
			{Probe: "sched.wakeup", Params: probe.Params{"pairs": "1,2,4"}, Budget: 60 * time.Second, Measures: "CPU scheduling latency, 1/2/4 threads"},
			{Probe: "sched.ctxswitch", Budget: 30 * time.Second, Measures: "context-switch cost"},
			{Probe: "syscall", Budget: 20 * time.Second, Measures: "system-call cost"},
			{Probe: "memory.stream", Budget: 45 * time.Second, Measures: "memory bandwidth (STREAM Copy/Scale/Add/Triad), 1 thread and all"},
			{Probe: "memory.bandwidth", Params: probe.Params{"threads": "1"}, Budget: 30 * time.Second,
				Measures: "memory read/write/copy bandwidth, single thread"},
			{Probe: "sysbench.memory", Budget: 30 * time.Second, Measures: "sysbench memory, sequential and random read/write"},
			{Probe: "memory.latency", Budget: 45 * time.Second, Measures: "memory latency (mlc)"},
			{Probe: "memory.pagefault", Budget: 20 * time.Second, Measures: "page-fault cost"},
			{Probe: "sysbench.fileio", Fallback: "disk", Budget: 60 * time.Second, Measures: "sysbench file I/O: sequential and random read/write, IOPS"},
			{Probe: "fio", Budget: 45 * time.Second, Measures: "fio: sequential and random read/write, IOPS"},
			{Probe: "dd", Budget: 45 * time.Second, Measures: "dd sequential write (conv=fdatasync, oflag=direct) and read"},
			{Probe: "iperf3", Fallback: "net.tcp", Budget: 40 * time.Second, Measures: "network bandwidth", NeedsPeer: true},
			{Probe: "sockperf", Fallback: "net.udp", Budget: 40 * time.Second, Measures: "packet rate and latency", NeedsPeer: true},
			{Probe: "qperf", Budget: 30 * time.Second, Measures: "one-way latency", NeedsPeer: true},
			{Probe: "net.tcp", Params: probe.Params{"tests": "latency"}, Budget: 20 * time.Second,
				Measures: "ping latency stand-in (1-byte TCP round trip / 2)", NeedsPeer: true},
			{Probe: "wrk.nginx", Budget: 45 * time.Second, Measures: "nginx QPS, short and keep-alive connections"},
			{Probe: "sysbench.oltp_point_select", Budget: 60 * time.Second, Measures: "MySQL OLTP transactions"},
			{Probe: "redis-benchmark", Budget: 30 * time.Second, Measures: "Redis SET/GET per second"},
			{Probe: "etcd", Quick: true, Budget: 45 * time.Second, Measures: "etcd put/range/txn/watch"},
		},
		Rows: seed004Rows,
	},
	{
		Name: "cpu",
		Doc:  "CPU throughput at 1..N threads and the cost of entering the kernel.",
		Items: []SuiteItem{
			{Probe: "cpu", Budget: 30 * time.Second, Measures: "integer CPU throughput"},
			{Probe: "syscall", Budget: 20 * time.Second, Measures: "system-call cost"},
			// Standard tools where installed (skipped with a note otherwise).
			{Probe: "sysbench.cpu", Budget: 45 * time.Second, Measures: "sysbench prime"},
			{Probe: "sysbench.threads", Budget: 20 * time.Second, Measures: "sysbench threads (scheduler)"},
			{Probe: "sysbench.mutex", Budget: 15 * time.Second, Measures: "sysbench mutex"},
			{Probe: "stress-ng", Budget: 30 * time.Second, Measures: "stress-ng cpu, switch, memcpy bogo-ops"},
		},
	},
	{
		Name: "memory",
		Doc:  "Memory bandwidth, the latency curve from L1 to DRAM, and page-fault cost.",
		Items: []SuiteItem{
			{Probe: "memory.bandwidth", Budget: 45 * time.Second, Measures: "memory bandwidth"},
			{Probe: "memory.latency", Budget: 45 * time.Second, Measures: "memory latency curve"},
			{Probe: "memory.pagefault", Budget: 30 * time.Second, Measures: "page-fault cost"},
		},
	},
	{
		Name: "sched",
		Doc:  "Scheduler wake-up latency and context-switch cost.",
		Items: []SuiteItem{
			{Probe: "sched.wakeup", Budget: 45 * time.Second, Measures: "scheduler wake-up latency"},
			{Probe: "sched.ctxswitch", Budget: 30 * time.Second, Measures: "context-switch cost"},
		},
	},
	{
		Name: "disk",
		Doc:  "Filesystem I/O in --dir: sequential bandwidth, random IOPS, fsync latency.",
		Items: []SuiteItem{
			{Probe: "disk", Budget: 60 * time.Second, Measures: "filesystem I/O"},
			{Probe: "sysbench.fileio", Budget: 60 * time.Second, Measures: "sysbench fileio"},
			{Probe: "fio", Budget: 60 * time.Second, Measures: "fio with O_DIRECT"},
			{Probe: "dd", Budget: 45 * time.Second, Measures: "dd: write with conv=fdatasync and oflag=direct, read past and from the page cache"},
		},
	},
	{
		Name: "net",
		Doc:  "Loopback TCP and UDP: bandwidth, request/response latency, packet rate.",
		Items: []SuiteItem{
			{Probe: "net.tcp", Budget: 45 * time.Second, Measures: "loopback TCP"},
			{Probe: "net.udp", Budget: 45 * time.Second, Measures: "loopback UDP"},
			{Probe: "iperf3", Budget: 45 * time.Second, Measures: "iperf3 bandwidth and packet rate"},
			{Probe: "sockperf", Budget: 45 * time.Second, Measures: "sockperf one-way latency"},
			{Probe: "qperf", Budget: 45 * time.Second, Measures: "qperf latency and message rate"},
		},
	},
	{
		Name:  "web",
		Doc:   "nginx requests per second with wrk, keep-alive and short connections (needs nginx and wrk).",
		Items: []SuiteItem{{Probe: "wrk.nginx", Budget: 60 * time.Second, Measures: "nginx QPS, short and keep-alive connections"}},
	},
	{
		Name:  "kv",
		Doc:   "Redis ping/set/get per second with redis-benchmark from two client processes (needs redis-server and redis-tools).",
		Items: []SuiteItem{{Probe: "redis-benchmark", Budget: 45 * time.Second, Measures: "Redis SET/GET per second"}},
	},
	{
		Name: "etcd",
		Doc: "etcd put (sequential and random keys), range (linearizable and serializable), txn and watch latency " +
			"against a private etcd, then etcdctl check perf's 60-second pass/fail (needs etcd-server and etcd-client).",
		Items: []SuiteItem{
			{Probe: "etcd", Budget: 90 * time.Second, Measures: "etcd put/range/txn/watch ops/s and latency"},
			{Probe: "etcd.check-perf", Budget: 150 * time.Second, MaxRuns: 2, Measures: "etcdctl check perf pass/fail"},
		},
	},
	{
		Name:  "db",
		Doc:   "MySQL point selects with sysbench at 100 threads against a private MariaDB (needs sysbench and mariadb-server).",
		Items: []SuiteItem{{Probe: "sysbench.oltp_point_select", Budget: 90 * time.Second, Measures: "MySQL point-select TPS"}},
	},
}

// SuiteByName returns a builtin suite.
func SuiteByName(name string) (Suite, bool) {
	for _, s := range Suites {
		if s.Name == name {
			return s, true
		}
	}
	return Suite{}, false
}
