package audit

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/perflab/perflab/internal/cpuset"
	"github.com/perflab/perflab/internal/snapshot"
)

// Helpers shared by the rule files. They keep every rule's verdict shaped the
// same way: a missing fact is na with the snapshot's reason, a fail always
// carries Changes whose Current is the observed value so revert restores it.

func passResult(observed, expected string) Result {
	return Result{Status: Pass, Observed: observed, Expected: expected}
}

func failResult(observed, expected string, changes ...Change) Result {
	return Result{Status: Fail, Observed: observed, Expected: expected, Changes: changes}
}

func naResult(reason string) Result { return Result{Status: NA, Reason: reason} }

func errorResult(reason string) Result { return Result{Status: Error, Reason: reason} }

// missingFact returns na when any of the facts is unavailable in the
// snapshot, with the collector's reason; ok is false in that case.
func missingFact(s *snapshot.Snapshot, facts ...string) (Result, bool) {
	for _, f := range facts {
		if why := s.Missing(f); why != "" {
			return naResult(f + " unavailable: " + why), false
		}
	}
	return Result{}, true
}

// target returns the workload's expectation for a knob. A rule whose knob has
// no target in the workload cannot judge it, which is an error in the
// workload profile rather than a fact about the host.
func target(ctx *Context, knob string) (Expectation, Result, bool) {
	e, ok := ctx.W.Expect(knob)
	if !ok {
		return Expectation{}, errorResult(fmt.Sprintf("workload %s sets no target for %s", ctx.W.Name, knob)), false
	}
	return e, Result{}, true
}

// sysctlValue returns a sysctl's value, or an na Result when the kernel lacks
// it or the snapshot could not read it.
func sysctlValue(s *snapshot.Snapshot, name string) (string, Result, bool) {
	if why := s.Missing("sysctl." + name); why != "" {
		return "", naResult(name + " unavailable: " + why), false
	}
	v, ok := s.Sysctl[name]
	if !ok {
		if !s.CollectedLive() {
			return "", naResult(name + " is not in the captured tree (" + SysctlPath(name) + ")"), false
		}
		return "", naResult(name + " is not present on this kernel"), false
	}
	return v, Result{}, true
}

// checkSysctl judges one sysctl against the workload's target for knob
// (usually the sysctl name itself) and proposes the sysctl write that meets
// it.
func checkSysctl(ctx *Context, name, knob string) Result {
	v, res, ok := sysctlValue(ctx.S, name)
	if !ok {
		return res
	}
	e, res, ok := target(ctx, knob)
	if !ok {
		return res
	}
	if e.Matches(v) {
		return passResult(v, e.String())
	}
	return failResult(v, e.String(), sysctlChange(name, e.Value(), v))
}

// severityPtr lets a Result override the rule's severity.
func severityPtr(s Severity) *Severity { return &s }

// cpuList formats CPU ids as the kernel's list form ("0-3,8").
func cpuList(cpus []int) string { return cpuset.FormatList(cpus) }

// valuesByCPU renders a value → CPUs map as "powersave on 0-3, performance
// on 4-7", most CPUs first, so a mixed host reads at a glance. "all N CPUs"
// is said only when the value covers every online CPU.
func valuesByCPU(m map[string][]int, online []int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if len(m[keys[i]]) != len(m[keys[j]]) {
			return len(m[keys[i]]) > len(m[keys[j]])
		}
		return keys[i] < keys[j]
	})
	if len(keys) == 1 && (len(online) == 0 || len(m[keys[0]]) >= len(online)) {
		return keys[0] + " (all " + strconv.Itoa(len(m[keys[0]])) + " CPUs)"
	}
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + " on CPU " + cpuList(m[k])
	}
	return strings.Join(parts, ", ")
}

// perCPUChanges builds one KindFile change per CPU whose current value (from
// m: value → CPUs) fails e; fact is the per-CPU knob of the catalogue
// (cpu.governors). The CPUs are in ascending order so plans are stable.
func perCPUChanges(m map[string][]int, ok func(string) bool, want string, fact string) []Change {
	type cc struct {
		cpu int
		cur string
	}
	var bad []cc
	for v, cpus := range m {
		if ok(v) {
			continue
		}
		for _, c := range cpus {
			bad = append(bad, cc{c, v})
		}
	}
	sort.Slice(bad, func(i, j int) bool { return bad[i].cpu < bad[j].cpu })
	out := make([]Change, len(bad))
	for i, b := range bad {
		out[i] = factChange(fact, want, b.cur, strconv.Itoa(b.cpu))
	}
	return out
}

// perCPUFix renders per-CPU KindFile changes compactly: changes that write
// the same value over the same current value to the same file of every
// online CPU become one shell loop instead of a line per CPU (a 128-CPU host
// would otherwise print 128 lines). Anything else is rendered line by line.
func perCPUFix(cs []Change, online []int) (fix, revert string) {
	type key struct{ glob, value, current string }
	groups := map[key][]Change{}
	var order []key
	for _, c := range cs {
		k := key{cpuDirRE().ReplaceAllString(c.Target, "/cpu[0-9]*/"), c.Value, c.Current}
		if c.Kind != KindFile || k.glob == c.Target {
			k = key{c.Target, c.Value, c.Current} // not per-CPU: keep it alone
		}
		if _, seen := groups[k]; !seen {
			order = append(order, k)
		}
		groups[k] = append(groups[k], c)
	}
	var fl, rl []string
	for _, k := range order {
		g := groups[k]
		if len(g) > 1 && len(g) == len(online) {
			fl = append(fl, fmt.Sprintf("for f in %s; do echo %s > \"$f\"; done", k.glob, shellQuote(k.value)))
			rl = append(rl, fmt.Sprintf("for f in %s; do echo %s > \"$f\"; done", k.glob, shellQuote(k.current)))
			continue
		}
		fl = append(fl, FixCommands(g))
		rl = append(rl, RevertCommands(g))
	}
	return strings.Join(fl, "\n"), strings.Join(rl, "\n")
}

var cpuDirRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`/cpu[0-9]+/`) })

// failPerCPU is a fail whose changes are per-CPU files, with a compact fix.
func failPerCPU(observed, expected string, cs []Change, online []int) Result {
	r := failResult(observed, expected, cs...)
	r.Fix, r.Revert = perCPUFix(cs, online)
	return r
}

// parseFloat parses a number, tolerating surrounding white space.
func parseFloat(s string) (float64, bool) {
	v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	return v, err == nil
}
