package snapshot

import (
	"errors"
	"path"
	"sort"
	"strconv"
	"strings"
)

const cpuDir = "/sys/devices/system/cpu"

// cpufreqFacts are the CPU fields that exist only with a cpufreq driver;
// a host without one (most VMs) has them all unavailable for one reason.
var cpufreqFacts = []string{
	"cpu.scaling_driver", "cpu.governors", "cpu.epp", "cpu.min_khz",
	"cpu.max_khz", "cpu.cur_khz", "cpu.scaling_max_khz",
}

// collectPower records frequency scaling (cpufreq policies, boost, the
// p-state driver's mode) and idle states (cpuidle driver, governor and
// cpu0's C-states with the CPUs each is disabled on).
//
// cpufreq is read per policy, not through sysfs.SystemCpufreq: that reads
// cpuinfo_cur_freq (which samples the hardware) and the statistics tables
// of every CPU, far more than the 50 ms a snapshot may take on a big host.
func collectPower(c *collector) {
	cpufreq(c)
	boost(c)
	pstateStatus(c)
	cpuidle(c)
}

// policy is one cpufreq policy directory and the online CPUs it governs.
type policy struct {
	dir  string
	cpus []int
}

// cpufreqPolicies finds the policies on either sysfs layout: cpufreq/policyN
// directories (kernels since 4.3), and the per-CPU cpuN/cpufreq directories
// that older kernels have and node_exporter's fixture tree uses. A tree may
// mix them (procfs's fixture has policy0 beside a real cpu1/cpufreq), so
// both are read: a cpuN/cpufreq that resolves to a policy already seen, or
// whose CPU a policy already governs, adds nothing. On the older layout the
// CPUs of a shared policy link to one directory, so CPUs are grouped by the
// directory they resolve to. A directory without scaling_driver or
// scaling_governor is no policy.
func cpufreqPolicies(c *collector) []policy {
	var out []policy
	index := map[string]int{} // resolved directory → out index
	covered := map[int]bool{}
	isPolicy := func(p string) bool {
		return c.fs.Exists(p+"/scaling_driver") || c.fs.Exists(p+"/scaling_governor")
	}
	resolve := func(p string) string {
		if r, err := c.fs.Resolve(p); err == nil {
			return r
		}
		return p
	}
	dirs, _ := c.fs.Glob(cpuDir + "/cpufreq/policy[0-9]*")
	sort.Slice(dirs, func(i, j int) bool { return policyNum(dirs[i]) < policyNum(dirs[j]) })
	for _, p := range dirs {
		if !isPolicy(p) {
			continue
		}
		pol := policy{dir: p, cpus: policyCPUs(c, p, policyNum(p))}
		for _, n := range pol.cpus {
			covered[n] = true
		}
		index[resolve(p)] = len(out)
		out = append(out, pol)
	}
	fromPolicyDirs := len(out)
	perCPU, _ := c.fs.Glob(cpuDir + "/cpu[0-9]*/cpufreq")
	sort.Slice(perCPU, func(i, j int) bool { return cpuDirNum(perCPU[i]) < cpuDirNum(perCPU[j]) })
	for _, p := range perCPU {
		n := cpuDirNum(p)
		if covered[n] || !isPolicy(p) {
			continue
		}
		real := resolve(p)
		if i, ok := index[real]; ok {
			// A link to a policyN directory adds no CPU: its affected_cpus
			// (online CPUs only) is the authority. On the old layout the
			// links are how a shared policy names its CPUs.
			if i >= fromPolicyDirs {
				out[i].cpus = append(out[i].cpus, n)
				covered[n] = true
			}
			continue
		}
		pol := policy{dir: p, cpus: policyCPUs(c, p, n)}
		for _, m := range pol.cpus {
			covered[m] = true
		}
		index[real] = len(out)
		out = append(out, pol)
	}
	return out
}

func cpuDirNum(p string) int {
	n, _ := strconv.Atoi(strings.TrimPrefix(path.Base(path.Dir(p)), "cpu"))
	return n
}

func cpufreq(c *collector) {
	cpu := &c.s.CPU
	policies := cpufreqPolicies(c)
	if len(policies) == 0 {
		reason := c.kernelLacks("no cpufreq driver (usual in a VM, where the hypervisor owns frequency)",
			"neither "+cpuDir+"/cpufreq/policy* nor "+cpuDir+"/cpu*/cpufreq exists")
		if !c.fs.Exists(cpuDir) {
			reason = cpuDir + " does not exist on this host"
		}
		for _, f := range cpufreqFacts {
			c.miss(f, reason)
		}
		return
	}
	cpu.Governors = map[string][]int{}
	cpu.EPP = map[string][]int{}
	cpu.CurKHz = map[string]int64{}
	cpu.ScalingMaxKHz = map[string]int64{}
	var minErr, maxErr error = errNoPolicy, errNoPolicy
	first := ""
	for _, pol := range policies {
		p, cpus := pol.dir, pol.cpus
		if len(cpus) == 0 {
			continue // every CPU of the policy is offline
		}
		if first == "" || cpu.ScalingDriver == "" {
			first = p
			cpu.ScalingDriver, _ = c.fs.ReadString(p + "/scaling_driver")
			cpu.MinKHz, minErr = c.fs.ReadInt(p + "/cpuinfo_min_freq")
			cpu.MaxKHz, maxErr = c.fs.ReadInt(p + "/cpuinfo_max_freq")
		}
		if g, err := c.fs.ReadString(p + "/" + knobBase("cpu.governors")); err == nil {
			cpu.Governors[g] = append(cpu.Governors[g], cpus...)
		}
		if e, err := c.fs.ReadString(p + "/" + knobBase("cpu.epp")); err == nil {
			cpu.EPP[e] = append(cpu.EPP[e], cpus...)
		}
		cur, curErr := c.fs.ReadInt(p + "/scaling_cur_freq")
		smax, smaxErr := c.fs.ReadInt(p + "/scaling_max_freq")
		for _, id := range cpus {
			k := strconv.Itoa(id)
			if curErr == nil {
				cpu.CurKHz[k] = cur
			}
			if smaxErr == nil {
				cpu.ScalingMaxKHz[k] = smax
			}
		}
	}
	for _, m := range []map[string][]int{cpu.Governors, cpu.EPP} {
		for k := range m {
			sort.Ints(m[k])
		}
	}
	if minErr != nil {
		c.missErr("cpu.min_khz", first+"/cpuinfo_min_freq", minErr)
	}
	if maxErr != nil {
		c.missErr("cpu.max_khz", first+"/cpuinfo_max_freq", maxErr)
	}
	if len(cpu.CurKHz) == 0 {
		cpu.CurKHz = nil
		c.miss("cpu.cur_khz", "no readable scaling_cur_freq under "+path.Dir(first))
	}
	if len(cpu.ScalingMaxKHz) == 0 {
		cpu.ScalingMaxKHz = nil
		c.miss("cpu.scaling_max_khz", "no readable scaling_max_freq under "+path.Dir(first))
	}
	if len(cpu.EPP) == 0 {
		cpu.EPP = nil
		c.miss("cpu.epp", "the "+orUnknown(cpu.ScalingDriver)+" driver has no energy_performance_preference")
	}
	if len(cpu.Governors) == 0 {
		cpu.Governors = nil
		c.miss("cpu.governors", "no readable scaling_governor under "+path.Dir(first))
	}
}

var errNoPolicy = errors.New("no online CPU in any cpufreq policy")

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

func policyNum(p string) int {
	n, _ := strconv.Atoi(strings.TrimPrefix(path.Base(p), "policy"))
	return n
}

// policyCPUs lists the online CPUs a policy governs (affected_cpus is a
// space-separated list; it omits offline CPUs, related_cpus does not).
// Without affected_cpus the policy is taken to govern CPU n alone, by far
// the common case.
func policyCPUs(c *collector, p string, n int) []int {
	v, err := c.fs.ReadString(p + "/affected_cpus")
	if err != nil {
		return []int{n}
	}
	var out []int
	for _, f := range strings.Fields(v) {
		if n, err := strconv.Atoi(f); err == nil {
			out = append(out, n)
		}
	}
	return out
}

// boost is turbo/boost state: cpufreq/boost for acpi-cpufreq and cppc,
// per-policy boost for amd-pstate, inverted no_turbo for intel_pstate.
func boost(c *collector) {
	set := func(on bool) { c.s.CPU.Boost = &on }
	if v, err := c.fs.ReadString(cpuDir + "/intel_pstate/no_turbo"); err == nil {
		set(v == "0")
		return
	}
	if v, err := c.fs.ReadString(cpuDir + "/cpufreq/boost"); err == nil {
		set(v == "1")
		return
	}
	if m, _ := c.fs.Glob(cpuDir + "/cpufreq/policy[0-9]*/boost"); len(m) > 0 {
		on := false
		for _, p := range m {
			if v, err := c.fs.ReadString(p); err == nil && v == "1" {
				on = true
			}
		}
		set(on)
		return
	}
	if _, missing := c.s.Unavailable["cpu.scaling_driver"]; missing {
		c.miss("cpu.boost", c.s.Unavailable["cpu.scaling_driver"])
		return
	}
	c.miss("cpu.boost", "the "+orUnknown(c.s.CPU.ScalingDriver)+" driver exposes no boost control")
}

// pstateStatus is the intel_pstate (or amd_pstate) operating mode.
func pstateStatus(c *collector) {
	for _, d := range []string{"intel_pstate", "amd_pstate"} {
		if v, err := c.fs.ReadString(cpuDir + "/" + d + "/status"); err == nil {
			c.s.CPU.PstateStatus = v
			return
		}
	}
	c.miss("cpu.pstate_status", "neither intel_pstate nor amd_pstate is present")
}

// cpuidle records the idle driver and governor and cpu0's states. A state
// disabled on some CPUs (by tuned, or `cpupower idle-set`) is a latency
// tuning that must be visible, so each state's disable file is read on
// every online CPU.
func cpuidle(c *collector) {
	cpu := &c.s.CPU
	const dir = cpuDir + "/cpuidle"
	drv, err := c.fs.ReadString(dir + "/current_driver")
	if err != nil {
		reason := readReason(dir+"/current_driver", err)
		if !c.fs.Exists(dir) {
			reason = c.kernelLacks("the kernel has no cpuidle (CONFIG_CPU_IDLE off)", dir+" does not exist")
		}
		for _, f := range []string{"cpu.idle_driver", "cpu.idle_governor", "cpu.cstates"} {
			c.miss(f, reason)
		}
		return
	}
	cpu.IdleDriver = drv
	if g, err := c.fs.ReadString(dir + "/current_governor_ro"); err == nil {
		cpu.IdleGovernor = g
	} else if g, err := c.fs.ReadString(dir + "/current_governor"); err == nil {
		cpu.IdleGovernor = g
	} else {
		c.missErr("cpu.idle_governor", dir+"/current_governor", err)
	}

	first := 0
	if len(cpu.Online) > 0 {
		first = cpu.Online[0]
	}
	states, _ := c.fs.Glob(cpuDir + "/cpu" + strconv.Itoa(first) + "/cpuidle/state[0-9]*")
	sort.Slice(states, func(i, j int) bool { return stateNum(states[i]) < stateNum(states[j]) })
	for _, p := range states {
		var st CState
		st.Name, _ = c.fs.ReadString(p + "/name")
		st.Desc, _ = c.fs.ReadString(p + "/desc")
		st.LatencyUS, _ = c.fs.ReadInt(p + "/latency")
		st.Residency, _ = c.fs.ReadInt(p + "/residency")
		base := path.Base(p)
		for _, id := range cpu.Online {
			f := cpuDir + "/cpu" + strconv.Itoa(id) + "/cpuidle/" + base + "/disable"
			if v, err := c.fs.ReadString(f); err == nil && v != "0" {
				st.DisabledOn = append(st.DisabledOn, id)
			}
		}
		cpu.CStates = append(cpu.CStates, st)
	}
	switch {
	case len(cpu.CStates) > 0:
	case drv == "none":
		c.miss("cpu.cstates", "no cpuidle driver is loaded (current_driver is none): CPUs idle with the architecture's default wait instruction")
	default:
		c.miss("cpu.cstates", "the "+drv+" idle driver exposes no states for cpu"+strconv.Itoa(first))
	}
}

func stateNum(p string) int {
	n, _ := strconv.Atoi(strings.TrimPrefix(path.Base(p), "state"))
	return n
}
