package factpath

import (
	"strings"
)

// Kind is what a difference in a fact can mean.
type Kind string

const (
	// Setting is configuration someone chose and can change back: sysctls,
	// kernel parameters, THP, the governor, mount options of persistent
	// filesystems, IRQ affinity, RPS/XPS, NIC settings, cgroup limits,
	// services, how a benchmark was run.
	Setting Kind = "setting"
	// Identity is what the machine is: CPU model and microcode, kernel
	// release, hardware topology, the virtualisation, NIC and disk models.
	Identity Kind = "identity"
	// State is what the host is doing or went through: free and total
	// memory (which ballooning and hot-plug move), runtime mounts such as
	// /run/netns, dirty pages, load, counters, the monitor series.
	State Kind = "state"
	// Meta is about the snapshot document, not the host: its id, time,
	// schema and the list of unavailable facts.
	Meta Kind = "meta"
)

// kinds classifies the catalogue. The most specific (longest) matching
// pattern wins; every catalogue path must match one (TestEveryPathHasAKind).
var kinds = []struct {
	pattern string
	kind    Kind
}{
	{"schema", Meta}, {"id", Meta}, {"taken_at", Meta}, {"root", Meta}, {"perflab", Meta}, {"unavailable", Meta},

	{"host", Identity},
	{"host.boot_id", State}, {"host.uptime_seconds", State},

	{"cpu", Identity}, // vendor, model, family, model_id, stepping, microcode, flags, caches, sockets, cores, threads, possible, min/max_khz
	{"cpu.online", Setting},
	{"cpu.smt.control", Setting}, {"cpu.smt.active", Setting},
	{"cpu.numa[*].mem_total_kib", State}, {"cpu.numa[*].mem_free_kib", State},
	{"cpu.numa[*].hugepages_total", Setting}, {"cpu.numa[*].hugepages_free", State},
	{"cpu.scaling_driver", Setting}, {"cpu.governors", Setting}, {"cpu.epp", Setting},
	{"cpu.cur_khz", State}, {"cpu.scaling_max_khz", Setting}, {"cpu.boost", Setting}, {"cpu.pstate_status", Setting},
	{"cpu.idle_driver", Setting}, {"cpu.idle_governor", Setting}, {"cpu.cstates[*].disabled_on", Setting},

	// Total memory is state: a balloon or hot-plug moves it on a running
	// VM (the identity is its size class, which a reader derives).
	{"memory", State},
	{"memory.swap_total_kib", Setting}, {"memory.thp", Setting},
	{"memory.hugepages_total", Setting}, {"memory.hugepage_size_kib", Setting}, {"memory.ksm_run", Setting},

	{"kernel", Setting}, // cmdline, params, clocksource, modules, preempt
	{"kernel.release", Identity}, {"kernel.version", Identity}, {"kernel.clocksources", Identity},
	{"kernel.tainted", State},
	// The mitigation in effect follows from settings (mitigations=, pti=…)
	// on a given CPU and microcode; a difference is most often a setting.
	{"kernel.vulnerabilities", Setting},

	{"sysctl", Setting},
	// Counters and ids the kernel exposes under /proc/sys.
	{"sysctl.kernel.random", State}, {"sysctl.kernel.ns_last_pid", State}, {"sysctl.kernel.pty.nr", State},
	{"sysctl.kernel.tainted", State}, {"sysctl.fs.dentry-state", State}, {"sysctl.fs.inode-nr", State},
	{"sysctl.fs.inode-state", State}, {"sysctl.fs.file-nr", State}, {"sysctl.fs.aio-nr", State},
	{"sysctl.fs.dquot-nr", State}, {"sysctl.net.netfilter.nf_conntrack_count", State},

	{"net", Setting},
	{"net.interfaces", Setting}, // mtu, qdisc, queues (RPS/XPS), channels, rings, offloads, irqs
	{"net.interfaces[*].name", Identity}, {"net.interfaces[*].driver", Identity}, {"net.interfaces[*].virtual", Identity},
	{"net.interfaces[*].pci", Identity}, {"net.interfaces[*].numa_node", Identity}, {"net.interfaces[*].speed_mbps", Identity},
	{"net.interfaces[*].operstate", State},
	{"net.interfaces[*].channels.max_rx", Identity}, {"net.interfaces[*].channels.max_tx", Identity},
	{"net.interfaces[*].channels.max_other", Identity}, {"net.interfaces[*].channels.max_combined", Identity},
	{"net.interfaces[*].rings.rx_max", Identity}, {"net.interfaces[*].rings.tx_max", Identity},
	{"net.conntrack", Setting}, {"net.conntrack.count", State},
	{"net.sockets", State},

	{"irqs", Identity}, // number, chip, actions, node
	{"irqs[*].affinity", Setting}, {"irqs[*].effective_affinity", Setting},
	{"irqs[*].total", State}, {"irqs[*].per_cpu", State},

	{"block", Identity}, // name, model, vendor, size, rotational, virtual, schedulers, hw_queues, discard
	{"block[*].scheduler", Setting}, {"block[*].read_ahead_kib", Setting}, {"block[*].nr_requests", Setting},
	{"block[*].write_cache", Setting},

	{"mounts", Setting}, // persistent filesystems; runtime ones are State (see KindOf)

	{"cgroup", Setting},
	{"cgroup.nr_periods", State}, {"cgroup.nr_throttled", State}, {"cgroup.throttled_us", State},
	{"cgroup.memory_usage_bytes", State}, {"cgroup.memory_working_set_bytes", State},

	{"container", Identity},                                   // runtime, id, name, pod: what the snapshot views
	{"container.pid", State}, {"container.host_sysctl", Meta}, // the host's values: a copy of another snapshot's facts

	{"services", Setting}, {"services.*.pids", State},
	{"tools", Identity}, // installed software

	{"load", State},

	{"limits", Setting},
	{"limits.file_nr_allocated", State}, {"limits.threads", State},

	{"process", Setting}, // cmdline, LD_PRELOAD, allocators, THP opt-out, CPU and memory placement, limits, cgroup
	{"process.pid", State}, {"process.comm", Identity}, {"process.rss_kib", State},
	{"process.anon_hugepages_kib", State}, {"process.threads", State},

	{"run", Setting}, // how the benchmark was run
	{"monitor", State},
	{"hostnoise", State},
	{"hostdrift", State},
}

// runtimeMounts are mount points (and their subtrees) that the system or
// its tools create at run time: their coming and going is state, not a
// setting anyone chose (ip netns add mounts /run/netns/NAME).
var runtimeMounts = []string{"/run", "/proc", "/sys", "/dev", "/tmp", "/var/run", "/var/lib/docker", "/var/lib/containers", "/var/lib/kubelet", "/snap"}

// KindOf classifies a fact path or pattern (concrete keys allowed:
// "mounts[/run/netns].options", "sysctl.vm.swappiness"). ok is false for
// a path outside the catalogue's roots.
func KindOf(path string) (k Kind, ok bool) {
	segs := Segments(path)
	if len(segs) == 0 {
		return "", false
	}
	if segs[0] == "mounts" {
		if mp, has := firstKey(path); has && runtimeMount(mp) {
			return State, true
		}
	}
	best := -1
	for _, r := range kinds {
		ps := Segments(r.pattern)
		if len(ps) > best && matchPrefix(ps, segs) {
			best, k = len(ps), r.kind
		}
	}
	return k, best >= 0
}

// firstKey returns the first bracketed array key of a path.
func firstKey(path string) (string, bool) {
	i := strings.IndexByte(path, '[')
	if i < 0 {
		return "", false
	}
	depth := 0
	for j := i; j < len(path); j++ {
		switch path[j] {
		case '[':
			depth++
		case ']':
			depth--
			if depth == 0 {
				return path[i+1 : j], true
			}
		}
	}
	return "", false
}

func runtimeMount(mp string) bool {
	for _, r := range runtimeMounts {
		if mp == r || strings.HasPrefix(mp, r+"/") {
			return true
		}
	}
	return false
}

// Match reports whether pattern names path or one of its ancestors, on
// segment boundaries ("memory.thp" matches "memory.thp.enabled", not
// "memory.thpx"); in the pattern "*" is any one segment, "sched_*" any
// segment starting with "sched_", and any array key matches any other.
func Match(pattern, path string) bool {
	// Most calls compare a path with a pattern of another root (compare
	// tries every volatile pattern on every leaf of two snapshots): tell
	// those apart by their first segments before splitting anything.
	if p, ok := firstSegment(pattern); ok {
		if x, ok := firstSegment(path); ok && x != p {
			return false
		}
	}
	return matchPrefix(Segments(pattern), Segments(path))
}

// firstSegment is s's first segment when it is plain (ASCII, no wildcard,
// no stray bracket) and so exactly what Segments would return first.
func firstSegment(s string) (string, bool) {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '.' || c == '[':
			return s[:i], i > 0
		case c == ']' || c == '*' || c >= 0x80:
			return "", false
		}
	}
	return s, s != ""
}

func matchPrefix(ps, xs []string) bool {
	if len(ps) > len(xs) {
		return false
	}
	for i, p := range ps {
		switch {
		case p == "*" || p == xs[i]:
		case len(p) > 1 && strings.HasSuffix(p, "*") && strings.HasPrefix(xs[i], p[:len(p)-1]):
		default:
			return false
		}
	}
	return true
}
