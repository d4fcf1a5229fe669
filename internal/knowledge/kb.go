package knowledge

// Entry is what perflab knows about one group of settings.
type Entry struct {
	ID    string   // stable identifier, used in JSON output
	Title string   // short name of the knob
	Paths []string // path patterns it covers (see MatchPrefix)
	Areas []Area   // workloads it moves
	// Weight is how strongly a difference here is known to move those
	// workloads: 3 routinely by 10% or more, 2 by a few percent, 1 rarely.
	Weight int
	Why    string // the mechanism, for the report
}

// Lookup returns the entry covering path, preferring the longest (most
// specific) matching pattern, or nil when perflab knows nothing about it.
func Lookup(path string) *Entry {
	var best *Entry
	bestLen := -1
	for i := range Base {
		for _, p := range Base[i].Paths {
			if MatchPrefix(p, path) && len(segments(p)) > bestLen {
				best, bestLen = &Base[i], len(segments(p))
			}
		}
	}
	return best
}

// Base is the knowledge base. Sources are the kernel documentation of each
// knob and the field reports in the design notes; every Why states the
// mechanism so an operator can judge whether it applies.
var Base = []Entry{
	{ID: "cpu-identity", Title: "CPU model / microcode", Weight: 3, Areas: []Area{All},
		Paths: []string{"cpu.vendor", "cpu.model", "cpu.family", "cpu.model_id", "cpu.stepping", "cpu.microcode", "cpu.flags", "cpu.caches", "host.product", "host.vendor"},
		Why:   "a different CPU, stepping or microcode changes instruction throughput, cache sizes and mitigation cost: every benchmark moves"},
	{ID: "virtualization", Title: "virtualisation / container", Weight: 2, Areas: []Area{All},
		Paths: []string{"host.virtualization", "host.container"},
		Why:   "a hypervisor or container adds exits, steal and cgroup limits that slow system calls, interrupts and memory access"},
	{ID: "cpu-governor", Title: "cpufreq governor / EPP", Weight: 3, Areas: []Area{CPU, Syscall, Network, Timer, Memory},
		Paths: []string{"cpu.governors", "cpu.epp", "cpu.scaling_driver", "cpu.pstate_status"},
		Why:   "powersave/ondemand governors and power-biased EPP keep cores at low clocks under bursty load, so CPU-bound work runs slower and latency rises (seed 004: TPS halved)"},
	{ID: "cpu-boost", Title: "turbo boost / frequency limits", Weight: 3, Areas: []Area{CPU, Syscall, Timer, Memory},
		Paths: []string{"cpu.boost", "cpu.max_khz", "cpu.min_khz", "cpu.scaling_max_khz"},
		Why:   "turbo off or a lowered scaling_max_freq caps the clock; CPU-bound throughput scales with frequency"},
	{ID: "cpu-idle", Title: "C-states / idle driver", Weight: 2, Areas: []Area{CPU, Syscall, Network, Timer},
		Paths: []string{"cpu.cstates", "cpu.idle_driver", "cpu.idle_governor", "kernel.params.intel_idle.max_cstate", "kernel.params.processor.max_cstate", "kernel.params.idle"},
		Why:   "deep C-states cost tens to hundreds of µs to wake from, hurting request latency and ping-pong workloads; shallow ones leave less turbo headroom"},
	{ID: "smt", Title: "SMT (hyper-threading)", Weight: 2, Areas: []Area{CPU, Memory},
		Paths: []string{"cpu.smt"},
		Why:   "sibling threads share a core's execution units and caches: throughput with many threads rises, per-thread speed falls"},
	{ID: "cpu-count", Title: "online CPUs / topology", Weight: 3, Areas: []Area{All},
		Paths: []string{"cpu.online", "cpu.threads", "cpu.cores", "cpu.sockets", "cpu.possible"},
		Why:   "a different number of CPUs changes every multi-threaded result and the cost of scheduling and interrupts"},
	{ID: "numa", Title: "NUMA layout", Weight: 2, Areas: []Area{Memory, CPU},
		Paths: []string{"cpu.numa", "sysctl.kernel.numa_balancing"},
		Why:   "remote-node memory is slower; automatic NUMA balancing migrates pages at a cost"},
	{ID: "thp", Title: "transparent huge pages", Weight: 3, Areas: []Area{Memory},
		Paths: []string{"memory.thp", "kernel.params.transparent_hugepage"},
		Why:   "THP changes the number of page faults and TLB misses: large heaps (JVM, databases) gain throughput with huge pages, while defrag=always can add compaction stalls to latency"},
	{ID: "hugepages", Title: "static huge pages", Weight: 1, Areas: []Area{Memory},
		Paths: []string{"memory.hugepages_total", "memory.hugepage_size_kib", "kernel.params.hugepages", "kernel.params.default_hugepagesz"},
		Why:   "reserved huge pages reduce TLB misses for applications that use them and remove that memory from everyone else"},
	{ID: "ksm", Title: "KSM page merging", Weight: 1, Areas: []Area{Memory, CPU},
		Paths: []string{"memory.ksm_run"},
		Why:   "ksmd scans memory in the background, costing CPU and adding copy-on-write faults"},
	{ID: "memory-size", Title: "memory size / swap", Weight: 1, Areas: []Area{Memory, Disk},
		Paths: []string{"memory.total_kib", "memory.swap_total_kib", "cgroup.memory_max_bytes"},
		Why:   "less memory means a smaller page cache and possible swapping or reclaim during the run"},
	{ID: "vm-sysctl", Title: "VM sysctls", Weight: 2, Areas: []Area{Memory, Disk},
		Paths: []string{"sysctl.vm"},
		Why:   "swappiness, dirty ratios and zone reclaim decide when the kernel writes back and reclaims, which shows up in I/O throughput and memory latency"},
	{ID: "mitigations", Title: "CPU vulnerability mitigations", Weight: 3, Areas: []Area{Syscall, Network, Disk, Timer},
		Paths: []string{"kernel.vulnerabilities", "kernel.params.mitigations", "kernel.params.pti", "kernel.params.nopti", "kernel.params.spectre_v2", "kernel.params.spec_store_bypass_disable", "kernel.params.retbleed", "kernel.params.mds", "kernel.params.tsx_async_abort", "kernel.params.l1tf", "kernel.params.srbds", "kernel.params.nospectre_v2", "kernel.params.spectre_v2_user", "kernel.params.gather_data_sampling", "kernel.params.spec_rstack_overflow"},
		Why:   "mitigations (PTI, retpolines, IBRS, buffer clearing) add cost to every kernel entry and context switch: syscall-, interrupt- and I/O-heavy work slows by up to 30%, pure computation hardly at all"},
	{ID: "clocksource", Title: "clocksource", Weight: 3, Areas: []Area{Timer, Syscall},
		Paths: []string{"kernel.clocksource", "kernel.params.clocksource", "kernel.params.tsc"},
		Why:   "with tsc, clock_gettime is a vDSO call of ~20 ns; hpet, acpi_pm or xen make each a slow hardware or hypervisor read, so time-heavy code (tracing, databases, Java) slows"},
	{ID: "kernel", Title: "kernel version / preemption", Weight: 2, Areas: []Area{All},
		Paths: []string{"kernel.release", "kernel.version", "kernel.preempt", "kernel.params.preempt"},
		Why:   "a different kernel changes the scheduler, network stack and mitigation defaults"},
	{ID: "isolation", Title: "CPU isolation / tickless", Weight: 2, Areas: []Area{CPU, Timer, Syscall},
		Paths: []string{"kernel.params.isolcpus", "kernel.params.nohz_full", "kernel.params.rcu_nocbs", "kernel.params.nohz", "kernel.params.irqaffinity"},
		Why:   "isolated and tickless CPUs run pinned work without timer ticks and RCU callbacks: less jitter there, less capacity elsewhere"},
	{ID: "scheduler", Title: "scheduler tunables", Weight: 2, Areas: []Area{CPU, Syscall, Network},
		Paths: []string{"sysctl.kernel.sched_*", "sysctl.kernel.timer_migration"},
		Why:   "scheduler granularity, migration cost and autogroup change wake-up latency and how threads spread over CPUs"},
	{ID: "cgroup-cpu", Title: "cgroup CPU quota / cpuset", Weight: 3, Areas: []Area{All},
		Paths: []string{"cgroup.cpu_quota_us", "cgroup.cpu_period_us", "cgroup.cpus", "cgroup.mems", "cgroup.version", "cgroup.path"},
		Why:   "a CFS quota throttles the whole cgroup once it has used its share of the period, and a cpuset limits the CPUs: multi-threaded throughput and tail latency suffer"},
	{ID: "nic-steering", Title: "RPS / XPS / NIC queues", Weight: 3, Areas: []Area{Network},
		Paths: []string{"net.interfaces[*].rx_queues", "net.interfaces[*].tx_queues", "net.interfaces[*].channels", "sysctl.net.core.rps_sock_flow_entries"},
		Why:   "with one queue and no RPS/XPS, all packet processing lands on one CPU's softirq, capping packets per second; spreading it raises throughput"},
	{ID: "nic-irq", Title: "IRQ affinity / irqbalance", Weight: 3, Areas: []Area{Network, Disk},
		Paths: []string{"irqs[*].affinity", "irqs[*].effective_affinity", "irqs[*].node", "net.interfaces[*].irqs", "services.irqbalance", "services.tuned"},
		Why:   "interrupts on a busy or remote-NUMA CPU delay packet and completion handling; irqbalance may move them during the run"},
	{ID: "nic-offload", Title: "NIC offloads / rings", Weight: 2, Areas: []Area{Network},
		Paths: []string{"net.interfaces[*].offloads", "net.interfaces[*].rings", "net.interfaces[*].mtu", "net.interfaces[*].qdisc", "net.interfaces[*].speed_mbps", "net.interfaces[*].driver"},
		Why:   "GRO/GSO/TSO, ring sizes and MTU decide how many packets the CPU handles per byte; small rings drop under bursts"},
	{ID: "net-sysctl", Title: "network sysctls", Weight: 2, Areas: []Area{Network},
		Paths: []string{"sysctl.net"},
		Why:   "socket buffers, backlog, somaxconn and TCP settings bound throughput and connection rates"},
	{ID: "conntrack", Title: "connection tracking", Weight: 2, Areas: []Area{Network},
		Paths: []string{"net.conntrack"},
		Why:   "netfilter conntrack adds a hash lookup per packet and drops new connections when the table is full"},
	{ID: "io-scheduler", Title: "I/O scheduler / queue", Weight: 3, Areas: []Area{Disk},
		Paths: []string{"block[*].scheduler", "block[*].nr_requests", "block[*].read_ahead_kib", "block[*].hw_queues"},
		Why:   "the elevator (none, mq-deadline, bfq, kyber), queue depth and read-ahead change IOPS and sequential throughput, especially on fast NVMe"},
	{ID: "write-cache", Title: "device write cache", Weight: 3, Areas: []Area{Disk},
		Paths: []string{"block[*].write_cache"},
		Why:   "write through waits for the medium on every write; write back acknowledges from cache (seed 004: RAID write policy, ~40x for MySQL)"},
	{ID: "block-device", Title: "block device", Weight: 3, Areas: []Area{Disk},
		Paths: []string{"block[*].model", "block[*].vendor", "block[*].rotational", "block[*].size_bytes", "block[*].discard_max_bytes"},
		Why:   "a different disk model or a rotational device changes every I/O result"},
	{ID: "mounts", Title: "mount options", Weight: 2, Areas: []Area{Disk},
		Paths: []string{"mounts"},
		Why:   "atime updates, barriers, journaling mode and the filesystem type change write amplification and fsync cost"},
	{ID: "limits", Title: "resource limits", Weight: 1, Areas: []Area{Network, Syscall},
		Paths: []string{"limits", "sysctl.fs.file-max", "sysctl.fs.nr_open"},
		Why:   "low file-descriptor limits cap connections and make servers fail under load"},
	{ID: "run-params", Title: "benchmark parameters", Weight: 3, Areas: []Area{All},
		Paths: []string{"run[*].params", "run[*].cpus"},
		Why:   "the runs were not measured the same way: different parameters or CPU placement change results by themselves"},
	{ID: "run-tool", Title: "tool version", Weight: 2, Areas: []Area{All},
		Paths: []string{"run[*].tool_version", "run[*].tool"},
		Why:   "a different tool or version may measure differently"},
	{ID: "steal", Title: "CPU steal (monitor)", Weight: 3, Areas: []Area{All},
		Paths: []string{"monitor.steal_pct"},
		Why:   "the hypervisor ran other guests on this guest's CPUs during the run; everything slows by about the stolen share"},
	{ID: "host-noise", Title: "host noise (CPU time taken from a spinning thread)", Weight: 2, Areas: []Area{All},
		Paths: []string{"hostnoise"},
		Why:   "the hypervisor, interrupts or other tasks took this share of a spinning thread's time, in gaps over 200 µs, in 0.1 s readings before and after each run; work on those CPUs loses about that share and its spread grows, even where steal reads 0 (docs/bench.md, host noise)"},
	{ID: "host-drift-cpu", Title: "host drift: the host's CPU ran at another speed (reference)", Weight: 3, Areas: []Area{CPU, Syscall, Timer},
		Paths: []string{"hostdrift.cpu"},
		Why:   "a fixed CPU reference read before and after every run ran at another speed on this side: the host (clock, hypervisor share, neighbours), not the system under test, changed"},
	{ID: "host-drift-memory", Title: "host drift: the host's memory bandwidth moved (reference)", Weight: 3, Areas: []Area{Memory},
		Paths: []string{"hostdrift.memory"},
		Why:   "a fixed 64 MiB sequential read before and after every run moved on this side: other guests on the memory bus or the shared cache, not the system under test"},
	{ID: "host-drift-syscall", Title: "host drift: system calls cost more or less (reference)", Weight: 3, Areas: []Area{Syscall, Network, Timer},
		Paths: []string{"hostdrift.syscall"},
		Why:   "a fixed getppid loop before and after every run moved on this side: kernel entry cost on this host changed (a fact of the host during these runs)"},
	{ID: "frequency", Title: "CPU frequency (monitor)", Weight: 3, Areas: []Area{CPU, Syscall, Timer, Memory},
		Paths: []string{"monitor.cpu_mhz"},
		Why:   "the cores ran at a different clock during the run (governor, thermal or power limits)"},
	{ID: "ctxsw", Title: "context switches (monitor)", Weight: 2, Areas: []Area{Syscall, Network, CPU},
		Paths: []string{"monitor.ctxt_per_s", "monitor.procs_running"},
		Why:   "more context switches or a longer run queue mean other work competed for the CPUs, or the workload blocked more"},
	{ID: "softirq", Title: "softirq load (monitor)", Weight: 2, Areas: []Area{Network, Disk},
		Paths: []string{"monitor.softirq_pct", "monitor.softirq_per_s", "monitor.irq_pct", "monitor.intr_per_s"},
		Why:   "interrupt and softirq processing took a different share of CPU: packet steering, interrupt placement or other traffic"},
	{ID: "iowait", Title: "I/O wait / pressure (monitor)", Weight: 2, Areas: []Area{Disk, Memory},
		Paths: []string{"monitor.iowait_pct", "monitor.psi_io_pct", "monitor.psi_io_avg10", "monitor.procs_blocked"},
		Why:   "tasks waited on I/O during the run"},
	{ID: "cpu-pressure", Title: "CPU pressure (monitor)", Weight: 2, Areas: []Area{All},
		Paths: []string{"monitor.psi_cpu_pct", "monitor.psi_cpu_avg10", "monitor.system_pct"},
		Why:   "runnable tasks waited for a CPU, or the kernel took more CPU time, during the run"},
	{ID: "writeback", Title: "dirty pages / writeback (monitor)", Weight: 2, Areas: []Area{Disk, Memory},
		Paths: []string{"monitor.dirty_kib", "monitor.writeback_kib", "monitor.pgpgout_kib_per_s"},
		Why:   "more dirty page cache waited for or was under writeback: flusher threads competed with the run for the disk, and writers past the dirty limits were throttled (seed 001: aggressive writeback slowed an mmap writer)"},
	{ID: "reclaim", Title: "memory reclaim (monitor)", Weight: 2, Areas: []Area{All},
		Paths: []string{"monitor.pgscan_per_s", "monitor.pgsteal_per_s", "monitor.pgscan_direct_per_s", "monitor.allocstall_per_s", "monitor.pgmajfault_per_s", "monitor.psi_memory_pct", "monitor.psi_memory_avg10"},
		Why:   "the host was short of free memory: kswapd and direct reclaim scanned and evicted pages, allocating tasks stalled in reclaim, and evicted pages had to be read back (major faults)"},
	{ID: "disk-reads", Title: "reads from disk (monitor)", Weight: 2, Areas: []Area{Disk, Memory},
		Paths: []string{"monitor.pgpgin_kib_per_s"},
		Why:   "more data was read from the block devices: the page cache held less of the working set (a smaller cache, or other work evicting it), or other work read alongside"},
}
