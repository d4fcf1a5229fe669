package audit

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/perflab/perflab/internal/cpuset"
)

// IRQ rules: NIC interrupts on the NIC's own NUMA node, and irqbalance not
// undoing hand-made pinning.

func registerIrqRules() {
	register(
		&Rule{
			ID: "IRQ-NUMA-AFFINITY", Title: "NIC interrupts run on the NIC's NUMA node", Area: "irq",
			Severity: Medium, Knob: "/proc/irq/<n>/smp_affinity_list",
			Why: "A NIC DMAs packets into memory of its own NUMA node; an interrupt and its softirq handled on another node read every packet " +
				"across the socket interconnect and bounce the socket's cache lines. Seed 002 found the NIC on NUMA node 1 with its interrupts " +
				"spread over all nodes, bound them to CPUs of node 1 next to the containers, and with the queue and RPS/XPS work took nginx +330% and redis +48%.",
			Source: srcSeed002 + "; https://docs.kernel.org/core-api/irq/irq-affinity.html",
			Check:  checkIRQNUMAAffinity,
		},
		&Rule{
			ID: "IRQ-IRQBALANCE-PINNED", Title: "irqbalance does not fight hand-pinned interrupts", Area: "irq",
			Severity: Medium, Workloads: []string{"latency", "web", "kv"}, Knob: "irqbalance.service",
			Why: "irqbalance rewrites /proc/irq/*/smp_affinity every 10 s (its default interval), so interrupts pinned by hand, as seed 002 " +
				"did for its NIC (and as IRQ-NUMA-AFFINITY proposes), drift back within seconds and the gain (nginx +330%, redis +48% in seed 002) " +
				"disappears between one benchmark and the next. For a host whose NIC interrupts are placed by hand, stop irqbalance or ban those IRQs from it.",
			Source: srcSeed002 + "; https://github.com/Irqbalance/irqbalance",
			Check:  checkIRQBalancePinned,
		},
	)
}

func checkIRQNUMAAffinity(ctx *Context) Result {
	s := ctx.S
	if len(s.CPU.NUMA) < 2 {
		if r, ok := missingFact(s, "cpu.numa"); !ok {
			return r
		}
		return naResult("one NUMA node: every CPU is local to every NIC")
	}
	if r, ok := missingFact(s, "irqs"); !ok {
		return r
	}
	nics, res, ok := nicsOrNA(s)
	if !ok {
		return res
	}
	balancing := s.Services["irqbalance"].Running
	var obs, skipped []string
	var changes []Change
	judged := 0
	for _, nic := range nics {
		if nic.NUMANode < 0 {
			skipped = append(skipped, nic.Name+": the platform reports no NUMA node for it")
			continue
		}
		// Where each IRQ lands is interpreted once, on the snapshot
		// (Snapshot.NICIRQs, IRQ.Landing): irq show and irq pin agree.
		pl := s.NICIRQs(nic)
		if len(pl.Local) == 0 {
			skipped = append(skipped, fmt.Sprintf("%s: NUMA node %d has no online CPU", nic.Name, nic.NUMANode))
			continue
		}
		local := pl.Local
		var remote []string
		n := pl.Judged()
		for _, q := range pl.OffNode() {
			// One IRQ per local CPU, round robin, as seed 002's script
			// bound them.
			cpu := local[len(remote)%len(local)]
			remote = append(remote, fmt.Sprintf("%d→%s", q.Number, cpuset.FormatList(q.Landing)))
			changes = append(changes, factChange("irqs[*].affinity", strconv.Itoa(cpu), cpuset.FormatList(q.IRQ.Affinity), strconv.Itoa(q.Number)))
		}
		if n == 0 {
			skipped = append(skipped, nic.Name+": no IRQ with a readable affinity is mapped to it")
			continue
		}
		judged++
		if len(remote) == 0 {
			obs = append(obs, fmt.Sprintf("%s (node %d): all %d IRQs on CPUs %s", nic.Name, nic.NUMANode, n, cpuset.FormatList(local)))
		} else {
			obs = append(obs, fmt.Sprintf("%s (node %d, CPUs %s): %d of %d IRQs elsewhere: %s", nic.Name, nic.NUMANode,
				cpuset.FormatList(local), len(remote), n, strings.Join(remote, " ")))
		}
	}
	if judged == 0 {
		return naResult(strings.Join(skipped, "; "))
	}
	expected := "every NIC IRQ on CPUs of the NIC's NUMA node"
	if len(changes) == 0 {
		return passResult(strings.Join(obs, "; "), expected)
	}
	r := failResult(strings.Join(obs, "; "), expected, changes...)
	if balancing {
		r.Reason = "irqbalance is running and will move hand-pinned IRQs again: see IRQ-IRQBALANCE-PINNED"
	}
	return r
}

func checkIRQBalancePinned(ctx *Context) Result {
	s := ctx.S
	if r, ok := missingFact(s, "services"); !ok {
		return r
	}
	svc := s.Services["irqbalance"]
	expected := "irqbalance stopped (or the pinned IRQs banned from it) when NIC IRQs are pinned"
	if !svc.Running {
		return passResult("irqbalance not running", expected)
	}
	if r, ok := missingFact(s, "irqs"); !ok {
		return r
	}
	all := len(s.OnlineCPUs())
	var pinned []string
	for _, nic := range trafficNICs(s) {
		for _, num := range nic.IRQs {
			q, ok := s.IRQ(num)
			if !ok || len(q.Affinity) == 0 || len(q.Affinity) >= all {
				continue
			}
			pinned = append(pinned, fmt.Sprintf("%d(%s)→%s", num, nic.Name, cpuset.FormatList(q.Affinity)))
		}
	}
	pids := ""
	if len(svc.PIDs) > 0 {
		pids = fmt.Sprintf(" (pid %d)", svc.PIDs[0])
	}
	if len(pinned) == 0 {
		return passResult("irqbalance running"+pids+", no NIC IRQ pinned to a subset of CPUs", expected)
	}
	r := failResult(fmt.Sprintf("irqbalance running%s while %d NIC IRQs are pinned: %s", pids, len(pinned), strings.Join(pinned, " ")), expected,
		Change{Kind: KindCommand, Target: "irqbalance", Value: "systemctl disable --now irqbalance", Current: "systemctl enable --now irqbalance"})
	r.Reason = "a snapshot cannot tell whether a person or irqbalance itself pinned them; to keep irqbalance for other devices " +
		"instead, ban these IRQs (IRQBALANCE_ARGS=\"--banirq=N …\" in /etc/default/irqbalance)"
	return r
}
