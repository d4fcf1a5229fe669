package bench

import (
	"strings"
)

// Row is one row of a reference table and the perflab metrics that
// measure it.
type Row struct {
	Category string // the table's group: CPU, memory, file I/O, network, application
	Seed     string // the row as the seed labels it
	Probe    string // probe that measures it; Fallback is used where that is missing
	Fallback string
	// Metrics are metric names, in the row's order; a name ending in "*"
	// matches every metric with that prefix (in their own order).
	Metrics []string
	// NeedsPeer: the seed measured it between two hosts.
	NeedsPeer bool
	Note      string // how perflab's number relates to the seed's
}

// seed004Rows is seed 004's baseline table ("VM vs container of the same
// hardware"), in its order. docs/bench.md maps each row with its units.
var seed004Rows = []Row{
	{Category: "CPU", Seed: "计算性能 Super_Pi", Note: "not measured: no Super_Pi on Linux distributions; sysbench prime below is the CPU row"},
	{Category: "CPU", Seed: "CPU调度延时 单线程/2线程/4线程", Probe: "sched.wakeup", Metrics: []string{"mean.pairs1", "mean.pairs2", "mean.pairs4", "*"}},
	{Category: "CPU", Seed: "sysbench 素数计算 单线程/2线程/4线程", Probe: "sysbench.cpu", Fallback: "cpu",
		Metrics: []string{"events_per_sec.t1", "events_per_sec.t2", "events_per_sec.t4", "*"}},
	{Category: "memory", Seed: "内存带宽(stream) Copy/Scale/Add/Triad", Probe: "memory.stream",
		Metrics: []string{"copy.t1", "scale.t1", "add.t1", "triad.t1", "*"}},
	{Category: "memory", Seed: "内存时延(mlc)", Probe: "memory.latency", Metrics: []string{"*"}},
	{Category: "memory", Seed: "sysbench 顺序写/顺序读/随机写/随机读", Probe: "sysbench.memory",
		Metrics: []string{"mib_per_sec.seq_write", "mib_per_sec.seq_read", "mib_per_sec.rnd_write", "mib_per_sec.rnd_read", "*"}},
	{Category: "file I/O", Seed: "sysbench 随机读/随机写 IOPS, 顺序写/顺序读吞吐量", Probe: "sysbench.fileio", Fallback: "disk",
		Metrics: []string{"rndrd.reads_per_sec", "rndwr.writes_per_sec", "seqwr.write_mib_per_sec", "seqrd.read_mib_per_sec", "*"}},
	{Category: "file I/O", Seed: "dd 顺序写", Probe: "dd", Metrics: []string{"write_fdatasync.*", "write_direct.*", "*"}},
	{Category: "network", Seed: "传输速率(pps)", Probe: "iperf3", Fallback: "net.udp",
		Metrics: []string{"udp.recv_pps", "udp.sent_pps", "rx_pps", "tx_pps"}, NeedsPeer: true},
	{Category: "network", Seed: "网络带宽", Probe: "iperf3", Fallback: "net.tcp", Metrics: []string{"tcp.gbit_per_sec", "bandwidth", "*"}, NeedsPeer: true},
	{Category: "network", Seed: "单向时延 (qperf)", Probe: "qperf", Metrics: []string{"tcp_lat.latency", "udp_lat.latency", "*"}, NeedsPeer: true},
	{Category: "network", Seed: "单向时延 (sockperf)", Probe: "sockperf", Metrics: []string{"latency.*", "*"}, NeedsPeer: true},
	{Category: "network", Seed: "ping 时延", Probe: "net.tcp", Metrics: []string{"latency"}, NeedsPeer: true,
		Note: "a 1-byte TCP round trip / 2: ping's round trip is twice it"},
	{Category: "application", Seed: "Nginx短连接 QPS / 长连接 QPS", Probe: "wrk.nginx", Metrics: []string{"short.*", "keepalive.*", "*"}},
	{Category: "application", Seed: "MySQL", Probe: "sysbench.oltp_point_select", Metrics: []string{"*"}},
	{Category: "application", Seed: "Redis Set/Get", Probe: "redis-benchmark", Metrics: []string{"set.*", "get.*", "*"}},
	{Category: "application", Seed: "etcd (seed 002)", Probe: "etcd", Metrics: []string{"*"}},
}

// RowRank is where a metric of a probe falls in the suite's reference
// table: rows in order, and within a row the order of its metric
// patterns. ok is false for metrics no row claims. It is the order
// compare uses for two runs of the suite.
//
// A row of the probe itself wins over a row that the probe stands in for
// as a fallback (net.udp is the ping row, and the packet-rate row only
// where sockperf is missing).
func (s Suite) RowRank(probeName, metric string) (rank int, ok bool) {
	for _, fallback := range []bool{false, true} {
		for i, r := range s.Rows {
			if fallback && r.Fallback != probeName || !fallback && r.Probe != probeName {
				continue
			}
			for j, pat := range r.Metrics {
				if pat == metric || strings.HasSuffix(pat, "*") && strings.HasPrefix(metric, strings.TrimSuffix(pat, "*")) {
					return i*1000 + j, true
				}
			}
		}
	}
	return 0, false
}

// RowRank ranks a metric by the reference table of the named suite (see
// Suite.RowRank); suites without a table rank nothing.
func RowRank(suite, probeName, metric string) (int, bool) {
	s, ok := SuiteByName(suite)
	if !ok || len(s.Rows) == 0 {
		return 0, false
	}
	return s.RowRank(probeName, metric)
}
