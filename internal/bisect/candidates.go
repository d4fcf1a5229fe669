package bisect

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/perflab/perflab/internal/audit"
	"github.com/perflab/perflab/internal/compare"
	"github.com/perflab/perflab/internal/cpuset"
	"github.com/perflab/perflab/internal/snapshot"
)

// Candidate is one setting that differs between the good host and this
// one and that perflab can set at run time: flipping Changes sets this
// host's knob(s) to the good host's value.
type Candidate struct {
	Name    string         `json:"knob"` // the /sys path or sysctl name a user recognises
	Path    string         `json:"path"` // the snapshot fact path
	Good    string         `json:"good"`
	Bad     string         `json:"bad"`
	Changes []audit.Change `json:"-"`
}

// Untestable is a difference perflab cannot flip at run time, with the
// instruction that would test it.
type Untestable struct {
	Path        string `json:"path"`
	Good        string `json:"good"`
	Bad         string `json:"bad"`
	Why         string `json:"why"`
	Instruction string `json:"instruction"`
}

// Candidates splits the differences between the good snapshot and this
// host's into the settings perflab can flip and the rest. State facts
// (free memory, load, counters) are neither: they are not settings. Each
// candidate flips the whole fact (a governor on every CPU it covers).
func Candidates(good, bad *snapshot.Snapshot) ([]Candidate, []Untestable) {
	var cands []Candidate
	var un []Untestable
	byPath := map[string]int{}
	for _, d := range compare.DiffSnapshots(good, bad) {
		if compare.IsStateFact(d.Path) {
			continue
		}
		c, u, ok := classify(d, good)
		switch {
		case ok && c != nil:
			// Facts that map to the same knob set (a governor's CPUs) merge.
			if i, seen := byPath[c.Name]; seen {
				cands[i].Changes = mergeChanges(cands[i].Changes, c.Changes)
				continue
			}
			byPath[c.Name] = len(cands)
			cands = append(cands, *c)
		case ok && u != nil:
			un = append(un, *u)
		}
	}
	sort.SliceStable(cands, func(i, j int) bool { return cands[i].Name < cands[j].Name })
	return cands, un
}

func mergeChanges(a, b []audit.Change) []audit.Change {
	seen := map[string]bool{}
	for _, c := range a {
		seen[c.Target] = true
	}
	for _, c := range b {
		if !seen[c.Target] {
			a = append(a, c)
		}
	}
	return a
}

// classify maps one difference to a candidate or an untestable entry; ok
// is false for facts that are neither (meta).
func classify(d compare.Diff, good *snapshot.Snapshot) (*Candidate, *Untestable, bool) {
	p := d.Path
	file := func(target string) (*Candidate, *Untestable, bool) {
		return &Candidate{Name: target, Path: p, Good: d.Before, Bad: d.After,
			Changes: []audit.Change{{Kind: audit.KindFile, Target: target, Value: d.Before, Current: d.After}}}, nil, true
	}
	un := func(why, instr string) (*Candidate, *Untestable, bool) {
		return nil, &Untestable{Path: p, Good: d.Before, Bad: d.After, Why: why, Instruction: instr}, true
	}
	switch {
	case strings.HasPrefix(p, "sysctl."):
		name := strings.TrimPrefix(p, "sysctl.")
		if d.Before == "(absent)" {
			return un("the good host has no such sysctl", "a kernel or module that has "+name)
		}
		return &Candidate{Name: name, Path: p, Good: d.Before, Bad: d.After,
			Changes: []audit.Change{{Kind: audit.KindSysctl, Target: name, Value: d.Before, Current: d.After}}}, nil, true
	case p == "memory.thp.enabled":
		return file("/sys/kernel/mm/transparent_hugepage/enabled")
	case p == "memory.thp.defrag":
		return file("/sys/kernel/mm/transparent_hugepage/defrag")
	case p == "memory.thp.shmem_enabled":
		return file("/sys/kernel/mm/transparent_hugepage/shmem_enabled")
	case p == "memory.thp.khugepaged_defrag":
		return file("/sys/kernel/mm/transparent_hugepage/khugepaged/defrag")
	case p == "memory.ksm_run":
		return file("/sys/kernel/mm/ksm/run")
	case p == "cpu.boost":
		return file("/sys/devices/system/cpu/cpufreq/boost")
	case strings.HasPrefix(p, "cpu.governors.") || strings.HasPrefix(p, "cpu.epp."):
		return perCPU(d, good)
	case strings.HasPrefix(p, "block["):
		return blockKnob(d)
	case strings.HasPrefix(p, "kernel.params.") || p == "kernel.cmdline":
		return un("a boot parameter", fmt.Sprintf("reboot this host with the good host's kernel command line (%s: %s instead of %s) and measure again", p, d.Before, d.After))
	case strings.HasPrefix(p, "kernel.vulnerabilities."):
		return un("mitigations follow from boot parameters, the CPU and its microcode", "reboot with the good host's mitigation parameters (e.g. mitigations=off, only where the risk is accepted) and measure again")
	case p == "kernel.release" || p == "kernel.version":
		return un("the kernel", fmt.Sprintf("boot kernel %s on this host and measure again", d.Before))
	case strings.HasPrefix(p, "cpu.") || strings.HasPrefix(p, "host."):
		return un("the hardware or the virtualisation", "measure on a host with the good host's "+p+" ("+d.Before+")")
	case strings.HasPrefix(p, "kernel.modules"):
		return un("a kernel module", "load or unload the module as on the good host and measure again")
	case strings.HasPrefix(p, "net.") || strings.HasPrefix(p, "irqs") || strings.HasPrefix(p, "cgroup.") || strings.HasPrefix(p, "services.") || strings.HasPrefix(p, "mounts"):
		return un("perflab does not flip this setting yet", "set "+p+" to "+d.Before+" by hand (perflab tune/irq pin do IRQ and RPS placement) and measure again")
	}
	return nil, nil, false
}

// perCPU flips a governor or EPP on the CPUs the good host had it on.
func perCPU(d compare.Diff, good *snapshot.Snapshot) (*Candidate, *Untestable, bool) {
	gov := strings.HasPrefix(d.Path, "cpu.governors.")
	value := d.Path[strings.LastIndexByte(d.Path, '.')+1:]
	file, what := "energy_performance_preference", "cpu.epp"
	m := good.CPU.EPP
	if gov {
		file, what, m = "scaling_governor", "cpu.governors", good.CPU.Governors
	}
	cpus := m[value]
	if len(cpus) == 0 {
		// The value is on this host, not the good one: flipping the good
		// value onto those CPUs is the entry for that value.
		return nil, nil, false
	}
	c := &Candidate{Name: what, Path: what, Good: value + " on CPUs " + cpuset.FormatList(cpus), Bad: d.After}
	for _, cpu := range cpus {
		c.Changes = append(c.Changes, audit.Change{Kind: audit.KindFile,
			Target: "/sys/devices/system/cpu/cpu" + strconv.Itoa(cpu) + "/cpufreq/" + file, Value: value})
	}
	return c, nil, true
}

// blockKnob maps block[dev].field to its queue file.
func blockKnob(d compare.Diff) (*Candidate, *Untestable, bool) {
	p := d.Path
	end := strings.IndexByte(p, ']')
	if end < 0 {
		return nil, nil, false
	}
	dev, field := p[len("block["):end], strings.TrimPrefix(p[end+1:], ".")
	files := map[string]string{"scheduler": "scheduler", "read_ahead_kib": "read_ahead_kb", "nr_requests": "nr_requests", "write_cache": "write_cache"}
	f, ok := files[field]
	if !ok {
		return nil, &Untestable{Path: p, Good: d.Before, Bad: d.After, Why: "a device property", Instruction: "compare on the same device model"}, true
	}
	target := "/sys/block/" + dev + "/queue/" + f
	return &Candidate{Name: target, Path: p, Good: d.Before, Bad: d.After,
		Changes: []audit.Change{{Kind: audit.KindFile, Target: target, Value: d.Before, Current: d.After}}}, nil, true
}
