package audit

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/perflab/perflab/internal/cpuset"
	"github.com/perflab/perflab/internal/snapshot"
)

// Network rules: NIC queues and packet steering, connection tracking and the
// TCP/socket sysctls of seed 002, where a bank's container cloud took nginx
// +330% and redis +48% with NIC queue, IRQ/NUMA, RPS/XPS and sysctl work.

const (
	srcSeed002   = "seed 002_207da5cc69ba67a4.txt"
	srcScaling   = "https://docs.kernel.org/networking/scaling.html"
	srcIPSysctl  = "https://docs.kernel.org/networking/ip-sysctl.html"
	srcNetSysctl = "https://docs.kernel.org/admin-guide/sysctl/net.html"
	srcConntrack = "https://docs.kernel.org/networking/nf_conntrack-sysctl.html"
)

func registerNetRules() {
	register(
		&Rule{
			ID: "NET-NIC-QUEUES", Title: "NIC queue (channel) count covers the CPUs local to the NIC", Area: "net",
			Severity: Medium, Knob: "ethtool -L <iface> combined (/sys/class/net/<iface>/queues)",
			Why: "Each NIC queue has its own IRQ, so the number of queues is the number of CPUs that can take receive interrupts " +
				"and softirq work in parallel (RSS); with fewer queues than local CPUs a few cores saturate in softirq while the rest idle. " +
				"Seed 002 set eth0 to 64 combined queues on a 256-CPU Kunpeng host (16 inside 8-CPU containers), part of the work that took nginx +330% and redis +48%.",
			Source: srcSeed002 + "; " + srcScaling,
			Check:  checkNICQueues,
		},
		&Rule{
			ID: "NET-RPS", Title: "RPS spreads receive work where the NIC has fewer queues than CPUs", Area: "net",
			Severity: Medium, Knob: "/sys/class/net/<iface>/queues/rx-<n>/rps_cpus",
			Why: "With fewer hardware receive queues than CPUs, all protocol processing for a queue runs on the CPU that took its interrupt; " +
				"RPS hands it to other CPUs of the same NUMA node. Seed 002 wrote rps_cpus/xps_cpus masks for its containers' NICs " +
				"as part of the nginx +330% / redis +48% gain; the kernel's scaling guide recommends RPS exactly when queues < CPUs.",
			Source: srcSeed002 + "; " + srcScaling,
			Check:  checkRPS,
		},
		&Rule{
			ID: "NET-XPS", Title: "XPS maps CPUs to transmit queues", Area: "net",
			Severity: Low, Knob: "/sys/class/net/<iface>/queues/tx-<n>/xps_cpus",
			Why: "Without XPS the transmit queue is picked by flow hash, so any CPU may contend on any queue's lock and complete on a remote cache; " +
				"with each CPU mapped to one queue, contention on the device queue lock drops and completions stay cache-local (kernel scaling guide). " +
				"Seed 002 set xps_cpus alongside rps_cpus for nginx (+330%) and redis (+48%). A single-queue NIC has nothing to choose, so XPS is moot there.",
			Source: srcSeed002 + "; " + srcScaling,
			Check:  checkXPS,
		},
		&Rule{
			ID: "NET-CONNTRACK", Title: "Connection tracking is absent or has room", Area: "net",
			Severity: Medium, Knob: "net.netfilter.nf_conntrack_max",
			Why: "Every packet through nf_conntrack costs a hash lookup and, for new flows, an allocation; when the table is full " +
				"the kernel drops new connections (\"nf_conntrack: table full, dropping packet\"). A web or key-value host that needs no NAT " +
				"or stateful firewall pays this for nothing: seed 002 found 16 netfilter modules loaded (lsmod | grep nf) on the tuned host and removed the unneeded ones to match its reference host. " +
				"The workload sets the highest acceptable table use (nf_conntrack.max_use_pct).",
			Source: srcSeed002 + "; " + srcConntrack,
			Check:  checkConntrack,
		},
		&Rule{
			ID: "NET-TCP-RMEM", Title: "TCP receive buffers (min default max)", Area: "net",
			Severity: Low, Knob: "net.ipv4.tcp_rmem",
			Why: "The max field caps the receive window autotuning can reach: one connection's throughput is at most window / RTT, " +
				"so a 6 MiB cap limits a 10 ms path to about 5 Gbit/s. Seed 002 set 4096 87380 16777216 for nginx and redis. " +
				"Larger values than the target are fine, so each field is compared as a minimum.",
			Source: srcSeed002 + "; " + srcIPSysctl,
			Check:  func(ctx *Context) Result { return checkTCPBuffers(ctx, "net.ipv4.tcp_rmem") },
		},
		&Rule{
			ID: "NET-TCP-WMEM", Title: "TCP send buffers (min default max)", Area: "net",
			Severity: Low, Knob: "net.ipv4.tcp_wmem",
			Why: "The max field caps how much unacknowledged data a socket may have in flight; the Linux default of 4 MiB limits one connection " +
				"on a 10 ms path to about 3.4 Gbit/s. Seed 002 set 4096 65536 16777216 for nginx and redis. " +
				"Larger values than the target are fine, so each field is compared as a minimum.",
			Source: srcSeed002 + "; " + srcIPSysctl,
			Check:  func(ctx *Context) Result { return checkTCPBuffers(ctx, "net.ipv4.tcp_wmem") },
		},
		&Rule{
			ID: "NET-TCP-TW-REUSE", Title: "TIME_WAIT sockets may be reused for new outgoing connections", Area: "net",
			Severity: Low, Knob: "net.ipv4.tcp_tw_reuse",
			Why: "A closed connection's port stays in TIME_WAIT for 60 s; with the default 28232 ephemeral ports a proxy can open at most " +
				"about 470 new connections per second to one upstream address without reuse. 1 lets new outgoing connections take " +
				"TIME_WAIT ports when timestamps make it safe; 2 (the default) allows it on loopback only. Seed 002 set 1 and notes it should be measured on its own.",
			Source: srcSeed002 + "; " + srcIPSysctl,
			Check:  sysctlRuleCheck("net.ipv4.tcp_tw_reuse"),
		},
		&Rule{
			ID: "NET-TCP-FIN-TIMEOUT", Title: "Orphaned connections leave FIN_WAIT_2 quickly", Area: "net",
			Severity: Low, Knob: "net.ipv4.tcp_fin_timeout",
			Why: "An orphaned socket waits up to tcp_fin_timeout seconds (default 60) in FIN_WAIT_2 for the peer's FIN, holding memory " +
				"and a port; a web server closing thousands of connections per second against slow clients accumulates them. Seed 002 set 15.",
			Source: srcSeed002 + "; " + srcIPSysctl,
			Check:  sysctlRuleCheck("net.ipv4.tcp_fin_timeout"),
		},
		&Rule{
			ID: "NET-TCP-FASTOPEN", Title: "TCP Fast Open enabled", Area: "net",
			Severity: Low, Knob: "net.ipv4.tcp_fastopen",
			Why: "TCP Fast Open carries data in the SYN of repeat connections, saving one round trip per new connection (RFC 7413); " +
				"1 enables the client side, 2 the server side, 3 both. Seed 002 set 3 for nginx short connections. " +
				"The server must also ask for it per listener (nginx: listen … fastopen=N).",
			Source: srcSeed002 + "; https://www.rfc-editor.org/rfc/rfc7413",
			Check:  sysctlRuleCheck("net.ipv4.tcp_fastopen"),
		},
		&Rule{
			ID: "NET-TCP-SYNCOOKIES", Title: "SYN cookies on (security over a benchmark shortcut)", Area: "net",
			Severity: Medium, Knob: "net.ipv4.tcp_syncookies",
			Why: "Seed 002 set tcp_syncookies=0 for a benchmark in a closed network; perflab expects 1 and says why: with 1 the kernel only " +
				"sends cookies when the SYN queue (tcp_max_syn_backlog) overflows, so it costs nothing in normal operation, while with 0 an " +
				"overflowing queue drops SYNs and a client waits the 1 s initial retransmission timeout (RFC 6298), and a SYN flood takes the service down. " +
				"The remedy for a too-small queue is a bigger tcp_max_syn_backlog, not turning the protection off.",
			Source: srcSeed002 + "; " + srcIPSysctl,
			Check:  sysctlRuleCheck("net.ipv4.tcp_syncookies"),
		},
		&Rule{
			ID: "NET-TCP-MAX-SYN-BACKLOG", Title: "SYN (half-open) queue is deep enough", Area: "net",
			Severity: Medium, Knob: "net.ipv4.tcp_max_syn_backlog",
			Why: "tcp_max_syn_backlog bounds connections waiting for the handshake's final ACK; the default (128 to 4096, by memory) overflows " +
				"under connection bursts, and a dropped SYN costs the client the 1 s initial retransmission timeout (RFC 6298). Seed 002 set 65536.",
			Source: srcSeed002 + "; " + srcIPSysctl,
			Check:  sysctlRuleCheck("net.ipv4.tcp_max_syn_backlog"),
		},
		&Rule{
			ID: "NET-TCP-WINDOW-SCALING", Title: "TCP window scaling on", Area: "net",
			Severity: High, Knob: "net.ipv4.tcp_window_scaling",
			Why: "Without window scaling (RFC 7323) the receive window tops out at 64 KiB, so one connection on a 10 ms path cannot exceed " +
				"about 52 Mbit/s whatever the link speed. It is on by default; seed 002 set it explicitly to 1.",
			Source: srcSeed002 + "; https://www.rfc-editor.org/rfc/rfc7323",
			Check:  sysctlRuleCheck("net.ipv4.tcp_window_scaling"),
		},
		&Rule{
			ID: "NET-SOMAXCONN", Title: "Listen backlog cap (somaxconn) is high enough", Area: "net",
			Severity: Medium, Knob: "net.core.somaxconn",
			Why: "somaxconn silently caps every listen() backlog; when the accept queue is full the kernel drops the handshake's ACK " +
				"(counted as ListenOverflows in netstat -s) and the client retries after 1 s or more. The default was 128 before Linux 5.4 " +
				"and is 4096 now; seed 002 set 65535 for nginx and redis (redis warns when its tcp-backlog 511 exceeds somaxconn).",
			Source: srcSeed002 + "; " + srcNetSysctl,
			Check:  sysctlRuleCheck("net.core.somaxconn"),
		},
		&Rule{
			ID: "NET-NETDEV-MAX-BACKLOG", Title: "Per-CPU input backlog is deep enough", Area: "net",
			Severity: Low, Knob: "net.core.netdev_max_backlog",
			Why: "netdev_max_backlog is the per-CPU queue packets wait in when they arrive faster than the kernel processes them (always with RPS); " +
				"the default 1000 packets is 1.2 ms of a 10 Gbit/s link at 1500-byte frames, and overflow drops are counted in column 2 of /proc/net/softnet_stat.",
			Source: srcNetSysctl,
			Check:  sysctlRuleCheck("net.core.netdev_max_backlog"),
		},
		&Rule{
			ID: "NET-BUSY-POLL", Title: "Socket busy polling for low latency", Area: "net",
			Severity: Low, Workloads: []string{"latency"}, Knob: "net.core.busy_poll, net.core.busy_read",
			Why: "Busy polling lets a blocking read or poll spin on the device queue instead of sleeping until the interrupt and softirq " +
				"wake it, removing that wake-up from each message's latency at the cost of CPU spent spinning. The kernel documentation " +
				"recommends 50 µs for a few sockets and 100 µs for several hundred (Red Hat recommends 50); the driver must support it.",
			Source: srcNetSysctl,
			Check:  checkBusyPoll,
		},
		&Rule{
			ID: "NET-LOCAL-PORT-RANGE", Title: "Ephemeral port range is wide enough for short connections", Area: "net",
			Severity: Medium, Workloads: []string{"web"}, Knob: "net.ipv4.ip_local_port_range",
			Why: "Each outgoing connection to one destination address and port needs its own local port, and a closed one stays in TIME_WAIT for 60 s: " +
				"the default range 32768-60999 (28232 ports) caps a proxy at about 470 new connections per second per upstream before connect() fails " +
				"with EADDRNOTAVAIL; 1024-65535 gives 64512 ports (about 1075/s). Keep ports of local listeners out with ip_local_reserved_ports.",
			Source: srcIPSysctl,
			Check:  checkLocalPortRange,
		},
	)
}

// sysctlRuleCheck is the Check of a rule that compares one sysctl with the
// workload's target of the same name.
func sysctlRuleCheck(name string) func(*Context) Result {
	return func(ctx *Context) Result { return checkSysctl(ctx, name, name) }
}

// trafficNICs returns the interfaces worth tuning: physical (not under
// /sys/devices/virtual, so not lo, veth, bridges or bonds) and not down.
func trafficNICs(s *snapshot.Snapshot) []snapshot.NIC {
	var out []snapshot.NIC
	for _, n := range s.Net.Interfaces {
		if n.Virtual || n.Name == "lo" {
			continue
		}
		switch n.OperState {
		case "down", "lowerlayerdown", "notpresent":
			continue
		}
		out = append(out, n)
	}
	return out
}

// nicsOrNA returns the traffic NICs, or an na Result when there are none.
func nicsOrNA(s *snapshot.Snapshot) ([]snapshot.NIC, Result, bool) {
	if r, ok := missingFact(s, "net.interfaces"); !ok {
		return nil, r, false
	}
	nics := trafficNICs(s)
	if len(nics) == 0 {
		return nil, naResult("no physical network interface is up"), false
	}
	return nics, Result{}, true
}

// nodesOf returns the sorted NUMA nodes the CPUs belong to.
func nodesOf(s *snapshot.Snapshot, cpus []int) []int {
	m := s.CPUNodes()
	set := map[int]bool{}
	for _, c := range cpus {
		if n, ok := m[c]; ok {
			set[n] = true
		}
	}
	out := make([]int, 0, len(set))
	for n := range set {
		out = append(out, n)
	}
	sort.Ints(out)
	return out
}

// nicLocalCPUs returns the CPUs local to a NIC (its NUMA node's, or all
// online CPUs on a single-node host or when the platform names no node) and
// how to call them in a sentence.
func nicLocalCPUs(s *snapshot.Snapshot, nic snapshot.NIC) ([]int, string) {
	if len(s.CPU.NUMA) > 1 && nic.NUMANode >= 0 {
		if c := s.NodeCPUs(nic.NUMANode); len(c) > 0 {
			return c, fmt.Sprintf("NUMA node %d", nic.NUMANode)
		}
	}
	return s.OnlineCPUs(), "the host"
}

// maskWidth is the number of CPUs a mask must cover, as the kernel prints it.
func maskWidth(s *snapshot.Snapshot) int {
	if s.CPU.Possible > 0 {
		return s.CPU.Possible
	}
	max := 0
	for _, c := range s.OnlineCPUs() {
		if c+1 > max {
			max = c + 1
		}
	}
	return max
}

// nicQueueCount returns a NIC's current and maximum queue count and whether
// they are combined channels (what ethtool -L … combined sets). Without
// ethtool data (a snapshot of another root) it counts rx queues in sysfs
// and returns max -1: unknown.
func nicQueueCount(nic snapshot.NIC) (cur, max int, combined bool) {
	if ch := nic.Channels; ch != nil {
		if ch.Combined > 0 || ch.MaxCombined > 0 {
			return ch.Combined, ch.MaxCombined, true
		}
		return min(ch.Rx, ch.Tx), min(ch.MaxRx, ch.MaxTx), false
	}
	return len(nic.RxQueues), -1, true
}

func checkNICQueues(ctx *Context) Result {
	s := ctx.S
	nics, res, ok := nicsOrNA(s)
	if !ok {
		return res
	}
	var obs, reasons []string
	var changes []Change
	judged := 0
	var unknownMax []string
	for _, nic := range nics {
		cpus, where := nicLocalCPUs(s, nic)
		cur, max, combined := nicQueueCount(nic)
		if cur == 0 {
			reasons = append(reasons, nic.Name+": no queue information")
			continue
		}
		judged++
		want := len(cpus)
		maxText := "max " + strconv.Itoa(max)
		if max < 0 {
			maxText = "hardware maximum unknown"
		} else if max < want {
			want = max
		}
		obs = append(obs, fmt.Sprintf("%s: %s (%s) for %d CPUs on %s", nic.Name, countOf(cur, "queue"), maxText, len(cpus), where))
		if cur >= want {
			continue
		}
		if max < 0 {
			why := s.Missing(snapshot.ElemPath("net.interfaces", nic.Name, "channels"))
			if why == "" {
				why = "not collected"
			}
			unknownMax = append(unknownMax, fmt.Sprintf("%s's maximum is unknown (%s); `ethtool -l %s` shows it", nic.Name, why, nic.Name))
		}
		if combined {
			changes = append(changes, Change{Kind: KindChannels, Target: nic.Name, Value: strconv.Itoa(want), Current: strconv.Itoa(cur)})
		} else {
			changes = append(changes, Change{Kind: KindCommand, Target: nic.Name,
				Value:   fmt.Sprintf("ethtool -L %s rx %d tx %d", nic.Name, want, want),
				Current: fmt.Sprintf("ethtool -L %s rx %d tx %d", nic.Name, nic.Channels.Rx, nic.Channels.Tx)})
		}
	}
	if judged == 0 {
		return naResult(strings.Join(reasons, "; "))
	}
	expected := "queues ≥ min(CPUs local to the NIC, hardware maximum)"
	if len(changes) == 0 {
		return passResult(strings.Join(obs, "; "), expected)
	}
	r := failResult(strings.Join(obs, "; "), expected, changes...)
	if len(unknownMax) > 0 {
		r.Reason = strings.Join(unknownMax, "; ") + ", and ethtool -L fails above it"
		r.Severity = severityPtr(Low)
	}
	return r
}

func checkRPS(ctx *Context) Result {
	s := ctx.S
	nics, res, ok := nicsOrNA(s)
	if !ok {
		return res
	}
	var obs, skipped []string
	var changes []Change
	judged := 0
	for _, nic := range nics {
		cpus, where := nicLocalCPUs(s, nic)
		if len(nic.RxQueues) == 0 {
			skipped = append(skipped, nic.Name+": no rx queues listed")
			continue
		}
		if len(nic.RxQueues) >= len(cpus) {
			judged++
			obs = append(obs, fmt.Sprintf("%s: %s for %d CPUs on %s (RSS covers them)", nic.Name, countOf(len(nic.RxQueues), "rx queue"), len(cpus), where))
			continue
		}
		mask := cpuset.FormatMask(cpus, maskWidth(s))
		var unset []string
		known := 0
		for _, q := range nic.RxQueues {
			if q.RPS == "" {
				continue
			}
			known++
			if cpuset.MaskEmpty(q.RPS) {
				unset = append(unset, q.Name)
				changes = append(changes, factChange("net.interfaces[*].rx_queues[*].rps_cpus", mask, q.RPS, nic.Name, q.Name))
			}
		}
		if known == 0 {
			skipped = append(skipped, nic.Name+": rps_cpus unreadable (kernel without CONFIG_RPS?)")
			continue
		}
		judged++
		if len(unset) == 0 {
			obs = append(obs, fmt.Sprintf("%s: RPS set on all %d rx queues", nic.Name, len(nic.RxQueues)))
		} else {
			obs = append(obs, fmt.Sprintf("%s: %s for %d CPUs on %s, RPS unset on %s", nic.Name, countOf(len(nic.RxQueues), "rx queue"), len(cpus), where, strings.Join(unset, ",")))
		}
	}
	if judged == 0 {
		return naResult(strings.Join(skipped, "; "))
	}
	expected := "rps_cpus = the NIC's local CPUs on every rx queue when rx queues < CPUs"
	if len(changes) == 0 {
		return passResult(strings.Join(obs, "; "), expected)
	}
	return failResult(strings.Join(obs, "; "), expected, changes...)
}

func checkXPS(ctx *Context) Result {
	s := ctx.S
	nics, res, ok := nicsOrNA(s)
	if !ok {
		return res
	}
	var obs, skipped []string
	var changes []Change
	judged := 0
	cpus := s.OnlineCPUs()
	for _, nic := range nics {
		tx := nic.TxQueues
		switch {
		case len(tx) == 0:
			skipped = append(skipped, nic.Name+": no tx queues listed")
			continue
		case len(tx) == 1:
			judged++
			obs = append(obs, nic.Name+": 1 tx queue (XPS has no choice to make)")
			continue
		}
		known, set := 0, 0
		for _, q := range tx {
			if q.XPS == "" {
				continue
			}
			known++
			if !cpuset.MaskEmpty(q.XPS) {
				set++
			}
		}
		if known == 0 {
			skipped = append(skipped, nic.Name+": xps_cpus unreadable (kernel without CONFIG_XPS?)")
			continue
		}
		judged++
		if set > 0 {
			obs = append(obs, fmt.Sprintf("%s: XPS set on %d of %d tx queues", nic.Name, set, len(tx)))
			continue
		}
		obs = append(obs, fmt.Sprintf("%s: %d tx queues for %d CPUs, XPS unset on all", nic.Name, len(tx), len(cpus)))
		// Each CPU gets exactly one queue, round robin, so no two queues
		// claim a CPU and every CPU has a queue.
		for i, q := range tx {
			var mine []int
			for j, c := range cpus {
				if j%len(tx) == i {
					mine = append(mine, c)
				}
			}
			if len(mine) == 0 || q.XPS == "" {
				continue
			}
			changes = append(changes, factChange("net.interfaces[*].tx_queues[*].xps_cpus", cpuset.FormatMask(mine, maskWidth(s)), q.XPS, nic.Name, q.Name))
		}
	}
	if judged == 0 {
		return naResult(strings.Join(skipped, "; "))
	}
	expected := "every CPU mapped to one tx queue (xps_cpus) on multi-queue NICs"
	if len(changes) == 0 {
		return passResult(strings.Join(obs, "; "), expected)
	}
	return failResult(strings.Join(obs, "; "), expected, changes...)
}

func checkConntrack(ctx *Context) Result {
	s := ctx.S
	if r, ok := missingFact(s, "net.conntrack"); !ok {
		return r
	}
	ct := s.Net.Conntrack
	if !ct.Loaded {
		if r, ok := missingFact(s, "net.conntrack.loaded"); !ok {
			return r
		}
		return passResult("nf_conntrack not loaded", "nf_conntrack unloaded, or its table below the workload's use limit")
	}
	e, res, ok := target(ctx, "nf_conntrack.max_use_pct")
	if !ok {
		return res
	}
	expected := "table use " + e.String() + " %"
	known := ct.Max > 0 && s.Missing("net.conntrack.count") == "" && s.Missing("net.conntrack.max") == ""
	obs := "nf_conntrack loaded"
	var pct float64
	if known {
		pct = float64(ct.Count) * 100 / float64(ct.Max)
		obs += fmt.Sprintf(", %d of %d entries (%.1f %%)", ct.Count, ct.Max, pct)
	}
	if n := len(ct.Netfilter); n > 0 {
		obs += fmt.Sprintf(", %d netfilter modules (%s)", n, strings.Join(ct.Netfilter, " "))
	}
	if known && !e.Matches(strconv.FormatFloat(pct, 'f', 2, 64)) {
		r := failResult(obs, expected, sysctlChange("net.netfilter.nf_conntrack_max",
			strconv.FormatInt(conntrackMaxFor(ct.Count, ct.Max, e), 10), strconv.FormatInt(ct.Max, 10)))
		r.Severity = severityPtr(High)
		r.Reason = "a full table drops new connections; each entry costs roughly 300 bytes of kernel memory, and nf_conntrack_buckets (the hash size) should grow with it"
		return r
	}
	switch ctx.W.Base() {
	case "web", "kv":
		r := failResult(obs, "no connection tracking on a "+ctx.W.Base()+" host that needs no NAT or stateful firewall",
			Change{Kind: KindCommand, Target: "nf_conntrack",
				Value: "check the ruleset (nft list ruleset; iptables-save): if no rule uses NAT or connection state, remove those rules and " +
					"`modprobe -r` the unused modules; otherwise exempt the service port from tracking with a notrack rule in the raw table",
				Current: "restore the saved ruleset (nft -f / iptables-restore), which loads nf_conntrack again"})
		r.Severity = severityPtr(Low)
		return r
	}
	if !known {
		return naResult("nf_conntrack is loaded but its count or max is unavailable: " + s.Missing("net.conntrack.max") + s.Missing("net.conntrack.count"))
	}
	return passResult(obs, expected)
}

// conntrackMaxFor doubles the table until the current count fills at most
// half of the allowed use, leaving headroom for a burst.
func conntrackMaxFor(count, max int64, e Expectation) int64 {
	limit := e.bound
	if e.op != "<=" || limit <= 0 {
		limit = 80
	}
	n := max
	if n < 65536 {
		n = 65536
	}
	for float64(count)*100/float64(n) > limit/2 {
		n *= 2
	}
	return n
}

// countOf says "1 queue" and "8 queues".
func countOf(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

// parseInts parses white-space separated integers ("4096\t87380\t16777216").
func parseInts(s string) ([]int64, bool) {
	f := strings.Fields(s)
	if len(f) == 0 {
		return nil, false
	}
	out := make([]int64, len(f))
	for i, x := range f {
		v, err := strconv.ParseInt(x, 10, 64)
		if err != nil {
			return nil, false
		}
		out[i] = v
	}
	return out, true
}

func joinInts(v []int64) string {
	p := make([]string, len(v))
	for i, x := range v {
		p[i] = strconv.FormatInt(x, 10)
	}
	return strings.Join(p, " ")
}

// checkTCPBuffers judges tcp_rmem/tcp_wmem field by field: a host whose
// buffers are at least the target's passes, and the fix raises only the
// fields that fall short, so tuning never shrinks a buffer someone raised.
func checkTCPBuffers(ctx *Context, name string) Result {
	v, res, ok := sysctlValue(ctx.S, name)
	if !ok {
		return res
	}
	e, res, ok := target(ctx, name)
	if !ok {
		return res
	}
	obs := normalizeSpace(v)
	first, ok := parseInts(e.Value())
	if e.op != "" || !ok || len(first) != 3 {
		if e.Matches(v) {
			return passResult(obs, e.String())
		}
		return failResult(obs, e.String(), sysctlChange(name, e.Value(), obs))
	}
	expected := "each field at least " + strings.Join(e.any, " or ") + " (min default max)"
	have, ok := parseInts(v)
	if !ok || len(have) != 3 {
		return errorResult(fmt.Sprintf("%s = %q is not three integers", name, v))
	}
	for _, alt := range e.any {
		want, ok := parseInts(alt)
		if ok && len(want) == 3 && want[0] <= have[0] && want[1] <= have[1] && want[2] <= have[2] {
			return passResult(obs, expected)
		}
	}
	fix := make([]int64, 3)
	for i := range fix {
		fix[i] = max(have[i], first[i])
	}
	return failResult(obs, expected, sysctlChange(name, joinInts(fix), obs))
}

func checkBusyPoll(ctx *Context) Result {
	var obs []string
	var changes []Change
	expected := []string{}
	for _, name := range []string{"net.core.busy_poll", "net.core.busy_read"} {
		r := checkSysctl(ctx, name, name)
		switch r.Status {
		case NA, Error:
			return r
		}
		obs = append(obs, name+" = "+r.Observed)
		expected = append(expected, name+" "+r.Expected)
		changes = append(changes, r.Changes...)
	}
	if len(changes) == 0 {
		return passResult(strings.Join(obs, ", "), strings.Join(expected, ", "))
	}
	r := failResult(strings.Join(obs, ", "), strings.Join(expected, ", "), changes...)
	r.Reason = "busy polling spins a CPU for up to this many µs per poll; it needs a driver with NAPI busy-poll support"
	return r
}

// portRange parses "32768 60999" into its port count.
func portRange(s string) (int64, bool) {
	v, ok := parseInts(s)
	if !ok || len(v) != 2 || v[1] < v[0] {
		return 0, false
	}
	return v[1] - v[0] + 1, true
}

func checkLocalPortRange(ctx *Context) Result {
	const name = "net.ipv4.ip_local_port_range"
	v, res, ok := sysctlValue(ctx.S, name)
	if !ok {
		return res
	}
	e, res, ok := target(ctx, name)
	if !ok {
		return res
	}
	obs := normalizeSpace(v)
	have, ok := portRange(v)
	if !ok {
		return errorResult(fmt.Sprintf("%s = %q is not a port range", name, v))
	}
	obs = fmt.Sprintf("%s (%d ports)", obs, have)
	if e.Matches(v) {
		return passResult(obs, e.String())
	}
	want, wok := portRange(e.Value())
	expected := e.String()
	if wok {
		expected = fmt.Sprintf("%s, or any range of at least %d ports", e.String(), want)
		if have >= want {
			return passResult(obs, expected)
		}
	}
	return failResult(obs, expected, sysctlChange(name, e.Value(), normalizeSpace(v)))
}
