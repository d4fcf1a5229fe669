package snapshot

import (
	"fmt"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/perflab/perflab/internal/cpuset"
)

// perfFlags are the CPU flags worth recording: those that change how fast
// code runs or how it must be tuned (vector width, fast string ops, TSC
// reliability, huge-page and atomics support, virtualisation). The full
// list is a kilobyte of noise in every snapshot.
var perfFlags = map[string]bool{
	// x86
	"hypervisor": true, "ht": true, "constant_tsc": true, "nonstop_tsc": true,
	"tsc_known_freq": true, "rdtscp": true, "pdpe1gb": true, "pcid": true,
	"invpcid": true, "erms": true, "fsrm": true, "sse4_2": true, "popcnt": true,
	"avx": true, "avx2": true, "fma": true, "bmi2": true, "avx512f": true,
	"avx512bw": true, "avx512vl": true, "avx512_vnni": true, "avx512_bf16": true,
	"amx_tile": true, "aes": true, "vaes": true, "sha_ni": true, "rdrand": true,
	"x2apic": true, "tsc_deadline_timer": true, "arat": true, "md_clear": true,
	"ibrs_enhanced": true, "vmx": true, "svm": true, "pku": true,
	"clwb": true, "movdir64b": true, "waitpkg": true,
	// native frequency control: intel_pstate (HWP) and amd-pstate (CPPC)
	"hwp": true, "hwp_epp": true, "cppc": true,
	// arm64
	"asimd": true, "sve": true, "sve2": true, "atomics": true, "crc32": true,
	"sha2": true, "sha512": true, "pmull": true, "ssbs": true, "lrcpc": true,
	"i8mm": true, "bf16": true, "dcpop": true,
}

// collectCPU records the processor's identity (from /proc/cpuinfo), its
// topology (sysfs), SMT state, NUMA nodes and cpu0's caches.
func collectCPU(c *collector) {
	cpu := &c.s.CPU
	ci := c.cpuInfo()
	if ci.err != nil {
		c.missErr("cpu.model", "/proc/cpuinfo", ci.err)
	} else {
		ci.fill(cpu)
		if cpu.Model == "" {
			c.miss("cpu.model", ci.modelReason())
		}
		for _, f := range ci.flags() {
			if perfFlags[f] {
				cpu.Flags = append(cpu.Flags, f)
			}
		}
		sort.Strings(cpu.Flags)
		if cpu.Microcode == "" {
			c.miss("cpu.microcode", "/proc/cpuinfo has no microcode field on this architecture")
		}
	}

	if online, err := c.fs.ReadString("/sys/devices/system/cpu/online"); err != nil {
		c.missErr("cpu.online", "/sys/devices/system/cpu/online", err)
	} else if cpu.Online, err = cpuset.ParseList(online); err != nil {
		c.miss("cpu.online", "/sys/devices/system/cpu/online: "+err.Error())
	}
	if possible, err := c.fs.ReadString("/sys/devices/system/cpu/possible"); err != nil {
		c.missErr("cpu.possible", "/sys/devices/system/cpu/possible", err)
	} else if ids, err := cpuset.ParseList(possible); err != nil {
		c.miss("cpu.possible", "/sys/devices/system/cpu/possible: "+err.Error())
	} else {
		cpu.Possible = len(ids)
	}
	if present, err := c.fs.ReadString("/sys/devices/system/cpu/present"); err != nil {
		if ci.err == nil && ci.count > 0 {
			cpu.Present = ci.count // every processor cpuinfo lists is present
		} else {
			c.missErr("cpu.present", "/sys/devices/system/cpu/present", err)
		}
	} else if ids, err := cpuset.ParseList(present); err != nil {
		c.miss("cpu.present", "/sys/devices/system/cpu/present: "+err.Error())
	} else {
		cpu.Present = len(ids)
	}
	if cpu.Online == nil && ci.err == nil {
		// Without sysfs, every processor cpuinfo lists is online.
		for i := 0; i < ci.count; i++ {
			cpu.Online = append(cpu.Online, i)
		}
		delete(c.s.Unavailable, "cpu.online")
	}
	cpu.Threads = len(cpu.Online)

	cpuTopology(c, ci)
	cpuSMT(c)
	cpuNUMA(c)
	cpuCaches(c)
}

// cpuTopology counts sockets and physical cores of the online CPUs the way
// lscpu does: cores are distinct sets of thread siblings (core_cpus_list,
// thread_siblings_list, or the thread_siblings mask on kernels without
// lists) — core_id repeats across sockets and, on some ARM servers, across
// clusters; sockets are distinct physical_package_id values, or, where the
// kernel reports -1 (POWER under pHyp, sparc64, RISC-V before 6.x), distinct
// sets of package siblings (package_cpus_list, core_siblings_list or the
// core_siblings mask). Without sysfs topology the x86 cpuinfo "physical
// id"/"core id" pairs are counted instead.
func cpuTopology(c *collector, ci *cpuInfo) {
	cpu := &c.s.CPU
	packages, siblingSets, cores := map[string]bool{}, map[string]bool{}, map[string]bool{}
	noID := false
	var topoErr error
	for _, id := range cpu.Online {
		dir := fmt.Sprintf("/sys/devices/system/cpu/cpu%d/topology/", id)
		pkg, err := c.fs.ReadString(dir + "physical_package_id")
		if err != nil {
			topoErr = fmt.Errorf("%s: %w", dir+"physical_package_id", err)
			break
		}
		if strings.HasPrefix(pkg, "-") {
			noID = true
		}
		packages[pkg] = true
		if set, ok := siblingSet(c, dir, "package_cpus", "core_siblings"); ok {
			siblingSets[set] = true
		}
		set, ok := siblingSet(c, dir, "core_cpus", "thread_siblings")
		if !ok {
			set = strconv.Itoa(id) // no sibling files: every CPU is a core
		}
		cores[set] = true
	}
	if noID && len(siblingSets) > 0 {
		packages = siblingSets
	}
	if len(packages) > 0 && topoErr == nil && !(noID && len(siblingSets) == 0) {
		cpu.Sockets, cpu.Cores = len(packages), len(cores)
		return
	}
	if ci.err == nil && len(ci.packages) > 0 {
		cpu.Sockets, cpu.Cores = len(ci.packages), len(ci.cores)
		return
	}
	reason := "no /sys/devices/system/cpu/cpuN/topology and no physical id in /proc/cpuinfo"
	switch {
	case noID:
		reason = "physical_package_id is -1 and no package sibling lists say which CPUs share a socket"
	case topoErr != nil:
		reason = "CPU topology: " + topoErr.Error()
	}
	c.miss("cpu.sockets", reason)
	c.miss("cpu.cores", reason)
}

// siblingSet reads a topology sibling set in its normal form: the first of
// the listed files that exists, as NAME_list or, on kernels without lists,
// as the hex mask NAME.
func siblingSet(c *collector, dir string, names ...string) (string, bool) {
	for _, n := range names {
		if v, err := c.fs.ReadString(dir + n + "_list"); err == nil {
			if ids, err := cpuset.ParseList(v); err == nil {
				return cpuset.FormatList(ids), true
			}
		}
		if v, err := c.fs.ReadString(dir + n); err == nil {
			if ids, err := cpuset.ParseMask(v); err == nil {
				return cpuset.FormatList(ids), true
			}
		}
	}
	return "", false
}

// cpuSMT records SMT control and whether sibling threads are in use.
func cpuSMT(c *collector) {
	cpu := &c.s.CPU
	if cpu.Cores > 0 {
		cpu.SMT.ThreadsPerCore = (cpu.Threads + cpu.Cores - 1) / cpu.Cores
	}
	const dir = "/sys/devices/system/cpu/smt/"
	if v, err := c.fs.ReadString(dir + "control"); err == nil {
		cpu.SMT.Control = v
	} else {
		c.missErr("cpu.smt.control", dir+"control", err)
	}
	if v, err := c.fs.ReadString(dir + "active"); err == nil {
		cpu.SMT.Active = v == "1"
	} else {
		cpu.SMT.Active = cpu.SMT.ThreadsPerCore > 1
	}
}

// cpuNUMA records each memory node's CPUs, memory and default-size huge
// pages.
func cpuNUMA(c *collector) {
	const dir = "/sys/devices/system/node"
	ents, err := c.fs.ReadDir(dir)
	if err != nil {
		c.missErr("cpu.numa", dir, err)
		return
	}
	for _, e := range ents {
		id, ok := strings.CutPrefix(e.Name(), "node")
		n, err := strconv.Atoi(id)
		if !ok || err != nil {
			continue
		}
		node := NUMANode{ID: n}
		p := path.Join(dir, e.Name())
		node.CPUs = nodeCPUs(c, p, n)
		if data, err := c.fs.ReadFile(p + "/meminfo"); err == nil {
			m := nodeMeminfo(data)
			node.MemTotalKiB, _ = kib(m["MemTotal"])
			node.MemFreeKiB, _ = kib(m["MemFree"])
			node.HugePagesTotal, _ = kib(m["HugePages_Total"])
			node.HugePagesFree, _ = kib(m["HugePages_Free"])
		} else {
			c.missErr(ElemPath("cpu.numa", strconv.Itoa(n), "mem_total_kib"), p+"/meminfo", err)
		}
		c.s.CPU.NUMA = append(c.s.CPU.NUMA, node)
	}
	sort.Slice(c.s.CPU.NUMA, func(i, j int) bool { return c.s.CPU.NUMA[i].ID < c.s.CPU.NUMA[j].ID })
	if len(c.s.CPU.NUMA) == 0 {
		c.miss("cpu.numa", dir+" lists no nodes")
	}
}

// nodeCPUs reads a node's CPUs from cpulist, or from the cpumap mask that
// older kernels and some architectures write alone. A node without CPUs
// (memory only) is an empty, non-nil list.
func nodeCPUs(c *collector, dir string, n int) []int {
	fact := ElemPath("cpu.numa", strconv.Itoa(n), "cpus")
	v, err := c.fs.ReadString(dir + "/cpulist")
	parse := cpuset.ParseList
	if err != nil {
		var merr error
		if v, merr = c.fs.ReadString(dir + "/cpumap"); merr != nil {
			c.missErr(fact, dir+"/cpulist", err)
			return nil
		}
		parse = cpuset.ParseMask
	}
	ids, err := parse(v)
	if err != nil {
		c.miss(fact, dir+": "+err.Error())
		return nil
	}
	if ids == nil {
		ids = []int{}
	}
	return ids
}

// cpuCaches records the caches of the first online CPU: from sysfs
// cacheN/index*, else from sparc64's cpuN/l{1,2}_*cache_size files; s390
// reports its shared L3 and L4 (which sysfs leaves out) only in
// /proc/cpuinfo's "cacheN : level=… type=… size=…K" lines, added where sysfs
// has no cache of that level and type.
func cpuCaches(c *collector) {
	first := 0
	if len(c.s.CPU.Online) > 0 {
		first = c.s.CPU.Online[0]
	}
	dir := fmt.Sprintf("/sys/devices/system/cpu/cpu%d/cache", first)
	ents, err := c.fs.ReadDir(dir)
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), "index") {
			continue
		}
		p := dir + "/" + e.Name()
		var ch Cache
		lvl, err := c.fs.ReadInt(p + "/level")
		if err != nil {
			continue
		}
		ch.Level = int(lvl)
		ch.Type, _ = c.fs.ReadString(p + "/type")
		if sz, err := c.fs.ReadString(p + "/size"); err == nil {
			ch.SizeKiB, _ = parseSizeKiB(sz)
		}
		if l, err := c.fs.ReadString(p + "/shared_cpu_list"); err == nil {
			ch.SharedWith, _ = cpuset.ParseList(l)
		} else if m, err := c.fs.ReadString(p + "/shared_cpu_map"); err == nil {
			ch.SharedWith, _ = cpuset.ParseMask(m)
		}
		c.s.CPU.Caches = append(c.s.CPU.Caches, ch)
	}
	if len(c.s.CPU.Caches) == 0 {
		c.s.CPU.Caches = sparcCaches(c, first)
	}
	if ci := c.cpuInfo(); ci.err == nil {
		for _, ch := range ci.caches() {
			if !hasCache(c.s.CPU.Caches, ch.Level, ch.Type) {
				c.s.CPU.Caches = append(c.s.CPU.Caches, ch)
			}
		}
	}
	sort.Slice(c.s.CPU.Caches, func(i, j int) bool {
		a, b := c.s.CPU.Caches[i], c.s.CPU.Caches[j]
		if a.Level != b.Level {
			return a.Level < b.Level
		}
		return a.Type < b.Type
	})
	if len(c.s.CPU.Caches) == 0 {
		if err != nil {
			c.missErr("cpu.caches", dir, err)
		} else {
			c.miss("cpu.caches", dir+" lists no caches")
		}
	}
}

func hasCache(cs []Cache, level int, typ string) bool {
	for _, c := range cs {
		if c.Level == level && c.Type == typ {
			return true
		}
	}
	return false
}

// sparcCaches reads sparc64's per-CPU cache size files (bytes).
func sparcCaches(c *collector, cpu int) []Cache {
	var cs []Cache
	for _, f := range []struct {
		file  string
		level int
		typ   string
	}{{"l1_dcache_size", 1, "Data"}, {"l1_icache_size", 1, "Instruction"}, {"l2_cache_size", 2, "Unified"}} {
		if b, err := c.fs.ReadInt(fmt.Sprintf("/sys/devices/system/cpu/cpu%d/%s", cpu, f.file)); err == nil && b > 0 {
			cs = append(cs, Cache{Level: f.level, Type: f.typ, SizeKiB: b / 1024})
		}
	}
	return cs
}

// parseSizeKiB parses sysfs cache sizes: "32K", "1024K", "32M".
func parseSizeKiB(s string) (int64, error) {
	mult := int64(1)
	switch {
	case strings.HasSuffix(s, "K"):
		s = s[:len(s)-1]
	case strings.HasSuffix(s, "M"):
		s, mult = s[:len(s)-1], 1024
	case strings.HasSuffix(s, "G"):
		s, mult = s[:len(s)-1], 1024*1024
	default:
		// A bare number is bytes.
		v, err := strconv.ParseInt(s, 10, 64)
		return v / 1024, err
	}
	v, err := strconv.ParseInt(s, 10, 64)
	return v * mult, err
}
