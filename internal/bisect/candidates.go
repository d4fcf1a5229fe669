package bisect

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/perflab/perflab/internal/audit"
	"github.com/perflab/perflab/internal/compare"
	"github.com/perflab/perflab/internal/cpuset"
	"github.com/perflab/perflab/internal/knob"
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
		c, u, ok := classify(d, good, bad)
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
// is false for facts that are neither (meta). Which file backs a setting,
// how its value is written and whether perflab writes it at all come from
// the knob catalogue (internal/knob); what cannot be flipped is said here.
func classify(d compare.Diff, good, bad *snapshot.Snapshot) (*Candidate, *Untestable, bool) {
	p := d.Path
	un := func(why, instr string) (*Candidate, *Untestable, bool) {
		return nil, &Untestable{Path: p, Good: d.Before, Bad: d.After, Why: why, Instruction: instr}, true
	}
	if k, ok := knob.Lookup(p); ok {
		switch {
		case k.Method == knob.Boot && strings.HasPrefix(p, "kernel.vulnerabilities."):
			return un("mitigations follow from boot parameters, the CPU and its microcode", "reboot with the good host's mitigation parameters (e.g. mitigations=off, only where the risk is accepted) and measure again")
		case k.Method == knob.Boot:
			return un("a boot parameter", fmt.Sprintf("reboot this host with the good host's kernel command line (%s: %s instead of %s) and measure again", p, d.Before, d.After))
		case !k.Settable():
			return un("perflab does not write this setting", "set "+p+" to "+d.Before+" by hand and measure again")
		case d.Before == absent:
			return un("the good host has no such setting", "a kernel or module that has "+k.Name())
		case k.Path == "cpu.governors" || k.Path == "cpu.epp":
			return perCPU(d, good, k)
		case k.Scope == knob.Cgroup:
			ck, ok := audit.CgroupKnob(bad, k.Path)
			if !ok {
				return un("the snapshot does not say where this host's cgroup is", "set "+p+" to "+d.Before+" by hand and measure again")
			}
			k = ck
		case k.Path == "cpu.boost":
			k = audit.BoostKnob(bad)
		}
		if !k.Bound() {
			return un("perflab does not flip this setting yet", "set "+p+" to "+d.Before+" by hand and measure again")
		}
		v, err := k.FileValue(d.Before)
		if err != nil {
			return un("the good host's value cannot be written to "+k.Name()+": "+err.Error(), "set "+p+" to "+d.Before+" by hand and measure again")
		}
		cur, err := k.FileValue(d.After)
		if err != nil {
			cur = d.After
		}
		return &Candidate{Name: k.Name(), Path: p, Good: d.Before, Bad: d.After,
			Changes: []audit.Change{audit.KnobChange(k, v, cur)}}, nil, true
	}
	switch {
	case p == "kernel.release" || p == "kernel.version":
		return un("the kernel", fmt.Sprintf("boot kernel %s on this host and measure again", d.Before))
	case strings.HasPrefix(p, "block["):
		return un("a device property", "compare on the same device model")
	case strings.HasPrefix(p, "cpu.") || strings.HasPrefix(p, "host."):
		return un("the hardware or the virtualisation", "measure on a host with the good host's "+p+" ("+d.Before+")")
	case strings.HasPrefix(p, "kernel.modules"):
		return un("a kernel module", "load or unload the module as on the good host and measure again")
	case strings.HasPrefix(p, "net.") || strings.HasPrefix(p, "irqs") || strings.HasPrefix(p, "cgroup.") || strings.HasPrefix(p, "services.") || strings.HasPrefix(p, "mounts"):
		return un("perflab does not flip this setting yet", "set "+p+" to "+d.Before+" by hand (perflab tune/irq pin do IRQ and RPS placement) and measure again")
	}
	return nil, nil, false
}

// absent is how compare's diff shows a fact one side lacks.
const absent = "(absent)"

// perCPU flips a governor or EPP on the CPUs the good host had it on.
func perCPU(d compare.Diff, good *snapshot.Snapshot, k knob.Knob) (*Candidate, *Untestable, bool) {
	value := d.Path[strings.LastIndexByte(d.Path, '.')+1:]
	m := good.CPU.EPP
	if k.Path == "cpu.governors" {
		m = good.CPU.Governors
	}
	cpus := m[value]
	if len(cpus) == 0 {
		// The value is on this host, not the good one: flipping the good
		// value onto those CPUs is the entry for that value.
		return nil, nil, false
	}
	c := &Candidate{Name: k.Path, Path: k.Path, Good: value + " on CPUs " + cpuset.FormatList(cpus), Bad: d.After}
	for _, cpu := range cpus {
		c.Changes = append(c.Changes, audit.KnobChange(k.With(strconv.Itoa(cpu)), value, ""))
	}
	return c, nil, true
}
