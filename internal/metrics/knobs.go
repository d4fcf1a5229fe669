package metrics

import (
	"sort"
	"strconv"
	"sync"

	"github.com/perflab/perflab/internal/audit"
	"github.com/perflab/perflab/internal/knob"
	"github.com/perflab/perflab/internal/snapshot"
	"github.com/prometheus/client_golang/prometheus"
)

// Enum series in the node_exporter style: one series per possible value,
// 1 for the current one and 0 for the rest, so an alert can match
// `perflab_thp_enabled{mode="always"} == 1` and a graph shows changes.

var (
	governorDesc = lazyDesc(Namespace+"_cpu_scaling_governor",
		"Current cpufreq governor of each CPU (1 for the active governor).",
		[]string{"cpu", "governor"}, nil)
	clocksourceDesc = lazyDesc(Namespace+"_clocksource",
		"Available clocksources (1 for the current one).",
		[]string{"clocksource"}, nil)
	mitigationsDesc = lazyDesc(Namespace+"_kernel_mitigations",
		"CPU vulnerability mitigation mode from the kernel command line: auto, auto,nosmt, partial (some turned off) or off (1 for the current state).",
		[]string{"state"}, nil)
	vulnDesc = lazyDesc(Namespace+"_cpu_vulnerability",
		"State reported by /sys/devices/system/cpu/vulnerabilities/* (1 for the current state).",
		[]string{"vulnerability", "state"}, nil)
)

// knobEnums are the enum values, which come from the knob catalogue
// (internal/knob: it knows each choice knob's values), and the series
// that name a knob's file. Built on first use: the catalogue is not built
// at start-up (knob.catalogue).
type knobEnums struct {
	thpEnabledDesc, thpDefragDesc            *prometheus.Desc
	knownGovernors, thpModes, thpDefragModes []string
}

var enums = sync.OnceValue(func() knobEnums {
	thpEnabled := knob.MustLookup("memory.thp.enabled")
	thpDefrag := knob.MustLookup("memory.thp.defrag")
	return knobEnums{
		thpEnabledDesc: prometheus.NewDesc(Namespace+"_thp_enabled",
			"Transparent huge pages policy, "+thpEnabled.Name()+" (1 for the selected mode).",
			[]string{"mode"}, nil),
		thpDefragDesc: prometheus.NewDesc(Namespace+"_thp_defrag",
			"Transparent huge pages defrag policy, "+thpDefrag.Name()+" (1 for the selected mode).",
			[]string{"mode"}, nil),
		knownGovernors: knob.MustLookup("cpu.governors").Values,
		thpModes:       thpEnabled.Values,
		thpDefragModes: thpDefrag.Values,
	}
})

// Knobs is a collector for the key knobs of one snapshot.
type Knobs struct {
	mu sync.RWMutex
	s  *snapshot.Snapshot
}

// NewKnobs returns an empty knob collector: it reports nothing until Update.
func NewKnobs() *Knobs { return &Knobs{} }

// Update sets the snapshot whose knobs are reported.
func (k *Knobs) Update(s *snapshot.Snapshot) {
	k.mu.Lock()
	k.s = s
	k.mu.Unlock()
}

// Describe implements prometheus.Collector.
func (k *Knobs) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{governorDesc(), enums().thpEnabledDesc, enums().thpDefragDesc, clocksourceDesc(), mitigationsDesc(), vulnDesc()} {
		ch <- d
	}
}

// Collect implements prometheus.Collector. A knob the snapshot lacks (no
// cpufreq in a VM, no THP) produces no series rather than a false 0.
func (k *Knobs) Collect(ch chan<- prometheus.Metric) {
	k.mu.RLock()
	s := k.s
	k.mu.RUnlock()
	if s == nil {
		return
	}
	collectGovernors(ch, s)
	e := enums()
	enum(ch, e.thpEnabledDesc, e.thpModes, s.Memory.THP.Enabled)
	enum(ch, e.thpDefragDesc, e.thpDefragModes, s.Memory.THP.Defrag)
	enum(ch, clocksourceDesc(), s.Kernel.Clocksources, s.Kernel.Clocksource)
	if s.Missing("kernel.params") == "" {
		m := audit.MitigationsOf(s.Kernel.Params, s.Kernel.Vulnerabilities)
		enum(ch, mitigationsDesc(), audit.MitigationStates, m.State)
	}
	names := make([]string, 0, len(s.Kernel.Vulnerabilities))
	for n := range s.Kernel.Vulnerabilities {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		cur := snapshot.ClassifyVulnerability(s.Kernel.Vulnerabilities[n])
		for _, st := range snapshot.VulnStates {
			ch <- constGauge(vulnDesc(), b2f(st == cur), n, string(st))
		}
	}
}

func collectGovernors(ch chan<- prometheus.Metric, s *snapshot.Snapshot) {
	if len(s.CPU.Governors) == 0 {
		return
	}
	byCPU := map[int]string{}
	all := map[string]bool{}
	for _, g := range enums().knownGovernors {
		all[g] = true
	}
	for g, cpus := range s.CPU.Governors {
		all[g] = true
		for _, c := range cpus {
			byCPU[c] = g
		}
	}
	govs := make([]string, 0, len(all))
	for g := range all {
		govs = append(govs, g)
	}
	sort.Strings(govs)
	cpus := make([]int, 0, len(byCPU))
	for c := range byCPU {
		cpus = append(cpus, c)
	}
	sort.Ints(cpus)
	for _, c := range cpus {
		for _, g := range govs {
			ch <- constGauge(governorDesc(), b2f(byCPU[c] == g), strconv.Itoa(c), g)
		}
	}
}

// enum emits one series per value of values ∪ {current}; nothing when the
// current value is unknown.
func enum(ch chan<- prometheus.Metric, d *prometheus.Desc, values []string, current string) {
	if current == "" {
		return
	}
	seen := map[string]bool{}
	vs := append([]string(nil), values...)
	vs = append(vs, current)
	sort.Strings(vs)
	for _, v := range vs {
		if seen[v] {
			continue
		}
		seen[v] = true
		ch <- constGauge(d, b2f(v == current), v)
	}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
