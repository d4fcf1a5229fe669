package audit

import (
	"fmt"
	"strings"

	"github.com/perflab/perflab/internal/cpuset"
	"github.com/perflab/perflab/internal/snapshot"
)

// Container rules judge a container's snapshot (perflab audit --container):
// where its namespaced settings differ from the host's, its cpuset against
// the NIC's NUMA node (seed 002), NIC interrupts on the CPUs it owns, and
// its memory limit against its working set. On a host snapshot they are
// not applicable. Throttling under a quota is CGROUP-CPU-THROTTLED, which
// reads the container's cgroup here.

func registerContainerRules() {
	register(
		&Rule{
			ID: "CONTAINER-NETNS-SYSCTL", Title: "Host network tuning reaches the container", Area: "container",
			Severity: Low, Knob: "net.* sysctls in the container's network namespace",
			Why: "Network sysctls are per network namespace: a container starts with the kernel's defaults (or what its runtime sets), not with the host's " +
				"tuning, so a host at somaxconn 4096 can serve a container at 4096 and another at 128 (kubernetes #29572, systemd #5592). " +
				"The table lists every namespaced sysctl whose value differs inside; rules for the workload judge each one.",
			Source: "https://docs.kernel.org/networking/ip-sysctl.html; https://kubernetes.io/docs/tasks/administer-cluster/sysctl-cluster/",
			Check:  checkNetnsSysctl,
		},
		&Rule{
			ID: "CONTAINER-CPUSET-NIC-NUMA", Title: "The container runs on its NIC's NUMA node", Area: "container",
			Severity: Medium, Knob: "/sys/fs/cgroup/<container cgroup>/cpuset.cpus, cpuset.mems",
			Why: "Packets arrive in the memory of the NIC's node and its interrupts run there; a network service pinned to the other node " +
				"reads every packet across the interconnect. Seed 002 moved its nginx and redis containers' cpuset.cpus onto the NIC's node by " +
				"writing the pod's cgroup (docker inspect changes did not take): part of the +330% / +48%.",
			Source: srcSeed002 + "; https://docs.kernel.org/admin-guide/cgroup-v1/cpusets.html",
			Check:  checkCpusetNIC,
		},
		&Rule{
			ID: "CONTAINER-NIC-IRQ-CPUS", Title: "NIC interrupts stay off the CPUs a container owns", Area: "container",
			Severity: Low, Knob: "/proc/irq/N/smp_affinity_list of the NIC's queues",
			Why: "A container pinned to a few CPUs (a cpuset smaller than the host) owns them for its latency; NIC interrupts and their softirq " +
				"work landing there take time the container's quota and scheduler do not see. Either keep the NIC's IRQs on other CPUs of the same " +
				"node, or count them in (seed 002 paired queue interrupts with the service's CPUs deliberately).",
			Source: srcSeed002 + "; https://docs.kernel.org/core-api/irq/irq-affinity.html",
			Check:  checkNICIRQsOnContainer,
		},
		&Rule{
			ID: "CONTAINER-MEMORY-NEAR-LIMIT", Title: "The container's working set stays below its memory limit", Area: "container",
			Severity: Medium, Knob: "/sys/fs/cgroup/<container cgroup>/memory.max (v1: memory.limit_in_bytes)",
			Why: "When a cgroup's working set (use minus inactive file pages, as kubelet counts it) nears its limit, the kernel reclaims the " +
				"container's page cache and then its anonymous memory on every allocation — latency spikes long before the OOM killer. " +
				"Above 90% of the limit there is little headroom for a traffic peak.",
			Source: "https://docs.kernel.org/admin-guide/cgroup-v2.html#memory-interface-files; https://kubernetes.io/docs/concepts/scheduling-eviction/node-pressure-eviction/",
			Check:  checkMemoryNearLimit,
		},
	)
}

func notContainer(s *snapshot.Snapshot) (Result, bool) {
	if s.Container == nil {
		return naResult("not a container's snapshot (audit --container REF)"), true
	}
	return Result{}, false
}

func checkNetnsSysctl(ctx *Context) Result {
	s := ctx.S
	if r, ok := notContainer(s); ok {
		return r
	}
	label := ContainerLabel(s.Container)
	if s.Container.HostNetwork {
		return naResult("container " + label + " shares the host's network namespace")
	}
	rows := hostContainerDiff(s)
	expected := "the container's namespaced sysctls as the host's, or set on purpose"
	if len(rows) == 0 {
		return passResult("every namespaced sysctl of container "+label+" equals the host's", expected)
	}
	var cells []string
	for _, r := range rows {
		cells = append(cells, fmt.Sprintf("%s: container %s, host %s", r[0], r[1], r[2]))
	}
	obs := fmt.Sprintf("%d namespaced sysctl(s) differ in container %s's network namespace — host sysctls do not reach it: %s",
		len(rows), label, strings.Join(cells, "; "))
	return failResult(obs, expected, Change{Kind: KindCommand, Target: "sysctls of container " + label,
		Value: "declare the values with the container (pod securityContext.sysctls, docker/podman run --sysctl), or apply a workload inside it: " +
			"perflab tune apply WORKLOAD --container " + label,
		Current: "remove the sysctls added to the container's spec (perflab tune revert --container " + label + ")"})
}

// containerCpusetDir is where the container's cpuset files live.
func containerCpusetDir(cg snapshot.Cgroup) string { return cgroupDir(cg.Version, "cpuset", cg.Path) }

// physicalNICNodes are the NUMA nodes of the host's physical NICs.
func physicalNICNodes(s *snapshot.Snapshot) (nodes []int, names []string) {
	seen := map[int]bool{}
	for _, n := range s.Net.Interfaces {
		if n.Virtual || n.NUMANode < 0 || len(s.NodeCPUs(n.NUMANode)) == 0 {
			continue
		}
		names = append(names, fmt.Sprintf("%s (node %d)", n.Name, n.NUMANode))
		if !seen[n.NUMANode] {
			seen[n.NUMANode] = true
			nodes = append(nodes, n.NUMANode)
		}
	}
	return nodes, names
}

func checkCpusetNIC(ctx *Context) Result {
	s := ctx.S
	if r, ok := notContainer(s); ok {
		return r
	}
	if len(s.CPU.NUMA) < 2 {
		if r, ok := missingFact(s, "cpu.numa"); !ok {
			return r
		}
		return naResult("one NUMA node: every CPU is on the NIC's node")
	}
	if r, ok := missingFact(s, "cgroup", "cgroup.cpus"); !ok {
		return r
	}
	nodes, names := physicalNICNodes(s)
	if len(nodes) == 0 {
		return naResult("no physical NIC with a known NUMA node")
	}
	if len(nodes) > 1 {
		return naResult("physical NICs on several nodes (" + strings.Join(names, ", ") + "): the container's node depends on which it serves")
	}
	node := nodes[0]
	cg := s.Cgroup
	local := s.NodeCPUs(node)
	label := ContainerLabel(s.Container)
	obs := fmt.Sprintf("container %s: cpus %s, mems %s; NIC %s, whose node has cpus %s", label, cpuset.FormatList(cg.CPUs),
		cpuset.FormatList(cg.Mems), strings.Join(names, ", "), cpuset.FormatList(local))
	expected := fmt.Sprintf("cpus on node %d (when they fit there) and memory on node %d", node, node)
	cpusOK := cpuset.Contains(local, cg.CPUs) || len(cg.CPUs) > len(local)
	memsOK := len(cg.Mems) == 0 || cpuset.Contains(cg.Mems, []int{node})
	if cpusOK && memsOK {
		return passResult(obs, expected)
	}
	dir := containerCpusetDir(cg)
	want := homeCPUs(cg.CPUs, local, min(len(cg.CPUs), len(local)))
	var changes []Change
	if !cpusOK {
		changes = append(changes, Change{Kind: KindFile, Target: dir + "/cpuset.cpus", Value: cpuset.FormatList(want), Current: cpuset.FormatList(cg.CPUs)})
	}
	if !memsOK {
		changes = append(changes, Change{Kind: KindFile, Target: dir + "/cpuset.mems", Value: fmt.Sprint(node), Current: cpuset.FormatList(cg.Mems)})
	}
	r := failResult(obs, expected, changes...)
	r.Reason = "an orchestrator that reconciles cpusets (Kubernetes CPU manager) may undo a write behind its back: declare it too (docker --cpuset-cpus/--cpuset-mems, a static CPU policy)"
	return r
}

func checkNICIRQsOnContainer(ctx *Context) Result {
	s := ctx.S
	if r, ok := notContainer(s); ok {
		return r
	}
	if r, ok := missingFact(s, "cgroup", "cgroup.cpus", "irqs"); !ok {
		return r
	}
	cg := s.Cgroup
	online := s.OnlineCPUs()
	label := ContainerLabel(s.Container)
	if len(cg.CPUs) == 0 || len(cg.CPUs) >= len(online) {
		return naResult("container " + label + " may run on every CPU: it owns none")
	}
	own := map[int]bool{}
	for _, c := range cg.CPUs {
		own[c] = true
	}
	var hits []string
	var nics int
	for _, n := range s.Net.Interfaces {
		if n.Virtual || len(n.IRQs) == 0 {
			continue
		}
		nics++
		for _, q := range s.NICIRQs(n).IRQs {
			if !q.Found || len(q.Landing) == 0 {
				continue
			}
			all := true
			for _, c := range q.Landing {
				all = all && own[c]
			}
			if all {
				hits = append(hits, fmt.Sprintf("%s IRQ %d → cpus %s", n.Name, q.Number, cpuset.FormatList(q.Landing)))
			}
		}
	}
	if nics == 0 {
		return naResult("no physical NIC with interrupts")
	}
	obs := fmt.Sprintf("container %s owns cpus %s", label, cpuset.FormatList(cg.CPUs))
	expected := "no NIC interrupt only on the container's CPUs (unless paired on purpose)"
	if len(hits) == 0 {
		return passResult(obs+"; no NIC interrupt lands only there", expected)
	}
	var other []int
	for _, c := range online {
		if !own[c] {
			other = append(other, c)
		}
	}
	return failResult(obs+"; "+strings.Join(hits, "; "), expected, Change{Kind: KindCommand, Target: "irq affinity",
		Value:   fmt.Sprintf("move the NIC's interrupts to CPUs the container does not own (%s) on the NIC's node: perflab irq pin NIC --cpus LIST, with irqbalance told to leave them (IRQBALANCE_BANNED_CPULIST=%s)", cpuset.FormatList(other), cpuset.FormatList(cg.CPUs)),
		Current: "perflab tune revert"})
}

func checkMemoryNearLimit(ctx *Context) Result {
	s := ctx.S
	if r, ok := notContainer(s); ok {
		return r
	}
	if r, ok := missingFact(s, "cgroup", "cgroup.memory_max_bytes"); !ok {
		return r
	}
	cg := s.Cgroup
	label := ContainerLabel(s.Container)
	if cg.MemoryMaxBytes <= 0 {
		return naResult("container " + label + " has no memory limit")
	}
	if cg.MemoryWorkingSetBytes <= 0 {
		return naResult("the working set of container " + label + " is unknown (no memory.current / usage_in_bytes)")
	}
	pct := float64(cg.MemoryWorkingSetBytes) * 100 / float64(cg.MemoryMaxBytes)
	obs := fmt.Sprintf("container %s: working set %.1f MiB of a %.1f MiB limit (%.0f %%)", label,
		float64(cg.MemoryWorkingSetBytes)/(1<<20), float64(cg.MemoryMaxBytes)/(1<<20), pct)
	expected := "working set below 90 % of the limit"
	if pct < 90 {
		return passResult(obs, expected)
	}
	return failResult(obs, expected, Change{Kind: KindCommand, Target: cg.Path,
		Value:   fmt.Sprintf("raise the memory limit where it is declared (Kubernetes resources.limits.memory, docker --memory) to at least %.0f MiB, or find what grows", float64(cg.MemoryWorkingSetBytes)/(1<<20)/0.75),
		Current: "restore the previous limit"})
}
