package snapshot

import (
	"errors"
	"io/fs"
	"strconv"

	"github.com/perflab/perflab/internal/cpuset"
	"github.com/perflab/perflab/internal/hostfs"
	"github.com/prometheus/procfs"
)

// collectCgroup records the limits the target process (perflab, or --pid)
// runs under: CPU bandwidth quota and its throttling, cpuset and memory
// limit. procfs parses /proc/<pid>/cgroup and mountinfo; the controller
// files are parsed in cgroupparse.go because procfs has no reader for them.
//
// Limits are hierarchical, so the quota and memory limit are the tightest
// along the path from the cgroup up to the hierarchy's root, and throttling
// is read where that quota is set: a leaf under a limited parent shows no
// throttling of its own. A controller file absent at a level means no limit
// there (the controller is not enabled for it), not a missing fact.
func collectCgroup(c *collector) {
	if !c.hasProc() {
		c.miss("cgroup", "no /proc under the root")
		return
	}
	pfile := targetProcDir(c)
	data, err := c.fs.ReadFile(pfile + "/cgroup")
	if err != nil {
		c.missErr("cgroup", pfile+"/cgroup", unwrapPathErr(err))
		return
	}
	lines, err := parseProcCgroup(data)
	if err != nil {
		c.miss("cgroup", pfile+"/cgroup: "+err.Error())
		return
	}
	// The cgroup files are read through perflab's own mounts: on the live
	// host those are /proc/self's, even for a --pid in a container, whose
	// mountinfo shows its cgroup mounted at its own root.
	var mounts []*procfs.MountInfo
	var merr error
	if c.fs.Live() {
		mounts, merr = readMountInfo(c, "/proc/self/mountinfo")
	} else {
		mounts, _, merr = targetMounts(c)
	}
	if merr != nil {
		mounts = nil // fall back to the conventional /sys/fs/cgroup layout
	}
	var v2 *procfs.Cgroup
	v1 := map[string]procfs.Cgroup{}
	for i, l := range lines {
		if l.HierarchyID == 0 {
			v2 = &lines[i]
			continue
		}
		for _, ctl := range l.Controllers {
			v1[ctl] = l
		}
	}
	cg := &c.s.Cgroup
	_, v1cpu := v1["cpu"]
	_, v1set := v1["cpuset"]
	_, v1mem := v1["memory"]
	switch {
	case v1cpu || v1set || v1mem:
		// Hybrid hosts mount an empty cgroup2 beside the v1 controllers;
		// the limits live in v1.
		cg.Version = 1
		collectCgroupV1(c, v1, mounts)
	case v2 != nil:
		cg.Version = 2
		cg.Path = v2.Path
		m := cgroupMount(mounts, "cgroup2", "", "/sys/fs/cgroup")
		dirs, err := cgroupDirs(m.MountPoint, m.Root, v2.Path)
		if err != nil {
			c.miss("cgroup", err.Error())
			return
		}
		cgroupCPU(c, dirs, cgroupV2CPU)
		cgroupCPUSet(c, dirs, "cpuset.cpus.effective", "cpuset.mems.effective")
		cgroupMemory(c, dirs, "memory.max")
		cgroupMemoryUse(c, dirs[0], "memory.current", "inactive_file")
		cgroupPids(c, dirs)
	default:
		c.miss("cgroup", pfile+"/cgroup names no cgroup hierarchy")
	}
}

func collectCgroupV1(c *collector, v1 map[string]procfs.Cgroup, mounts []*procfs.MountInfo) {
	cg := &c.s.Cgroup
	for _, ctl := range []string{"memory", "cpuset", "cpu"} {
		if l, ok := v1[ctl]; ok {
			cg.Path = l.Path // the cpu hierarchy's path wins: it carries the quota
		}
	}
	dirsOf := func(ctl string) []string {
		l, ok := v1[ctl]
		if !ok {
			return nil
		}
		m := cgroupMount(mounts, "cgroup", ctl, "/sys/fs/cgroup/"+ctl)
		dirs, err := cgroupDirs(m.MountPoint, m.Root, l.Path)
		if err != nil {
			c.miss("cgroup."+ctl, err.Error())
			return nil
		}
		return dirs
	}
	if dirs := dirsOf("cpu"); dirs != nil {
		cgroupCPU(c, dirs, cgroupV1CPU)
	} else {
		cg.CPUQuotaUS = -1
		c.miss("cgroup.cpu_period_us", "no cgroup v1 cpu hierarchy is mounted")
		missThrottling(c, "no cgroup v1 cpu hierarchy is mounted")
	}
	if dirs := dirsOf("cpuset"); dirs != nil {
		cgroupCPUSet(c, dirs, "cpuset.effective_cpus", "cpuset.effective_mems")
	} else {
		c.miss("cgroup.cpus", "no cgroup v1 cpuset hierarchy is mounted")
		c.miss("cgroup.mems", "no cgroup v1 cpuset hierarchy is mounted")
	}
	if dirs := dirsOf("pids"); dirs != nil {
		cgroupPids(c, dirs)
	}
	if dirs := dirsOf("memory"); dirs != nil {
		cgroupMemory(c, dirs, "memory.limit_in_bytes")
		cgroupMemoryUse(c, dirs[0], "memory.usage_in_bytes", "total_inactive_file")
	} else {
		c.miss("cgroup.memory_max_bytes", "no cgroup v1 memory hierarchy is mounted")
	}
}

// targetProcDir is the /proc directory of the process whose cgroup is
// reported. It is read through hostfs as a path, not through procfs's
// Self(), which resolves the proc/self link: in a captured tree proc/self
// may be a plain directory (what `cp -r /proc/self` makes).
func targetProcDir(c *collector) string {
	if c.opt.PID > 0 {
		return "/proc/" + strconv.Itoa(c.opt.PID)
	}
	return "/proc/self"
}

// cgroupMount finds the mount of a hierarchy in mountinfo: the cgroup2 one,
// or the v1 one whose superblock options name the controller.
func cgroupMount(mounts []*procfs.MountInfo, fstype, ctl, fallback string) procfs.MountInfo {
	for _, m := range mounts {
		if m.FSType != fstype {
			continue
		}
		if ctl == "" {
			return *m
		}
		if _, ok := m.SuperOptions[ctl]; ok {
			return *m
		}
	}
	return procfs.MountInfo{MountPoint: fallback, Root: "/"}
}

// cpuLimit reads one level's CPU bandwidth limit; present is false when the
// level has no such file (no limit can be set there).
type cpuLimit func(c *collector, dir string) (quota, period int64, present bool, err error)

func cgroupV2CPU(c *collector, dir string) (int64, int64, bool, error) {
	s, err := c.fs.ReadString(dir + "/cpu.max")
	if errors.Is(err, fs.ErrNotExist) {
		return 0, 0, false, nil
	}
	if err != nil {
		return 0, 0, true, errors.New(hostfs.Reason(dir+"/cpu.max", err))
	}
	q, p, err := parseCPUMax(s)
	return q, p, true, err
}

func cgroupV1CPU(c *collector, dir string) (int64, int64, bool, error) {
	s, err := c.fs.ReadString(dir + "/cpu.cfs_quota_us")
	if errors.Is(err, fs.ErrNotExist) {
		return 0, 0, false, nil
	}
	if err != nil {
		return 0, 0, true, errors.New(hostfs.Reason(dir+"/cpu.cfs_quota_us", err))
	}
	q, err := parseCFSQuota(s)
	if err != nil {
		return 0, 0, true, err
	}
	p, err := c.fs.ReadInt(dir + "/cpu.cfs_period_us")
	if err != nil {
		return 0, 0, true, errors.New(hostfs.Reason(dir+"/cpu.cfs_period_us", err))
	}
	return q, p, true, nil
}

// cgroupCPU finds the tightest quota from the leaf up and reads throttling
// where it is set (or at the leaf when nothing limits it).
func cgroupCPU(c *collector, dirs []string, read cpuLimit) {
	cg := &c.s.Cgroup
	cg.CPUQuotaUS = -1
	seen := false
	best := 0.0
	for _, d := range dirs {
		q, p, present, err := read(c, d)
		if err != nil {
			c.miss("cgroup.cpu_quota_us", err.Error())
			cg.CPUQuotaUS = 0
			return
		}
		if !present {
			continue
		}
		if !seen {
			cg.CPUPeriodUS = p // the period in force at the leaf when nothing limits
			seen = true
		}
		if q > 0 && p > 0 {
			if share := float64(q) / float64(p); cg.CPUQuotaDir == "" || share < best {
				best, cg.CPUQuotaUS, cg.CPUPeriodUS, cg.CPUQuotaDir = share, q, p, d
			}
		}
	}
	if !seen && len(dirs) > 1 {
		c.miss("cgroup.cpu_period_us", "no CPU bandwidth file from "+dirs[0]+" up: the cpu controller is not enabled for this cgroup")
	}
	statDir := dirs[0]
	if cg.CPUQuotaDir != "" {
		statDir = cg.CPUQuotaDir
	}
	s, err := c.fs.ReadString(statDir + "/cpu.stat")
	if err != nil {
		missThrottling(c, hostfs.Reason(statDir+"/cpu.stat", err))
		return
	}
	kv, err := parseFlatKeyed(s)
	if err != nil {
		missThrottling(c, statDir+"/cpu.stat: "+err.Error())
		return
	}
	periods, ok1 := kv["nr_periods"]
	throttled, ok2 := kv["nr_throttled"]
	if !ok1 || !ok2 {
		missThrottling(c, statDir+"/cpu.stat has no nr_periods: the cpu controller is not enabled there")
		return
	}
	cg.NrPeriods, cg.NrThrottled = periods, throttled
	if us, ok := kv["throttled_usec"]; ok {
		cg.ThrottledUS = us
	} else if ns, ok := kv["throttled_time"]; ok { // v1 counts nanoseconds
		cg.ThrottledUS = ns / 1000
	} else {
		c.miss("cgroup.throttled_us", statDir+"/cpu.stat has no throttled time")
	}
}

func missThrottling(c *collector, why string) {
	for _, f := range []string{"nr_periods", "nr_throttled", "throttled_us"} {
		c.miss("cgroup."+f, why)
	}
}

// cgroupCPUSet reads the effective CPUs and memory nodes at the nearest
// level that has them: without the cpuset controller a cgroup runs on its
// parent's set.
func cgroupCPUSet(c *collector, dirs []string, cpusFile, memsFile string) {
	cg := &c.s.Cgroup
	for _, f := range []struct {
		file, fact string
		dst        *[]int
	}{{cpusFile, "cpus", &cg.CPUs}, {memsFile, "mems", &cg.Mems}} {
		why := "no " + f.file + " from " + dirs[0] + " up: the cpuset controller is not available"
		for _, d := range dirs {
			s, err := c.fs.ReadString(d + "/" + f.file)
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			if err != nil {
				why = hostfs.Reason(d+"/"+f.file, err)
				break
			}
			set, err := cpuset.ParseList(s)
			if err != nil {
				why = d + "/" + f.file + ": " + err.Error()
				break
			}
			*f.dst, why = set, ""
			break
		}
		if why != "" {
			c.miss("cgroup."+f.fact, why)
		}
	}
}

// cgroupMemory takes the tightest memory limit from the leaf up.
func cgroupMemory(c *collector, dirs []string, file string) {
	cg := &c.s.Cgroup
	cg.MemoryMaxBytes = -1
	for _, d := range dirs {
		s, err := c.fs.ReadString(d + "/" + file)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			cg.MemoryMaxBytes = 0
			c.missErr("cgroup.memory_max_bytes", d+"/"+file, err)
			return
		}
		v, err := parseMemoryMax(s)
		if err != nil {
			cg.MemoryMaxBytes = 0
			c.miss("cgroup.memory_max_bytes", d+"/"+file+": "+err.Error())
			return
		}
		if v >= 0 && (cg.MemoryMaxBytes < 0 || v < cg.MemoryMaxBytes) {
			cg.MemoryMaxBytes = v
		}
	}
}

// cgroupMemoryUse reads the leaf's memory use and its working set (use
// minus inactive file pages, as kubelet computes it). Absent files leave
// both unknown (0): older kernels and fixture trees may lack them.
func cgroupMemoryUse(c *collector, dir, usageFile, inactiveKey string) {
	cg := &c.s.Cgroup
	use, err := c.fs.ReadInt(dir + "/" + usageFile)
	if err != nil {
		return
	}
	cg.MemoryUsageBytes = use
	cg.MemoryWorkingSetBytes = use
	if s, err := c.fs.ReadString(dir + "/memory.stat"); err == nil {
		if kv, err := parseFlatKeyed(s); err == nil {
			if v, ok := kv[inactiveKey]; ok && v <= use {
				cg.MemoryWorkingSetBytes = use - v
			}
		}
	}
}

// cgroupPids takes the tightest pids.max from the leaf up (-1 unlimited).
func cgroupPids(c *collector, dirs []string) {
	cg := &c.s.Cgroup
	for _, d := range dirs {
		s, err := c.fs.ReadString(d + "/pids.max")
		if err != nil {
			continue
		}
		if s == "max" {
			if cg.PidsMax == 0 {
				cg.PidsMax = -1
			}
			continue
		}
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil || v < 0 {
			continue
		}
		if cg.PidsMax <= 0 || v < cg.PidsMax {
			cg.PidsMax = v
		}
	}
}
