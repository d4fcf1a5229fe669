package snapshot

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/perflab/perflab/internal/cpuset"
	"github.com/prometheus/procfs"
)

// collectIRQ records every line of /proc/interrupts (parsed by procfs) with
// the affinity of each numbered IRQ from /proc/irq/N/, which procfs does not
// read. The net collector later maps these IRQs to NICs.
func collectIRQ(c *collector) {
	if !c.hasProc() {
		c.miss("irqs", "no /proc under the root")
		return
	}
	if !c.fs.Exists("/proc/interrupts") {
		c.miss("irqs", "/proc/interrupts does not exist on this host")
		return
	}
	p, err := anyProc(c)
	if err != nil {
		c.miss("irqs", err.Error())
		return
	}
	ints, err := readInterrupts(p)
	if err != nil {
		c.missErr("irqs", "/proc/interrupts", err)
		return
	}
	haveIRQDir := c.fs.Exists("/proc/irq")
	if !haveIRQDir {
		c.miss("irqs[*].affinity", "/proc/irq does not exist on this host")
	}
	irqs := make([]IRQ, 0, len(ints))
	for name, in := range ints {
		irq := IRQ{Number: name, Node: -1}
		if _, err := strconv.Atoi(name); err == nil {
			irq.Chip = in.Info
			irq.Actions = irqActions(in.Devices)
		} else {
			// Architecture lines (LOC, NMI, TLB…) carry their description in Info.
			irq.Actions = in.Info
		}
		irq.PerCPU, irq.Total = irqCounts(in.Values)
		if len(in.Values) == 1 && irq.Chip == "" && irq.Actions == "" {
			// "ERR: 0" style lines are system-wide counters, not per CPU.
			irq.PerCPU = nil
		}
		if haveIRQDir && irq.Chip != "" {
			readIRQAffinity(c, &irq)
		}
		irqs = append(irqs, irq)
	}
	sort.Slice(irqs, func(i, j int) bool { return irqLess(irqs[i].Number, irqs[j].Number) })
	c.s.IRQs = irqs
}

// readInterrupts guards procfs's parser, which indexes past the end of a
// short line; a corrupt copied /proc/interrupts must become an unavailable
// fact, not a crash.
func readInterrupts(p procfs.Proc) (ints procfs.Interrupts, err error) {
	defer func() {
		if r := recover(); r != nil {
			ints, err = nil, fmt.Errorf("/proc/interrupts is malformed: %v", r)
		}
	}()
	ints, err = p.Interrupts()
	if err != nil {
		return nil, err
	}
	return ints, nil
}

// anyProc returns a procfs.Proc to reach system-wide files that procfs only
// offers on a process (Interrupts): self on a live host, else any process
// directory a copied tree holds.
func anyProc(c *collector) (procfs.Proc, error) {
	if p, err := c.proc.Self(); err == nil {
		return p, nil
	}
	procs, err := c.proc.AllProcs()
	if err != nil {
		return procfs.Proc{}, err
	}
	if len(procs) == 0 {
		return procfs.Proc{}, errors.New("no process directory under /proc (procfs reads /proc/interrupts through one)")
	}
	return procs[0], nil
}

func readIRQAffinity(c *collector, irq *IRQ) {
	dir := "/proc/irq/" + irq.Number + "/"
	aff := knobFile("irqs[*].affinity", irq.Number)
	s, err := c.fs.ReadString(aff)
	if err != nil {
		c.missErr(ElemPath("irqs", irq.Number, "affinity"), aff, err)
	} else if cpus, err := cpuset.ParseList(s); err != nil {
		c.miss(ElemPath("irqs", irq.Number, "affinity"), err.Error())
	} else {
		irq.Affinity = cpus
	}
	// effective_affinity_list exists only with CONFIG_GENERIC_IRQ_EFFECTIVE_AFF_MASK;
	// its absence is normal and Affinity then is all there is.
	if s, err := c.fs.ReadString(dir + "effective_affinity_list"); err == nil {
		if cpus, err := cpuset.ParseList(s); err == nil {
			irq.Effective = cpus
		}
	}
	if n, err := c.fs.ReadInt(dir + "node"); err == nil {
		irq.Node = int(n)
	}
}

// irqCounts parses procfs's per-CPU count strings.
func irqCounts(vals []string) ([]uint64, uint64) {
	per := make([]uint64, 0, len(vals))
	var total uint64
	for _, v := range vals {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			continue
		}
		per = append(per, n)
		total += n
	}
	return per, total
}

// irqActions extracts the handler names from what procfs calls Devices: the
// columns after the chip name, which also hold the hardware IRQ number and
// trigger type in forms that vary by architecture and kernel version:
//
//	x86:   "5-edge ACPI:Ged", "1572865-edge mlx5_comp0@pci:0000:03:00.0"
//	arm64: "27 Level arch_timer", "524288 Edge eth0-TxRx-0"
//	old:   "timer" (trigger folded into the chip, "IO-APIC-edge")
//
// Several handlers on one line are separated by ", " as the kernel prints.
func irqActions(devices string) string {
	f := strings.Fields(devices)
	i := 0
	if i < len(f) && isHWIRQ(f[i]) {
		i++
	}
	for i < len(f) && isTrigger(f[i]) {
		i++
	}
	return strings.Join(f[i:], " ")
}

// isHWIRQ matches "27", "5-edge", "0-fasteoi" and a bare "-edge" (no IRQ
// domain, so no number).
func isHWIRQ(s string) bool {
	num, name, hasName := strings.Cut(s, "-")
	if num == "" && !hasName {
		return false
	}
	for _, r := range num {
		if r < '0' || r > '9' {
			return false
		}
	}
	if !hasName {
		return true
	}
	return name != "" && isWord(name)
}

// isTrigger matches GENERIC_IRQ_SHOW_LEVEL's "Level"/"Edge", optionally with
// the flow name appended ("Edge-edge").
func isTrigger(s string) bool {
	w, _, _ := strings.Cut(s, "-")
	return w == "Level" || w == "Edge"
}

func isWord(s string) bool {
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return false
		}
	}
	return true
}

// irqLess sorts numbered IRQs numerically before the named architecture
// lines, which sort by name.
func irqLess(a, b string) bool {
	na, oka := irqNum(a)
	nb, okb := irqNum(b)
	switch {
	case oka && okb:
		return na < nb
	case oka:
		return true
	case okb:
		return false
	}
	return a < b
}

// irqNum is strconv.Atoi for a sort key. A name (NMI, LOC …) cannot
// parse, and Atoi would allocate its error at every comparison of a
// sort: it is refused on its first byte.
func irqNum(s string) (int, bool) {
	if s == "" || (s[0] < '0' || s[0] > '9') && s[0] != '+' && s[0] != '-' {
		return 0, false
	}
	n, err := strconv.Atoi(s)
	return n, err == nil
}
