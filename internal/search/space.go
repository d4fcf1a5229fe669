package search

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/perflab/perflab/internal/audit"
	"github.com/perflab/perflab/internal/hostfs"
	"github.com/perflab/perflab/internal/knob"
)

// Scope says where a knob's write lands, which decides whether a target
// may change it: a container (or any process outside the host's network
// namespace) may change only namespaced knobs.
type Scope string

const (
	// ScopeNetNS knobs belong to the network namespace of the writer.
	ScopeNetNS Scope = "netns"
	// ScopeHost knobs are host-wide (vm.*, /sys/block, THP, most net.core).
	ScopeHost Scope = "host"
)

// Knob is one dimension of the search space: a setting tune can write
// through its journal, and the values worth trying. It is the part of the
// knob catalogue the search needs (see Catalogue); ladders come from the
// catalogue, the workload's targets and the user.
type Knob struct {
	Name   string           `json:"name"` // sysctl name or /sys path, as the user writes it
	Kind   audit.ChangeKind `json:"kind"`
	Target string           `json:"target"` // the audit.Change target
	Scope  Scope            `json:"scope"`
	Ladder []string         `json:"ladder"`
	// Area is the knowledge area the knob acts on (net, memory, block…),
	// for ordering: knobs of the probe's area are tried first.
	Area string `json:"area,omitempty"`
	// Group names knobs that act together (the catalogue's knob.Group):
	// after the passes, a group none of whose members was kept alone is
	// tried with its members set together.
	Group string `json:"group,omitempty"`
}

// Change is the journal write that sets the knob to v.
func (k Knob) Change(v string) audit.Change {
	return audit.Change{Kind: k.Kind, Target: k.Target, Value: v}
}

// Catalogue is what the search needs from the knob catalogue: the knobs it
// may try with their value ladders.
type Catalogue interface {
	Knobs() []Knob
}

// FromKnobs is the search's view of the one knob catalogue
// (internal/knob): every knob perflab writes at run time that has a value
// ladder, per device where it is templated (block devices other than
// loop, ram and zram, at most four of each), with the scope the catalogue
// gives it — a net sysctl only the initial namespace may write
// (net.core.rmem_max) counts as host-wide. Cgroup and boot knobs are not
// searched.
type FromKnobs struct{ FS hostfs.FS }

// Knobs lists the catalogue's searchable knobs.
func (c FromKnobs) Knobs() []Knob {
	var out []Knob
	for _, k := range knob.All() {
		if !k.Settable() || len(k.Ladder) == 0 || (k.Scope != knob.NetNS && k.Scope != knob.Host) {
			continue
		}
		insts := []knob.Knob{k}
		if len(k.Keys()) > 0 {
			insts = nil
			for _, in := range k.Instances(c.FS) {
				n := in.Name()
				if strings.Contains(n, "/loop") || strings.Contains(n, "/ram") || strings.Contains(n, "/zram") || len(insts) == 4 {
					continue
				}
				insts = append(insts, in)
			}
		}
		for _, in := range insts {
			if sk, ok := fromKnob(c.FS, in); ok {
				out = append(out, sk)
			}
		}
	}
	return out
}

func fromKnob(fs hostfs.FS, k knob.Knob) (Knob, bool) {
	sk := Knob{Name: k.Name(), Scope: ScopeHost, Area: areaOf(k.Path), Group: k.Group}
	// Ladders hold fact values (cpu.boost "true"); the journal writes file
	// values (no_turbo "0" where intel_pstate backs it).
	for _, v := range k.Ladder {
		if fv, err := k.FromFact(fs, v); err == nil && !slices.Contains(sk.Ladder, fv) {
			sk.Ladder = append(sk.Ladder, fv)
		}
	}
	if len(sk.Ladder) == 0 {
		return sk, false
	}
	if k.Scope == knob.NetNS && !k.NetNSReadOnly {
		sk.Scope = ScopeNetNS
	}
	switch k.Method {
	case knob.Sysctl:
		sk.Kind, sk.Target = audit.KindSysctl, sk.Name
	case knob.File:
		if !k.Bound() {
			return sk, false
		}
		f, _, err := k.Resolve(fs)
		if err != nil {
			return sk, false
		}
		sk.Kind, sk.Target = audit.KindFile, f
	default:
		return sk, false
	}
	return sk, true
}

// areaOf maps a fact path to the area a probe exercises: net, memory,
// block, cpu, kernel, fs.
func areaOf(path string) string {
	p := strings.TrimPrefix(path, "sysctl.")
	head, _, _ := strings.Cut(p, ".")
	head, _, _ = strings.Cut(head, "[")
	if head == "vm" {
		if strings.Contains(p, "dirty") {
			return "block"
		}
		return "memory"
	}
	return head
}

// probeArea is the area a probe name exercises ("net.tcp" → net).
func probeArea(probe string) string {
	head, _, _ := strings.Cut(strings.TrimPrefix(probe, "probe:"), ".")
	switch head {
	case "disk", "fio", "dd":
		return "block"
	case "redis", "wrk", "http", "https", "sockperf", "qperf", "iperf3", "etcd":
		return "net"
	}
	return head
}

var sysctlName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_.-]+$`) })

// KnobSpec is a user's addition to the space: NAME=v1,v2 (a sysctl name or
// an absolute /sys or /proc path), from --knob or a profile.
func ParseKnobSpec(s string) (Knob, error) {
	name, vals, ok := strings.Cut(s, "=")
	name = strings.TrimSpace(name)
	if !ok || name == "" || strings.TrimSpace(vals) == "" {
		return Knob{}, fmt.Errorf("--knob %q: want NAME=VALUE[,VALUE…], e.g. net.core.somaxconn=4096,65535", s)
	}
	var ladder []string
	for _, v := range strings.Split(vals, ",") {
		if v = strings.Join(strings.Fields(v), " "); v != "" && !slices.Contains(ladder, v) {
			ladder = append(ladder, v)
		}
	}
	k := Knob{Name: name, Ladder: ladder, Scope: ScopeHost}
	switch {
	case strings.HasPrefix(name, "/sys/") || strings.HasPrefix(name, "/proc/"):
		if strings.Contains(name, "..") {
			return Knob{}, fmt.Errorf("--knob %q: the path may not contain '..'", s)
		}
		k.Kind, k.Target = audit.KindFile, name
		if kn, ok := knob.ForFile(name); ok {
			if kn.Scope == knob.NetNS && !kn.NetNSReadOnly {
				k.Scope = ScopeNetNS
			}
			k.Group = kn.Group
		}
	case strings.ContainsAny(name, "/ \t") || strings.Contains(name, "..") || strings.HasPrefix(name, ".") || strings.HasSuffix(name, ".") || !sysctlName().MatchString(name):
		return Knob{}, fmt.Errorf("--knob %q: a knob is a sysctl name (net.core.somaxconn) or an absolute /sys or /proc path", s)
	default:
		k.Kind, k.Target = audit.KindSysctl, name
		kn := knob.MustLookup("sysctl." + name)
		if kn.Scope == knob.NetNS && !kn.NetNSReadOnly {
			k.Scope = ScopeNetNS
		}
		k.Group = kn.Group
		k.Area = areaOf("sysctl." + name)
	}
	return k, nil
}

// SpaceOptions choose the knobs of a search.
type SpaceOptions struct {
	Workload *audit.Workload // its targets join the ladders (nil: none)
	Probe    string          // knobs of the area it exercises are tried first
	Add      []Knob          // the user's knobs (--knob), merged by name
	Only     bool            // search only the user's knobs
	Pin      []string        // knobs held where they are (not searched)
	// NamespacedOnly keeps only knobs of the target's network namespace:
	// a container, or perflab itself running in a network namespace.
	NamespacedOnly bool
}

// Space builds the knobs to search from a catalogue: the workload's
// targets and the user's values join each knob's ladder, pinned knobs and
// knobs the target may not change are left out (and listed in Excluded).
func Space(cat Catalogue, opt SpaceOptions) (knobs []Knob, excluded []string) {
	byName := map[string]int{}
	add := func(k Knob) {
		if i, ok := byName[k.Name]; ok {
			for _, v := range k.Ladder {
				if !slices.Contains(knobs[i].Ladder, v) {
					knobs[i].Ladder = append(knobs[i].Ladder, v)
				}
			}
			return
		}
		byName[k.Name] = len(knobs)
		knobs = append(knobs, k)
	}
	if !opt.Only {
		for _, k := range cat.Knobs() {
			add(k)
		}
		if opt.Workload != nil {
			keys := make([]string, 0, len(opt.Workload.Targets))
			for name := range opt.Workload.Targets {
				keys = append(keys, name)
			}
			sort.Strings(keys)
			for _, name := range keys {
				if i, ok := byName[name]; ok {
					v := audit.ParseExpectation(opt.Workload.Targets[name]).Value()
					// A target of alternatives ("a|b") gives its first.
					v, _, _ = strings.Cut(v, "|")
					if v != "" && !slices.Contains(knobs[i].Ladder, v) {
						knobs[i].Ladder = append(knobs[i].Ladder, v)
					}
				}
			}
		}
	}
	for _, k := range opt.Add {
		add(k)
	}
	// The probe's area first: a pass may end on the budget.
	area := probeArea(opt.Probe)
	slices.SortStableFunc(knobs, func(a, b Knob) int {
		ia, ib := a.Area == area, b.Area == area
		switch {
		case ia && !ib:
			return -1
		case ib && !ia:
			return 1
		}
		return 0
	})
	out := knobs[:0:0]
	for _, k := range knobs {
		switch {
		case slices.Contains(opt.Pin, k.Name):
			excluded = append(excluded, k.Name+": pinned")
		case opt.NamespacedOnly && k.Scope != ScopeNetNS:
			excluded = append(excluded, k.Name+": host-wide; this target may change only namespaced knobs")
		case len(k.Ladder) == 0:
			excluded = append(excluded, k.Name+": no values to try")
		default:
			out = append(out, k)
		}
	}
	return out, excluded
}
