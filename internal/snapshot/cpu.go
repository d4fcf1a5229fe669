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

// cpuTopology counts sockets and physical cores of the online CPUs: sockets
// are distinct physical_package_id values, cores distinct
// thread_siblings_list sets (core_id repeats across sockets and, on some
// ARM servers, across clusters). Without sysfs topology the x86 cpuinfo
// "physical id"/"core id" pairs are counted instead.
func cpuTopology(c *collector, ci *cpuInfo) {
	cpu := &c.s.CPU
	online := map[string]bool{}
	for _, id := range cpu.Online {
		online[strconv.Itoa(id)] = true
	}
	packages, cores := map[string]bool{}, map[string]bool{}
	var topoErr error
	if c.hasSys() {
		cpus, err := c.sys.CPUs()
		if err != nil {
			topoErr = err
		}
		for _, sc := range cpus {
			if !online[sc.Number()] {
				continue
			}
			t, err := sc.Topology()
			if err != nil {
				topoErr = err
				break
			}
			packages[t.PhysicalPackageID] = true
			cores[t.ThreadSiblingsList] = true
		}
	}
	if len(packages) > 0 && topoErr == nil {
		cpu.Sockets, cpu.Cores = len(packages), len(cores)
		return
	}
	if ci.err == nil && len(ci.packages) > 0 {
		cpu.Sockets, cpu.Cores = len(ci.packages), len(ci.cores)
		return
	}
	reason := "no /sys/devices/system/cpu/cpuN/topology and no physical id in /proc/cpuinfo"
	if topoErr != nil {
		reason = "CPU topology: " + topoErr.Error()
	}
	c.miss("cpu.sockets", reason)
	c.miss("cpu.cores", reason)
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
		if v, err := c.fs.ReadString(p + "/cpulist"); err != nil {
			c.missErr(ElemPath("cpu.numa", strconv.Itoa(n), "cpus"), p+"/cpulist", err)
		} else if node.CPUs, err = cpuset.ParseList(v); err != nil {
			c.miss(ElemPath("cpu.numa", strconv.Itoa(n), "cpus"), p+"/cpulist: "+err.Error())
		}
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

// cpuCaches records the caches of the first online CPU.
func cpuCaches(c *collector) {
	first := 0
	if len(c.s.CPU.Online) > 0 {
		first = c.s.CPU.Online[0]
	}
	dir := fmt.Sprintf("/sys/devices/system/cpu/cpu%d/cache", first)
	ents, err := c.fs.ReadDir(dir)
	if err != nil {
		c.missErr("cpu.caches", dir, err)
		return
	}
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
		}
		c.s.CPU.Caches = append(c.s.CPU.Caches, ch)
	}
	sort.Slice(c.s.CPU.Caches, func(i, j int) bool {
		a, b := c.s.CPU.Caches[i], c.s.CPU.Caches[j]
		if a.Level != b.Level {
			return a.Level < b.Level
		}
		return a.Type < b.Type
	})
	if len(c.s.CPU.Caches) == 0 {
		c.miss("cpu.caches", dir+" lists no caches")
	}
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
