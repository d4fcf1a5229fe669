package audit

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/perflab/perflab/internal/cpuset"
)

// Cgroup rules: CPU quota throttling, a quota smaller than the CPUs a
// container sees, and cpusets that straddle NUMA nodes. The cgroup is the
// collecting process's, or --pid's. Fixes are commands for a person: the
// limits usually belong to an orchestrator (Kubernetes, Docker, systemd)
// that would overwrite a file written behind its back.

const srcBandwidth = "https://docs.kernel.org/scheduler/sched-bwc.html"

func registerCgroupRules() {
	register(
		&Rule{
			ID: "CGROUP-CPU-THROTTLED", Title: "A CPU-quota cgroup is rarely throttled", Area: "cgroup",
			Severity: Medium, Knob: "/sys/fs/cgroup/<cgroup>/cpu.stat (nr_throttled, nr_periods)",
			Why: "A cgroup with a CFS quota that uses it up is stopped until the next period: a 2-CPU quota (200 ms per 100 ms period) spent by " +
				"8 busy threads in 25 ms leaves every thread waiting 75 ms, which lands directly in tail latency. " +
				"The share of periods throttled (cpu.stat, since the cgroup was created) shows how often it happens; the workload sets the limit.",
			Source: srcBandwidth,
			Check:  checkCPUThrottled,
		},
		&Rule{
			ID: "CGROUP-CPUS-VS-QUOTA", Title: "A container sees no more CPUs than its quota", Area: "cgroup",
			Severity: Medium, Knob: "/sys/fs/cgroup/<cgroup>/cpu.max, cpuset.cpus.effective",
			Why: "Runtimes size their thread pools by the CPUs they can see, not by the quota: Go before 1.25 sets GOMAXPROCS to them, nginx " +
				"worker_processes auto starts one worker per CPU, old JVMs size GC threads by them. 64 runnable threads on a 2-CPU quota spend " +
				"the 200 ms budget in about 3 ms and then sleep 97 ms of every 100 ms period.",
			Source: srcBandwidth + "; https://nginx.org/en/docs/ngx_core_module.html#worker_processes",
			Check:  checkCPUsVsQuota,
		},
		&Rule{
			ID: "CGROUP-CPUSET-NUMA", Title: "A cpuset stays on one NUMA node with its memory", Area: "cgroup",
			Severity: Medium, Knob: "/sys/fs/cgroup/<cgroup>/cpuset.cpus.effective, cpuset.mems.effective",
			Why: "A container whose CPUs straddle NUMA nodes, or whose CPUs are on one node and memory on another, reads much of its memory across " +
				"the interconnect (around 1.5x the local latency on two-socket servers). Seed 002 moved its containers' cpuset.cpus onto the NIC's NUMA node by " +
				"writing the cgroup files, part of the nginx +330% / redis +48% gain.",
			Source: srcSeed002 + "; https://docs.kernel.org/admin-guide/cgroup-v2.html",
			Check:  checkCpusetNUMA,
		},
	)
}

// cgroupDir is where the cgroup's files live under the usual mount.
func cgroupDir(version int, controller, path string) string {
	if version == 1 {
		return "/sys/fs/cgroup/" + controller + path
	}
	return "/sys/fs/cgroup" + path
}

func quotaCPUs(quota, period int64) float64 { return float64(quota) / float64(period) }

func checkCPUThrottled(ctx *Context) Result {
	s := ctx.S
	if r, ok := missingFact(s, "cgroup", "cgroup.cpu_quota_us"); !ok {
		return r
	}
	cg := s.Cgroup
	if cg.CPUQuotaUS <= 0 || cg.CPUPeriodUS <= 0 {
		return naResult("cgroup " + cg.Path + " has no CPU quota")
	}
	if r, ok := missingFact(s, "cgroup.nr_periods", "cgroup.nr_throttled"); !ok {
		return r
	}
	if cg.NrPeriods == 0 {
		return naResult("cgroup " + cg.Path + " has not run against its quota yet (nr_periods 0)")
	}
	e, res, ok := target(ctx, "cgroup.cpu_throttled_pct")
	if !ok {
		return res
	}
	pct := float64(cg.NrThrottled) * 100 / float64(cg.NrPeriods)
	q := quotaCPUs(cg.CPUQuotaUS, cg.CPUPeriodUS)
	obs := fmt.Sprintf("%s: throttled in %d of %d periods (%.1f %%), %.1f s in total; quota %.2f CPUs (%d µs per %d µs)",
		cg.Path, cg.NrThrottled, cg.NrPeriods, pct, float64(cg.ThrottledUS)/1e6, q, cg.CPUQuotaUS, cg.CPUPeriodUS)
	expected := "throttled in " + e.String() + " % of periods"
	if e.Matches(fmt.Sprintf("%.2f", pct)) {
		return passResult(obs, expected)
	}
	// The quota may be set on an ancestor; the collector says which.
	dir := cg.CPUQuotaDir
	if dir == "" {
		dir = cgroupDir(cg.Version, "cpu", cg.Path)
	}
	file := dir + "/cpu.max"
	test := fmt.Sprintf("echo '%d %d' > %s", 2*cg.CPUQuotaUS, cg.CPUPeriodUS, file)
	undo := fmt.Sprintf("echo '%d %d' > %s", cg.CPUQuotaUS, cg.CPUPeriodUS, file)
	if cg.Version == 1 {
		file = dir + "/cpu.cfs_quota_us"
		test = fmt.Sprintf("echo %d > %s", 2*cg.CPUQuotaUS, file)
		undo = fmt.Sprintf("echo %d > %s", cg.CPUQuotaUS, file)
	}
	r := failResult(obs, expected, Change{Kind: KindCommand, Target: cg.Path,
		Value: fmt.Sprintf("raise or remove the CPU limit where it is set (Kubernetes resources.limits.cpu, docker --cpus, systemd CPUQuota=); "+
			"to confirm the effect first: %s", test),
		Current: fmt.Sprintf("restore the limit of %.2f CPUs: %s", q, undo)})
	if pct > 25 {
		r.Severity = severityPtr(High)
	}
	return r
}

func checkCPUsVsQuota(ctx *Context) Result {
	s := ctx.S
	if r, ok := missingFact(s, "cgroup", "cgroup.cpu_quota_us"); !ok {
		return r
	}
	cg := s.Cgroup
	if cg.CPUQuotaUS <= 0 || cg.CPUPeriodUS <= 0 {
		return naResult("cgroup " + cg.Path + " has no CPU quota")
	}
	visible, from := cg.CPUs, "cpuset "
	if len(visible) == 0 {
		visible, from = s.OnlineCPUs(), "online CPUs "
	}
	q := quotaCPUs(cg.CPUQuotaUS, cg.CPUPeriodUS)
	want := int(math.Ceil(q - 1e-9))
	obs := fmt.Sprintf("%s sees %d CPUs (%s%s) under a quota of %.2f CPUs", cg.Path, len(visible), from, cpuset.FormatList(visible), q)
	expected := fmt.Sprintf("at most %d visible CPUs (the quota rounded up)", want)
	if len(visible) <= want {
		return passResult(obs, expected)
	}
	who := "the service"
	if p := s.Process; p != nil && p.Comm != "" {
		who = p.Comm
	}
	return failResult(obs, expected, Change{Kind: KindCommand, Target: cg.Path,
		Value: fmt.Sprintf("size %s to %d CPUs: give the container a %d-CPU cpuset (docker --cpuset-cpus, Kubernetes static CPU manager with integer CPUs), "+
			"or tell the runtime: GOMAXPROCS=%d, java -XX:ActiveProcessorCount=%d, nginx worker_processes %d", who, want, want, want, want, want),
		Current: "remove the cpuset / thread-count settings added"})
}

func checkCpusetNUMA(ctx *Context) Result {
	s := ctx.S
	if len(s.CPU.NUMA) < 2 {
		if r, ok := missingFact(s, "cpu.numa"); !ok {
			return r
		}
		return naResult("one NUMA node: nothing to straddle")
	}
	if r, ok := missingFact(s, "cgroup", "cgroup.cpus"); !ok {
		return r
	}
	cg := s.Cgroup
	if len(cg.CPUs) == 0 {
		return naResult("cgroup " + cg.Path + " reports no cpuset")
	}
	nodes := nodesOf(s, cg.CPUs)
	largest, home := 0, -1
	perNode := map[int]int{}
	for _, c := range cg.CPUs {
		if n, ok := s.CPUNodes()[c]; ok {
			perNode[n]++
		}
	}
	for _, n := range nodes {
		size := len(s.NodeCPUs(n))
		largest = max(largest, size)
		if home < 0 || perNode[n] > perNode[home] {
			home = n
		}
	}
	obs := fmt.Sprintf("%s: cpus %s on node(s) %s", cg.Path, cpuset.FormatList(cg.CPUs), cpuset.FormatList(nodes))
	memKnown := len(cg.Mems) > 0 && s.Missing("cgroup.mems") == ""
	if memKnown {
		obs += ", mems " + cpuset.FormatList(cg.Mems)
	}
	expected := "cpus on one NUMA node when they fit in one, and mems including the cpus' nodes"
	var problems []string
	if len(nodes) > 1 && len(cg.CPUs) <= largest {
		problems = append(problems, fmt.Sprintf("%d CPUs straddle %d nodes though one node has %d", len(cg.CPUs), len(nodes), largest))
	}
	if memKnown {
		var remote []int
		for _, n := range nodes {
			if !cpuset.Contains(cg.Mems, []int{n}) {
				remote = append(remote, n)
			}
		}
		if len(remote) > 0 {
			problems = append(problems, "memory not allowed on node(s) "+cpuset.FormatList(remote)+" where its CPUs are")
		}
	}
	if len(problems) == 0 {
		return passResult(obs, expected)
	}
	// Confine to the node holding most of its CPUs, keeping the CPUs it
	// already has there first.
	cpus := homeCPUs(cg.CPUs, s.NodeCPUs(home), min(len(cg.CPUs), len(s.NodeCPUs(home))))
	dirCPU := cgroupDir(cg.Version, "cpuset", cg.Path)
	fix := fmt.Sprintf("echo %s > %s/cpuset.mems && echo %s > %s/cpuset.cpus  # or the orchestrator's equivalent (Kubernetes CPU manager, docker --cpuset-cpus/--cpuset-mems)",
		fmt.Sprint(home), dirCPU, cpuset.FormatList(cpus), dirCPU)
	undo := fmt.Sprintf("echo %s > %s/cpuset.cpus && echo %s > %s/cpuset.mems", cpuset.FormatList(cg.CPUs), dirCPU, cpuset.FormatList(cg.Mems), dirCPU)
	r := failResult(obs+": "+strings.Join(problems, "; "), expected, Change{Kind: KindCommand, Target: cg.Path, Value: fix, Current: undo})
	r.Reason = "writing a cgroup's cpuset behind an orchestrator's back lasts until it next reconciles the container"
	return r
}

// homeCPUs picks n CPUs of a node, those already in have first.
func homeCPUs(have, node []int, n int) []int {
	in := map[int]bool{}
	for _, c := range have {
		in[c] = true
	}
	var out []int
	for _, c := range node {
		if in[c] && len(out) < n {
			out = append(out, c)
		}
	}
	for _, c := range node {
		if !in[c] && len(out) < n {
			out = append(out, c)
		}
	}
	sort.Ints(out)
	return out
}
