// Package tools runs the standard benchmark tools of the field — sysbench,
// fio, wrk against nginx, redis-benchmark against redis-server, sysbench
// oltp_point_select against MariaDB/MySQL, qperf, iperf3, sockperf and
// stress-ng — as probe.Probe values, so that their numbers get the same
// repetition, statistics, monitors, store and comparison as the builtin
// probes. Users trust the numbers of the tools their field publishes with;
// these adapters let perflab speak in those numbers.
//
// Each adapter is two parts: the runner (one file per tool) that builds the
// exact command line, starts whatever server the tool needs and records the
// tool's version and command in the run; and a parser (parse_<tool>.go)
// that turns the tool's output into metrics. The parsers are written here
// because no library parses these formats; each accepts the output of more
// than one version of its tool (testdata/ holds real outputs of the
// versions installed on the development host and, for older versions,
// outputs edited to match their documented format), and each has a fuzz
// test.
//
// Server lifecycle (server.go): a server is started on 127.0.0.1 with a
// private configuration and data directory inside the probe's scratch
// directory, never the system's own service, config or port. It runs in
// its own process group, is optionally pinned to --server-cpus, and is
// stopped with its whole group in Teardown — which the harness also runs
// after a failure, Ctrl-C or SIGTERM. See server.go for how pinning works
// without taskset. The client/server adapters share these steps through
// privateServer (private_server.go); each keeps its own command lines
// and readiness check.
package tools

import "github.com/perflab/perflab/internal/probe"

// All returns every tool adapter, in the order `bench list` shows them.
func All() []probe.Probe {
	return []probe.Probe{
		newSysbenchCPU(),
		newSysbenchMemory(),
		newSysbenchThreads(),
		newSysbenchMutex(),
		newSysbenchFileIO(),
		&OLTP{},
		&Fio{},
		&DD{},
		&Wrk{},
		&Redis{},
		&Etcd{},
		&EtcdCheckPerf{},
		&Qperf{},
		&Iperf3{},
		&Sockperf{},
		&StressNG{},
	}
}

// ByName returns the adapter with that name.
func ByName(name string) (probe.Probe, bool) {
	for _, p := range All() {
		if p.Name() == name {
			return p, true
		}
	}
	return nil, false
}
