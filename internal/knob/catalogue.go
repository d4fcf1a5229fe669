package knob

import "sync"

// entry is a catalogue row. noBind marks a fact whose keys are not the
// file's keys: cpu.governors is a map from a governor to its CPUs (the
// concrete path cpu.governors.performance names a value), a C-state is
// named where its file is numbered. Lookup finds such a knob for any path
// below it and leaves its keys unbound (With binds them).
type entry struct {
	Knob
	noBind bool
}

func sysctl(name string, f Format, ladder []string, doc string) entry {
	return entry{Knob: Knob{Path: "sysctl." + name, Sources: []Source{{SysctlPath(name), f}}, Method: Sysctl,
		Scope: SysctlScope(name), NetNSReadOnly: netnsReadOnly[name], Ladder: ladder, Doc: doc}}
}

func file(path, tmpl string, f Format, scope Scope, values, ladder []string, doc string) entry {
	return entry{Knob: Knob{Path: path, Sources: []Source{{tmpl, f}}, Method: File, Scope: scope, Values: values, Ladder: ladder, Doc: doc}}
}

func l(v ...string) []string { return v }

func inGroup(group string, e entry) entry {
	e.Group = group
	return e
}

func withRisk(e entry, risk string) entry {
	e.Risk = risk
	return e
}

// hostWideNet are net sysctls (and subtrees) that exist only in the
// initial network namespace on Linux 6.18 (checked with a fresh `ip netns
// add`): writing them from anywhere changes the whole host.
var hostWideNet = []string{
	"net.core.bpf_jit_enable", "net.core.bpf_jit_harden", "net.core.bpf_jit_kallsyms", "net.core.bpf_jit_limit",
	"net.core.busy_poll", "net.core.busy_read", "net.core.default_qdisc", "net.core.dev_weight",
	"net.core.dev_weight_rx_bias", "net.core.dev_weight_tx_bias", "net.core.devconf_inherit_init_net",
	"net.core.fb_tunnels_only_for_init_net", "net.core.flow_limit_cpu_bitmap", "net.core.flow_limit_table_len",
	"net.core.gro_normal_batch", "net.core.high_order_alloc_disable", "net.core.max_skb_frags",
	"net.core.mem_pcpu_rsv", "net.core.message_burst", "net.core.message_cost", "net.core.netdev_budget",
	"net.core.netdev_budget_usecs", "net.core.netdev_max_backlog", "net.core.netdev_rss_key",
	"net.core.netdev_tstamp_prequeue", "net.core.netdev_unregister_timeout_secs", "net.core.rps_sock_flow_entries",
	"net.core.skb_defer_max", "net.core.warnings",
	"net.ipv4.cipso_cache_bucket_size", "net.ipv4.cipso_cache_enable", "net.ipv4.cipso_rbm_optfmt",
	"net.ipv4.cipso_rbm_strictvalid", "net.ipv4.fib_sync_mem", "net.ipv4.inet_peer_maxttl",
	"net.ipv4.inet_peer_minttl", "net.ipv4.inet_peer_threshold", "net.ipv4.ipfrag_secret_interval",
	"net.ipv4.route.error_burst", "net.ipv4.route.error_cost", "net.ipv4.route.gc_elasticity",
	"net.ipv4.route.gc_interval", "net.ipv4.route.gc_min_interval", "net.ipv4.route.gc_min_interval_ms",
	"net.ipv4.route.gc_thresh", "net.ipv4.route.gc_timeout", "net.ipv4.route.max_size",
	"net.ipv4.route.redirect_load", "net.ipv4.route.redirect_number", "net.ipv4.route.redirect_silence",
	"net.ipv4.tcp_available_ulp", "net.ipv4.tcp_low_latency", "net.ipv4.tcp_max_orphans",
	"net.ipv4.tcp_mem", "net.ipv4.udp_mem",
	"net.ipv6.calipso_cache_bucket_size", "net.ipv6.calipso_cache_enable", "net.ipv6.ip6frag_secret_interval",
	"net.ipv6.mld_max_msf", "net.ipv6.mld_qrv",
	"net.netfilter.nf_log_all_netns", "net.nf_conntrack_max",
}

// netnsReadOnly are net sysctls present in every network namespace but
// writable only in the initial one (Linux 6.18, checked as above): a
// search or tune inside a namespace cannot set them there.
var netnsReadOnly = map[string]bool{
	"net.core.rmem_default": true, "net.core.rmem_max": true,
	"net.core.wmem_default": true, "net.core.wmem_max": true,
	"net.netfilter.nf_conntrack_max": true, "net.netfilter.nf_conntrack_expect_max": true,
	"net.netfilter.nf_conntrack_buckets": true,
	"net.ipv4.tcp_ehash_entries":         true, "net.ipv4.udp_hash_entries": true,
}

// Choice values the kernel offers (the exporter's enum series).
var (
	thpModes       = l("always", "madvise", "never")
	thpDefragModes = l("always", "defer", "defer+madvise", "madvise", "never")
	thpShmemModes  = l("always", "within_size", "advise", "never", "deny", "force")
	governors      = l("conservative", "ondemand", "performance", "powersave", "schedutil", "userspace")
	eppValues      = l("default", "performance", "balance_performance", "balance_power", "power")
	schedulers     = l("none", "mq-deadline", "kyber", "bfq")
)

// catalogue is built on first use, not at start-up: every perflab
// command would otherwise pay for it (~500 allocations), --version too.
var catalogue = sync.OnceValue(func() []entry {
	return []entry{
		// Network: per namespace unless host-wide (SysctlScope).
		sysctl("net.core.somaxconn", Int, l("128", "4096", "65535"), "listen() backlog cap"),
		sysctl("net.core.netdev_max_backlog", Int, l("1000", "5000", "16384"), "per-CPU input queue before the stack"),
		sysctl("net.core.busy_poll", Int, l("0", "50"), "µs to busy-poll on poll/select"),
		sysctl("net.core.busy_read", Int, l("0", "50"), "µs to busy-poll on a blocking read"),
		inGroup("socket buffer caps", sysctl("net.core.rmem_max", Int, l("212992", "4194304", "16777216"), "largest receive buffer SO_RCVBUF may ask for")),
		inGroup("socket buffer caps", sysctl("net.core.wmem_max", Int, l("212992", "4194304", "16777216"), "largest send buffer SO_SNDBUF may ask for")),
		inGroup("socket buffer defaults", sysctl("net.core.rmem_default", Int, l("212992", "1048576"), "default socket receive buffer")),
		inGroup("socket buffer defaults", sysctl("net.core.wmem_default", Int, l("212992", "1048576"), "default socket send buffer")),
		sysctl("net.core.default_qdisc", Text, l("pfifo_fast", "fq_codel"), "qdisc of new interfaces"),
		inGroup("tcp buffers", sysctl("net.ipv4.tcp_rmem", Ints, l("4096 16384 1048576", "4096 131072 6291456", "4096 87380 16777216"), "TCP receive buffer min, default, max (bytes)")),
		inGroup("tcp buffers", sysctl("net.ipv4.tcp_wmem", Ints, l("4096 16384 1048576", "4096 16384 4194304", "4096 65536 16777216"), "TCP send buffer min, default, max (bytes)")),
		sysctl("net.ipv4.tcp_mem", Ints, nil, "TCP memory pressure thresholds (pages), host-wide"),
		sysctl("net.ipv4.tcp_tw_reuse", Int, l("0", "2", "1"), "reuse TIME-WAIT sockets for outgoing connections (2: loopback only)"),
		sysctl("net.ipv4.tcp_fin_timeout", Int, l("60", "30", "15"), "seconds in FIN-WAIT-2"),
		sysctl("net.ipv4.tcp_max_syn_backlog", Int, l("128", "1024", "8192", "65535"), "half-open connection queue"),
		sysctl("net.ipv4.tcp_max_tw_buckets", Int, l("32768", "262144"), "TIME-WAIT sockets kept"),
		sysctl("net.ipv4.ip_local_port_range", Ints, l("32768 60999", "10000 65000", "1024 65535"), "ephemeral port range"),
		sysctl("net.ipv4.tcp_slow_start_after_idle", Bool, l("1", "0"), "restart slow start after an idle period"),
		sysctl("net.ipv4.tcp_fastopen", Int, l("1", "3"), "TCP Fast Open (1 client, 2 server, 3 both)"),
		sysctl("net.ipv4.tcp_syncookies", Int, l("1", "0"), "SYN cookies when the SYN queue overflows"),
		sysctl("net.ipv4.tcp_window_scaling", Bool, l("1"), "RFC 1323 window scaling"),
		sysctl("net.ipv4.tcp_timestamps", Int, l("1", "0"), "TCP timestamps"),
		sysctl("net.ipv4.tcp_congestion_control", Text, l("cubic", "bbr"), "congestion control of new sockets"),
		sysctl("net.ipv4.tcp_notsent_lowat", Int, l("4294967295", "131072", "16384"), "unsent bytes before poll says writable"),
		sysctl("net.netfilter.nf_conntrack_max", Int, l("65536", "262144", "1048576"), "connection tracking table size"),

		// Memory and VM: host-wide.
		sysctl("vm.swappiness", Int, l("60", "10", "1"), "reclaim preference for anonymous memory"),
		sysctl("vm.dirty_ratio", Int, l("20", "10", "5"), "dirty memory % where writers block"),
		sysctl("vm.dirty_background_ratio", Int, l("10", "5", "2"), "dirty memory % where writeback starts"),
		sysctl("vm.dirty_bytes", Int, nil, "dirty bytes where writers block (overrides the ratio)"),
		sysctl("vm.dirty_background_bytes", Int, nil, "dirty bytes where writeback starts (overrides the ratio)"),
		sysctl("vm.zone_reclaim_mode", Int, l("1", "0"), "reclaim on the local NUMA node before going remote"),
		sysctl("vm.overcommit_memory", Int, l("0", "1"), "overcommit policy"),
		sysctl("vm.max_map_count", Int, l("65530", "262144", "1048576"), "memory maps per process"),
		sysctl("vm.min_free_kbytes", Int, nil, "free memory reserve"),
		sysctl("kernel.numa_balancing", Int, l("1", "0"), "automatic NUMA page migration"),
		sysctl("kernel.pid_max", Int, l("32768", "4194304"), "largest PID"),
		sysctl("kernel.nmi_watchdog", Bool, l("1", "0"), "NMI watchdog (a perf counter per CPU)"),
		sysctl("kernel.perf_event_paranoid", Int, nil, "who may use perf events"),
		sysctl("kernel.kptr_restrict", Int, nil, "kernel pointers in /proc"),
		sysctl("kernel.sched_autogroup_enabled", Bool, l("1", "0"), "group tasks by session for fairness"),
		sysctl("fs.file-max", Int, l("1048576", "9223372036854775807"), "open files, host-wide"),
		sysctl("fs.nr_open", Int, l("1048576", "4194304"), "largest RLIMIT_NOFILE"),
		sysctl("fs.inotify.max_user_watches", Int, l("8192", "524288"), "inotify watches per user"),
		sysctl("fs.inotify.max_user_instances", Int, l("128", "8192"), "inotify instances per user"),

		// Transparent huge pages, KSM.
		file("memory.thp.enabled", "/sys/kernel/mm/transparent_hugepage/enabled", Choice, Host, thpModes, l("never", "madvise", "always"), "transparent huge pages for anonymous memory"),
		file("memory.thp.defrag", "/sys/kernel/mm/transparent_hugepage/defrag", Choice, Host, thpDefragModes, l("never", "madvise", "defer+madvise", "defer", "always"), "direct compaction on a THP fault"),
		file("memory.thp.shmem_enabled", "/sys/kernel/mm/transparent_hugepage/shmem_enabled", Choice, Host, thpShmemModes, l("never", "advise", "within_size", "always"), "huge pages for shmem and tmpfs"),
		file("memory.thp.khugepaged_defrag", "/sys/kernel/mm/transparent_hugepage/khugepaged/defrag", Bool, Host, nil, l("0", "1"), "khugepaged compacts to collapse pages"),
		file("memory.ksm_run", "/sys/kernel/mm/ksm/run", Int, Host, l("0", "1", "2"), l("0", "1"), "kernel same-page merging"),

		// CPU frequency and SMT: host-wide; per-CPU files are bound with With(cpu).
		{Knob: Knob{Path: "cpu.governors", Sources: []Source{{"/sys/devices/system/cpu/cpu{cpu}/cpufreq/scaling_governor", Text}}, Method: File, Scope: Host,
			Values: governors, Ladder: l("powersave", "schedutil", "performance"), Doc: "cpufreq governor of a CPU"}, noBind: true},
		{Knob: Knob{Path: "cpu.epp", Sources: []Source{{"/sys/devices/system/cpu/cpu{cpu}/cpufreq/energy_performance_preference", Text}}, Method: File, Scope: Host,
			Values: eppValues, Ladder: l("power", "balance_power", "balance_performance", "performance"), Doc: "energy/performance preference of a CPU"}, noBind: true},
		{Knob: Knob{Path: "cpu.boost", Sources: []Source{{"/sys/devices/system/cpu/cpufreq/boost", Bool}, {"/sys/devices/system/cpu/intel_pstate/no_turbo", NotBool}},
			Method: File, Scope: Host, Ladder: l("false", "true"), Doc: "turbo/boost frequencies (intel_pstate: no_turbo, inverted)"}},
		{Knob: Knob{Path: "cpu.scaling_max_khz", Sources: []Source{{"/sys/devices/system/cpu/cpu{cpu}/cpufreq/scaling_max_freq", Int}}, Method: File, Scope: Host,
			Unit: "kHz", Doc: "highest frequency cpufreq may pick on a CPU"}},
		{Knob: Knob{Path: "cpu.cstates[*].disabled_on", Sources: []Source{{"/sys/devices/system/cpu/cpu{cpu}/cpuidle/state{state}/disable", Bool}}, Method: File, Scope: Host,
			Ladder: l("0", "1"), Doc: "idle state disabled on a CPU (keys: CPU, state index)"}, noBind: true},
		{Knob: Knob{Path: "cpu.numa[*].hugepages_total", Sources: []Source{{"/sys/devices/system/node/node{node}/hugepages/hugepages-{size}kB/nr_hugepages", Int}}, Method: File, Scope: Host,
			Doc:  "persistent huge pages of a NUMA node (keys: node, page size in kB)",
			Risk: "reserving huge pages takes that memory from everything else on the host"}},
		file("cpu.smt.control", "/sys/devices/system/cpu/smt/control", Text, Host, l("on", "off", "forceoff", "notsupported", "notimplemented"), nil, "SMT siblings online"),

		// Block devices: host-wide, per device.
		file("block[*].scheduler", "/sys/block/{dev}/queue/scheduler", Choice, Host, schedulers, l("mq-deadline", "none"), "I/O scheduler"),
		file("block[*].read_ahead_kib", "/sys/block/{dev}/queue/read_ahead_kb", Int, Host, nil, l("128", "512", "4096"), "read-ahead (KiB)"),
		file("block[*].nr_requests", "/sys/block/{dev}/queue/nr_requests", Int, Host, nil, l("64", "256", "1024"), "requests queued per hardware queue"),
		withRisk(file("block[*].write_cache", "/sys/block/{dev}/queue/write_cache", Text, Host, l("write back", "write through"), nil, "whether the kernel flushes the device's volatile cache"),
			"\"write through\" on a device with a volatile cache stops the kernel flushing it: data written before a power loss can be lost"),

		// NICs: a device lives in one network namespace and its sysfs files
		// are seen (and written) there.
		withRisk(file("net.interfaces[*].mtu", "/sys/class/net/{nic}/mtu", Int, NetNS, nil, nil, "MTU (bytes)"),
			"an MTU the network path does not carry cuts connections, the one perflab runs over included"),
		file("net.interfaces[*].rx_queues[*].rps_cpus", "/sys/class/net/{nic}/queues/{queue}/rps_cpus", CPUMask, NetNS, nil, nil, "CPUs that process packets of this receive queue (RPS)"),
		file("net.interfaces[*].rx_queues[*].rps_flow_cnt", "/sys/class/net/{nic}/queues/{queue}/rps_flow_cnt", Int, NetNS, nil, l("0", "4096", "32768"), "RFS flow table entries of this queue"),
		file("net.interfaces[*].tx_queues[*].xps_cpus", "/sys/class/net/{nic}/queues/{queue}/xps_cpus", CPUMask, NetNS, nil, nil, "CPUs that transmit on this queue (XPS)"),

		// IRQs: host-wide.
		file("irqs[*].affinity", "/proc/irq/{irq}/smp_affinity_list", CPUList, Host, nil, nil, "CPUs an interrupt may be delivered to"),

		// Cgroups: the process's cgroup, bound with With(cgroup path); v2 first, then v1.
		{Knob: Knob{Path: "cgroup.cpu_quota_us", Sources: []Source{{"/sys/fs/cgroup{cgroup}/cpu.max", Max}, {"/sys/fs/cgroup/cpu{cgroup}/cpu.cfs_quota_us", Limit}, {"/sys/fs/cgroup/cpu,cpuacct{cgroup}/cpu.cfs_quota_us", Limit}},
			Method: File, Scope: Cgroup, Unit: "µs per period", Doc: "CPU bandwidth quota (-1: none)"}},
		{Knob: Knob{Path: "cgroup.cpus", Sources: []Source{{"/sys/fs/cgroup{cgroup}/cpuset.cpus", CPUList}, {"/sys/fs/cgroup/cpuset{cgroup}/cpuset.cpus", CPUList}},
			Method: File, Scope: Cgroup, Doc: "CPUs the cgroup may run on"}},
		{Knob: Knob{Path: "cgroup.mems", Sources: []Source{{"/sys/fs/cgroup{cgroup}/cpuset.mems", CPUList}, {"/sys/fs/cgroup/cpuset{cgroup}/cpuset.mems", CPUList}},
			Method: File, Scope: Cgroup, Doc: "NUMA nodes the cgroup may allocate on",
			Risk: "memory of its processes may have to migrate, or allocation fail, when nodes are taken away"}},
		{Knob: Knob{Path: "cgroup.memory_max_bytes", Sources: []Source{{"/sys/fs/cgroup{cgroup}/memory.max", Max}, {"/sys/fs/cgroup/memory{cgroup}/memory.limit_in_bytes", Limit}},
			Method: File, Scope: Cgroup, Unit: "bytes", Doc: "memory limit (-1: none)",
			Risk: "a limit below the cgroup's use makes the kernel reclaim or OOM-kill its processes"}},

		// Set at boot: an instruction, never written.
		{Knob: Knob{Path: "kernel.params", Method: Boot, Scope: Reboot, Doc: "kernel command-line parameters (mitigations=, nosmt, preempt=, …)"}, noBind: true},
		{Knob: Knob{Path: "kernel.cmdline", Method: Boot, Scope: Reboot, Doc: "the kernel command line"}},
		{Knob: Knob{Path: "kernel.vulnerabilities", Method: Boot, Scope: Reboot, Doc: "CPU vulnerability mitigations: follow from boot parameters, the CPU and its microcode"}, noBind: true},
	}
})

var byPath = sync.OnceValue(func() map[string]entry {
	m := make(map[string]entry, len(catalogue()))
	for _, e := range catalogue() {
		if _, dup := m[e.Path]; dup {
			panic("knob: duplicate catalogue entry " + e.Path)
		}
		m[e.Path] = e
	}
	return m
})
