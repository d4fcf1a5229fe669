package search

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/perflab/perflab/internal/audit"
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
}

// Change is the journal write that sets the knob to v.
func (k Knob) Change(v string) audit.Change {
	return audit.Change{Kind: k.Kind, Target: k.Target, Value: v}
}

// Catalogue is what the search needs from the knob catalogue: the knobs it
// may try for a workload with their value ladders. The knobs engineer's
// catalogue (issue 21.3) replaces builtinCatalogue behind this interface.
type Catalogue interface {
	Knobs() []Knob
}

// Builtin is the search's catalogue until the shared knob catalogue lands:
// the settings of seed 002's campaign that tune can write at run time, with
// ladders that span the kernel default, the seed's value and one step
// beyond. Namespaced net sysctls first.
type Builtin struct{}

// Knobs lists the builtin knobs.
func (Builtin) Knobs() []Knob {
	sys := func(name string, scope Scope, area string, ladder ...string) Knob {
		return Knob{Name: name, Kind: audit.KindSysctl, Target: name, Scope: scope, Ladder: ladder, Area: area}
	}
	return []Knob{
		sys("net.core.somaxconn", ScopeNetNS, "net", "4096", "65535"),
		sys("net.ipv4.tcp_max_syn_backlog", ScopeNetNS, "net", "4096", "65536"),
		sys("net.ipv4.tcp_rmem", ScopeNetNS, "net", "4096 131072 6291456", "4096 87380 16777216"),
		sys("net.ipv4.tcp_wmem", ScopeNetNS, "net", "4096 16384 4194304", "4096 65536 16777216"),
		sys("net.ipv4.tcp_fin_timeout", ScopeNetNS, "net", "15", "60"),
		sys("net.ipv4.tcp_tw_reuse", ScopeNetNS, "net", "1", "2"),
		sys("net.ipv4.tcp_fastopen", ScopeNetNS, "net", "1", "3"),
		sys("net.ipv4.ip_local_port_range", ScopeNetNS, "net", "1024 65535"),
		sys("net.ipv4.tcp_slow_start_after_idle", ScopeNetNS, "net", "0", "1"),
		sys("net.core.netdev_max_backlog", ScopeHost, "net", "1000", "16384"),
		sys("vm.swappiness", ScopeHost, "memory", "1", "10", "60"),
		sys("vm.dirty_ratio", ScopeHost, "block", "10", "40"),
		sys("vm.dirty_background_ratio", ScopeHost, "block", "5", "10"),
		sys("kernel.numa_balancing", ScopeHost, "memory", "0", "1"),
		{Name: "thp.enabled", Kind: audit.KindFile, Target: "/sys/kernel/mm/transparent_hugepage/enabled", Scope: ScopeHost, Ladder: []string{"always", "madvise", "never"}, Area: "memory"},
	}
}

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
		if strings.HasPrefix(name, "/proc/sys/net/") || strings.HasPrefix(name, "/sys/class/net/") {
			k.Scope = ScopeNetNS
		}
	case strings.ContainsAny(name, "/ \t"):
		return Knob{}, fmt.Errorf("--knob %q: a knob is a sysctl name (net.core.somaxconn) or an absolute /sys or /proc path", s)
	default:
		k.Kind, k.Target = audit.KindSysctl, name
		if netnsSysctl(name) {
			k.Scope = ScopeNetNS
		}
		k.Area = strings.SplitN(name, ".", 2)[0]
	}
	return k, nil
}

// netnsSysctl: net.ipv4/ipv6/unix and the namespaced part of net.core
// belong to the writer's network namespace; the rest of net.core is global.
func netnsSysctl(name string) bool {
	switch name {
	case "net.core.somaxconn", "net.core.xfrm_acq_expires", "net.core.xfrm_aevent_etime", "net.core.xfrm_aevent_rseqth", "net.core.xfrm_larval_drop":
		return true
	}
	return strings.HasPrefix(name, "net.") && !strings.HasPrefix(name, "net.core.")
}

// SpaceOptions choose the knobs of a search.
type SpaceOptions struct {
	Workload *audit.Workload // its targets join the ladders (nil: none)
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
