package snapshot

import "time"

// Schema is the version of the snapshot JSON written by this perflab. Readers
// accept any schema up to and including it and refuse newer ones.
const Schema = 1

// Snapshot is the typed facts of one host at one moment. A fact the host
// lacks is left at its zero value and explained in Unavailable under its
// dotted JSON path ("cpu.governors": "… does not exist on this host"), so a
// rule can always tell "absent" from "zero".
type Snapshot struct {
	Schema  int       `json:"schema"`   // format version of this document (see Schema)
	ID      string    `json:"id"`       // content-independent random id, set at collection
	TakenAt time.Time `json:"taken_at"` // when the collection started (UTC)
	Root    string    `json:"root"`     // the root it was collected from ("/" when live)
	Perflab string    `json:"perflab"`  // perflab version that collected it

	Host     Host               `json:"host"`
	CPU      CPU                `json:"cpu"`
	Memory   Memory             `json:"memory"`
	Kernel   Kernel             `json:"kernel"`
	Sysctl   map[string]string  `json:"sysctl"` // "net.core.somaxconn": "4096", white space as the kernel prints it
	Net      Net                `json:"net"`
	IRQs     []IRQ              `json:"irqs"`
	Block    []BlockDevice      `json:"block"`
	Mounts   []Mount            `json:"mounts"`
	Cgroup   Cgroup             `json:"cgroup"`
	Services map[string]Service `json:"services"` // keyed by name: irqbalance, tuned, auditd, …
	Tools    map[string]string  `json:"tools"`    // tool name → path found on PATH (no process is spawned)
	Load     Load               `json:"load"`
	Limits   Limits             `json:"limits"`
	Process  *Process           `json:"process,omitempty"` // only with --pid
	// Container is the container whose view this is (only with
	// --container): its network-namespaced facts (sysctl.net.*, sockets)
	// and cgroup are the container's, the rest is the host's.
	Container *Container `json:"container,omitempty"`

	Unavailable map[string]string `json:"unavailable"` // dotted fact path → why it is missing
}

// Host identifies the machine and how it is virtualised.
type Host struct {
	Hostname       string `json:"hostname"`       // /proc/sys/kernel/hostname
	MachineID      string `json:"machine_id"`     // /etc/machine-id
	BootID         string `json:"boot_id"`        // /proc/sys/kernel/random/boot_id: changes at every boot
	Arch           string `json:"arch"`           // uname machine: x86_64, aarch64
	OS             string `json:"os"`             // PRETTY_NAME from /etc/os-release
	Virtualization string `json:"virtualization"` // none, kvm, xen, vmware, hyperv, qemu, oracle, powervm, zvm, lpar, other
	// HypervisorVendor, Hypervisor and VirtualizationType are lscpu's
	// "Hypervisor vendor" (KVM, Xen, VMware, Microsoft, Oracle, IBM, pHyp …),
	// "Hypervisor" (the name the hypervisor gives itself, s390 only: PR/SM,
	// z/VM 6.1.0, KVM/Linux) and "Virtualization type" (full, para,
	// container), judged from the same files lscpu reads.
	HypervisorVendor   string  `json:"hypervisor_vendor,omitempty"`
	Hypervisor         string  `json:"hypervisor,omitempty"`
	VirtualizationType string  `json:"virtualization_type,omitempty"`
	Container          string  `json:"container"`      // "" on a host; docker, podman, lxc, kubernetes, containerd, other
	Vendor             string  `json:"vendor"`         // DMI sys_vendor
	Product            string  `json:"product"`        // DMI product_name
	UptimeSeconds      float64 `json:"uptime_seconds"` // /proc/uptime
}

// CPU is the processor, its topology and its power management.
type CPU struct {
	Vendor    string     `json:"vendor"`    // GenuineIntel, AuthenticAMD, HiSilicon, ARM …
	Model     string     `json:"model"`     // model name
	Family    string     `json:"family"`    // cpu family (x86) or CPU architecture (arm)
	ModelID   string     `json:"model_id"`  // model number (x86) or CPU part (arm)
	Stepping  string     `json:"stepping"`  // stepping or CPU variant
	Microcode string     `json:"microcode"` // as in /proc/cpuinfo, e.g. 0x2007006
	Flags     []string   `json:"flags"`     // a selection that matters for performance (see collector)
	Online    []int      `json:"online"`    // online CPU ids
	Possible  int        `json:"possible"`  // number of possible CPUs (cpu/possible: slots the kernel allocated for)
	Present   int        `json:"present"`   // number of present CPUs (cpu/present: what lscpu calls "CPU(s)")
	Sockets   int        `json:"sockets"`   // physical packages
	Cores     int        `json:"cores"`     // physical cores, all sockets
	Threads   int        `json:"threads"`   // logical CPUs online
	SMT       SMT        `json:"smt"`
	NUMA      []NUMANode `json:"numa"`
	Caches    []Cache    `json:"caches"` // caches of cpu0, one entry per level/type

	ScalingDriver string           `json:"scaling_driver"`  // acpi-cpufreq, intel_pstate, cppc_cpufreq …
	Governors     map[string][]int `json:"governors"`       // governor → CPUs using it
	EPP           map[string][]int `json:"epp"`             // energy_performance_preference → CPUs
	MinKHz        int64            `json:"min_khz"`         // cpuinfo_min_freq of cpu0
	MaxKHz        int64            `json:"max_khz"`         // cpuinfo_max_freq of cpu0
	CurKHz        map[string]int64 `json:"cur_khz"`         // cpu id → scaling_cur_freq
	ScalingMaxKHz map[string]int64 `json:"scaling_max_khz"` // cpu id → scaling_max_freq (capped below MaxKHz?)
	Boost         *bool            `json:"boost,omitempty"` // cpufreq/boost, or !intel_pstate/no_turbo
	PstateStatus  string           `json:"pstate_status"`   // intel_pstate/status: active, passive, off

	IdleDriver   string   `json:"idle_driver"`   // intel_idle, acpi_idle, haltpoll, none
	IdleGovernor string   `json:"idle_governor"` // menu, teo, ladder, haltpoll
	CStates      []CState `json:"cstates"`       // states of cpu0
}

// SMT is simultaneous multithreading state.
type SMT struct {
	Control        string `json:"control"` // on, off, forceoff, notsupported, notimplemented
	Active         bool   `json:"active"`
	ThreadsPerCore int    `json:"threads_per_core"`
}

// NUMANode is one memory node.
type NUMANode struct {
	ID             int   `json:"id"`
	CPUs           []int `json:"cpus"`
	MemTotalKiB    int64 `json:"mem_total_kib"`
	MemFreeKiB     int64 `json:"mem_free_kib"`
	HugePagesTotal int64 `json:"hugepages_total"` // default-size hugepages on this node
	HugePagesFree  int64 `json:"hugepages_free"`  // HugePages_Free
}

// Cache is one CPU cache.
type Cache struct {
	Level      int    `json:"level"`
	Type       string `json:"type"` // Data, Instruction, Unified
	SizeKiB    int64  `json:"size_kib"`
	SharedWith []int  `json:"shared_with"` // CPUs sharing it
}

// CState is one cpuidle state.
type CState struct {
	Name       string `json:"name"`
	Desc       string `json:"desc"`
	LatencyUS  int64  `json:"latency_us"`
	Residency  int64  `json:"residency_us"`
	DisabledOn []int  `json:"disabled_on"` // CPUs where the state is disabled
}

// Memory is physical memory, THP and huge pages.
type Memory struct {
	TotalKiB         int64 `json:"total_kib"`          // MemTotal
	AvailableKiB     int64 `json:"available_kib"`      // MemAvailable
	SwapTotalKiB     int64 `json:"swap_total_kib"`     // SwapTotal
	SwapFreeKiB      int64 `json:"swap_free_kib"`      // SwapFree
	AnonHugePagesKiB int64 `json:"anon_hugepages_kib"` // AnonHugePages: anonymous memory THP really backs
	DirtyKiB         int64 `json:"dirty_kib"`          // Dirty
	WritebackKiB     int64 `json:"writeback_kib"`      // Writeback

	THP THP `json:"thp"`

	HugePagesTotal  int64  `json:"hugepages_total"`   // HugePages_Total (default size)
	HugePagesFree   int64  `json:"hugepages_free"`    // HugePages_Free
	HugePageSizeKiB int64  `json:"hugepage_size_kib"` // Hugepagesize
	KSMRun          string `json:"ksm_run"`           // /sys/kernel/mm/ksm/run: 0, 1, 2
}

// THP is transparent huge page policy; each value is the selected word of
// the kernel's "[bracketed]" list.
type THP struct {
	Enabled          string `json:"enabled"`           // always, madvise, never
	Defrag           string `json:"defrag"`            // always, defer, defer+madvise, madvise, never
	ShmemEnabled     string `json:"shmem_enabled"`     // always, within_size, advise, never, deny, force
	KhugepagedDefrag string `json:"khugepaged_defrag"` // 0 or 1
}

// Kernel is the running kernel and its boot configuration.
type Kernel struct {
	Release         string            `json:"release"`         // uname -r
	Version         string            `json:"version"`         // uname -v (build string, shows PREEMPT)
	Cmdline         string            `json:"cmdline"`         // /proc/cmdline as is
	Params          map[string]string `json:"params"`          // cmdline parsed: flag → "" , key → value (last wins)
	Vulnerabilities map[string]string `json:"vulnerabilities"` // file name → text
	Clocksource     string            `json:"clocksource"`     // current clocksource (tsc, kvm-clock, hpet, arch_sys_counter …)
	Clocksources    []string          `json:"clocksources"`    // available
	Modules         []string          `json:"modules"`         // loaded module names, sorted
	Preempt         string            `json:"preempt"`         // none, voluntary, full, rt, dynamic(…) or ""
	Tainted         int64             `json:"tainted"`         // /proc/sys/kernel/tainted bit mask
}

// Net is network interfaces and connection tracking.
type Net struct {
	Interfaces []NIC      `json:"interfaces"`
	Conntrack  Conntrack  `json:"conntrack"`
	Sockets    SocketStat `json:"sockets"` // physical packages
}

// NIC is one network interface.
type NIC struct {
	Name      string `json:"name"`
	Driver    string `json:"driver"`     // device/driver link name; "" for virtual
	Virtual   bool   `json:"virtual"`    // under /sys/devices/virtual (lo, veth, bridge…)
	PCI       string `json:"pci"`        // bus address when PCI
	OperState string `json:"operstate"`  // up, down, unknown
	SpeedMbps int64  `json:"speed_mbps"` // -1 when unknown
	MTU       int64  `json:"mtu"`
	NUMANode  int    `json:"numa_node"` // -1 when none
	Qdisc     string `json:"qdisc,omitempty"`

	RxQueues []Queue `json:"rx_queues"`
	TxQueues []Queue `json:"tx_queues"`

	Channels *Channels       `json:"channels,omitempty"` // ethtool -l
	Rings    *Rings          `json:"rings,omitempty"`    // ethtool -g
	Offloads map[string]bool `json:"offloads,omitempty"` // ethtool -k, feature → on
	IRQs     []int           `json:"irqs"`               // IRQ numbers serving this NIC
}

// Queue is one rx or tx queue and its steering masks.
type Queue struct {
	Name       string `json:"name"`               // rx-0, tx-3
	RPS        string `json:"rps_cpus,omitempty"` // hex mask as the kernel prints it (rx)
	XPS        string `json:"xps_cpus,omitempty"` // hex mask (tx)
	RPSFlowCnt int64  `json:"rps_flow_cnt,omitempty"`
}

// Channels is the NIC's queue (channel) counts.
type Channels struct {
	MaxRx       int `json:"max_rx"`
	MaxTx       int `json:"max_tx"`
	MaxOther    int `json:"max_other"`
	MaxCombined int `json:"max_combined"`
	Rx          int `json:"rx"`
	Tx          int `json:"tx"`
	Other       int `json:"other"`
	Combined    int `json:"combined"`
}

// Rings is the NIC's ring sizes.
type Rings struct {
	RxMax int `json:"rx_max"`
	TxMax int `json:"tx_max"`
	Rx    int `json:"rx"`
	Tx    int `json:"tx"`
}

// Conntrack is netfilter connection tracking.
type Conntrack struct {
	Loaded    bool     `json:"loaded"`
	Count     int64    `json:"count"`
	Max       int64    `json:"max"`
	Buckets   int64    `json:"buckets"`
	Netfilter []string `json:"netfilter_modules"` // loaded nf_*, xt_*, ip_tables, nft_* modules
}

// SocketStat is /proc/net/sockstat.
type SocketStat struct {
	TCPInUse    int64 `json:"tcp_inuse"`
	TCPTimeWait int64 `json:"tcp_tw"`
	TCPAlloc    int64 `json:"tcp_alloc"`
}

// IRQ is one line of /proc/interrupts with its affinity.
type IRQ struct {
	Number    string   `json:"number"`             // "24", or "NMI", "LOC" for architecture lines
	Chip      string   `json:"chip"`               // PCI-MSI, IO-APIC, …
	Actions   string   `json:"actions"`            // device names: "virtio0-input.0"
	Total     uint64   `json:"total"`              // interrupts on all CPUs since boot
	PerCPU    []uint64 `json:"per_cpu"`            // interrupts per CPU since boot
	Affinity  []int    `json:"affinity"`           // smp_affinity_list
	Effective []int    `json:"effective_affinity"` // effective_affinity_list when present
	Node      int      `json:"node"`               // /proc/irq/N/node, -1 when none
}

// BlockDevice is one whole block device (no partitions).
type BlockDevice struct {
	Name            string   `json:"name"`
	Model           string   `json:"model"`
	Vendor          string   `json:"vendor"`
	SizeBytes       int64    `json:"size_bytes"`        // device size
	Rotational      bool     `json:"rotational"`        // queue/rotational: a spinning disk
	Virtual         bool     `json:"virtual"`           // loop, ram, dm, md, zram …
	Scheduler       string   `json:"scheduler"`         // the [selected] one
	Schedulers      []string `json:"schedulers"`        // available
	ReadAheadKiB    int64    `json:"read_ahead_kib"`    // queue/read_ahead_kb
	NrRequests      int64    `json:"nr_requests"`       // queue/nr_requests
	WriteCache      string   `json:"write_cache"`       // "write back" or "write through"
	HWQueues        int      `json:"hw_queues"`         // blk-mq hardware queues (mq/ entries)
	DiscardMaxBytes int64    `json:"discard_max_bytes"` // queue/discard_max_bytes: 0 means no discard support
}

// Mount is one mounted filesystem.
type Mount struct {
	Device     string   `json:"device"`      // mount source
	MountPoint string   `json:"mount_point"` // where it is mounted
	FSType     string   `json:"fs_type"`     // ext4, xfs, tmpfs …
	Options    []string `json:"options"`     // mount options, per-mount and superblock
}

// Cgroup is the cgroup of the collecting process (or of --pid): the limits a
// workload in it runs under.
type Cgroup struct {
	Version        int    `json:"version"`          // 1, 2; 0 when unknown
	Path           string `json:"path"`             // cgroup path of the process
	CPUQuotaUS     int64  `json:"cpu_quota_us"`     // -1 for unlimited
	CPUPeriodUS    int64  `json:"cpu_period_us"`    // CFS period of the quota
	CPUs           []int  `json:"cpus"`             // cpuset.cpus.effective
	Mems           []int  `json:"mems"`             // cpuset.mems.effective
	MemoryMaxBytes int64  `json:"memory_max_bytes"` // -1 for unlimited
	NrPeriods      int64  `json:"nr_periods"`       // cpu.stat: enforcement periods elapsed
	NrThrottled    int64  `json:"nr_throttled"`     // cpu.stat: periods in which the group was throttled
	ThrottledUS    int64  `json:"throttled_us"`     // cpu.stat: total time throttled

	MemoryUsageBytes      int64 `json:"memory_usage_bytes,omitempty"`       // memory.current (v1: memory.usage_in_bytes) of the leaf; 0 unknown
	MemoryWorkingSetBytes int64 `json:"memory_working_set_bytes,omitempty"` // usage minus inactive file pages (what kubelet evicts on); 0 unknown
	PidsMax               int64 `json:"pids_max,omitempty"`                 // tightest pids.max from the leaf up; -1 unlimited, 0 unknown

	// CPUQuotaDir is the host directory whose cpu.max (v1: cpu.cfs_quota_us)
	// sets CPUQuotaUS, which may be an ancestor's; "" when unlimited.
	CPUQuotaDir string `json:"cpu_quota_dir,omitempty"`
}

// Service is a daemon of interest found running.
type Service struct {
	Running bool  `json:"running"` // a process with this name runs
	PIDs    []int `json:"pids"`    // its PIDs
}

// Load is CPU time shares since boot, run queue and pressure.
type Load struct {
	LoadAvg1     float64 `json:"loadavg1"`      // 1-minute load average
	LoadAvg5     float64 `json:"loadavg5"`      // 5-minute load average
	ProcsRunning int64   `json:"procs_running"` // runnable tasks now
	ProcsBlocked int64   `json:"procs_blocked"` // tasks blocked on I/O now
	// CPU time shares since boot, percent of all CPU time.
	UserPct    float64 `json:"user_pct"`
	SystemPct  float64 `json:"system_pct"`  // kernel time share since boot
	IdlePct    float64 `json:"idle_pct"`    // idle share since boot
	IOWaitPct  float64 `json:"iowait_pct"`  // iowait share since boot
	IRQPct     float64 `json:"irq_pct"`     // hard IRQ share since boot
	SoftIRQPct float64 `json:"softirq_pct"` // softirq share since boot
	StealPct   float64 `json:"steal_pct"`   // time the hypervisor gave to others since boot
	// Pressure stall information, avg10 and avg60 of "some" (percent).
	PSI map[string]PSI `json:"psi"` // cpu, memory, io
}

// PSI is one pressure file's "some" line.
type PSI struct {
	Avg10 float64 `json:"avg10"`
	Avg60 float64 `json:"avg60"`
	Total uint64  `json:"total_us"`
}

// Limits is host-wide and process resource limits.
type Limits struct {
	FileNrAllocated int64 `json:"file_nr_allocated"` // /proc/sys/fs/file-nr: allocated file handles
	FileMax         int64 `json:"file_max"`          // fs.file-max
	NofileSoft      int64 `json:"nofile_soft"`       // of the collecting process (or --pid); -1 unlimited
	NofileHard      int64 `json:"nofile_hard"`       // hard RLIMIT_NOFILE
	Threads         int64 `json:"threads"`           // tasks on the host
}

// Process is one process of interest (--pid).
type Process struct {
	PID              int      `json:"pid"`
	Comm             string   `json:"comm"`
	Cmdline          []string `json:"cmdline"` // /proc/cmdline as is
	LDPreload        string   `json:"ld_preload"`
	Allocators       []string `json:"allocators"`         // tcmalloc, jemalloc, mimalloc found mapped or preloaded
	AnonHugePagesKiB int64    `json:"anon_hugepages_kib"` // AnonHugePages: anonymous memory THP really backs
	RssKiB           int64    `json:"rss_kib"`
	THPDisabled      bool     `json:"thp_disabled"` // prctl PR_SET_THP_DISABLE (THP_enabled: 0)
	CPUsAllowed      []int    `json:"cpus_allowed"`
	MemsAllowed      []int    `json:"mems_allowed"`
	NofileSoft       int64    `json:"nofile_soft"`
	Threads          int64    `json:"threads"`
	Cgroup           string   `json:"cgroup"`
}

// Container identifies the container a snapshot views and what of the host
// does not reach it.
type Container struct {
	Runtime string `json:"runtime"`       // podman, docker, containerd, cri-o, kubernetes, or "process" for --pid
	ID      string `json:"id"`            // full container id ("" for a bare --pid)
	Name    string `json:"name"`          // runtime name, or the Kubernetes container name
	Pod     string `json:"pod,omitempty"` // NAMESPACE/NAME for a Kubernetes container
	PID     int    `json:"pid"`           // the process whose namespaces and cgroup are viewed
	// HostNetwork is true when the container shares the host's network
	// namespace: its net sysctls are the host's.
	HostNetwork bool `json:"host_network"`
	// HostSysctl is the host's value of every network-namespaced sysctl
	// whose value differs in the container: what host tuning did not reach.
	HostSysctl map[string]string `json:"host_sysctl,omitempty"`
}
