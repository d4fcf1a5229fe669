// Package audit evaluates a rule catalogue against a snapshot for a
// workload and returns findings: what was observed, what the workload
// expects, why it matters (with a number and a source), and the exact
// change that fixes it.
//
// A rule's fix is data (Change values), not only text: `perflab tune` applies
// the Changes of failing findings, so the audit and the tuner can never
// disagree about what a workload wants. Rules are pure functions of a
// Snapshot and a Workload; they never read the host.
package audit

import (
	"fmt"
	"github.com/perflab/perflab/internal/knob"
	"sort"
	"strings"
	"sync"

	"github.com/perflab/perflab/internal/snapshot"
)

// Severity orders findings; the zero value is Info.
type Severity int

const (
	Info Severity = iota
	Low
	Medium
	High
	Critical
)

var severityNames = []string{"info", "low", "medium", "high", "critical"}

func (s Severity) String() string {
	if s < 0 || int(s) >= len(severityNames) {
		return fmt.Sprintf("severity(%d)", int(s))
	}
	return severityNames[s]
}

// MarshalText makes severities read as words in JSON.
func (s Severity) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText parses a severity word.
func (s *Severity) UnmarshalText(b []byte) error {
	v, err := ParseSeverity(string(b))
	if err != nil {
		return err
	}
	*s = v
	return nil
}

// ParseSeverity parses info|low|medium|high|critical.
func ParseSeverity(s string) (Severity, error) {
	for i, n := range severityNames {
		if strings.EqualFold(s, n) {
			return Severity(i), nil
		}
	}
	return 0, fmt.Errorf("unknown severity %q (want one of %s)", s, strings.Join(severityNames, ", "))
}

// Status is the outcome of one rule.
type Status string

const (
	Pass  Status = "pass"
	Fail  Status = "fail"
	NA    Status = "na"    // the rule does not apply here; Reason says why
	Error Status = "error" // the rule could not decide; Reason says why
)

// ChangeKind says how a Change is applied.
type ChangeKind string

const (
	// KindSysctl writes /proc/sys/<name with dots as slashes>; Target is the
	// sysctl name (net.core.somaxconn).
	KindSysctl ChangeKind = "sysctl"
	// KindFile writes a /sys or /proc file in place; Target is the host path.
	KindFile ChangeKind = "file"
	// KindChannels sets a NIC's combined channel count (ethtool -L);
	// Target is the interface name.
	KindChannels ChangeKind = "channels"
	// KindBoot is a kernel command-line parameter: printed as an
	// instruction, never applied automatically. Target is the parameter.
	KindBoot ChangeKind = "boot"
	// KindCommand is an instruction the user runs by hand (stop a service,
	// restart a process with LD_PRELOAD); Value holds the command.
	KindCommand ChangeKind = "command"
)

// Change is one knob write that moves the host to what the workload expects.
type Change struct {
	Kind    ChangeKind `json:"kind"`
	Target  string     `json:"target"`
	Value   string     `json:"value"`
	Current string     `json:"current"` // the value to restore on revert
}

// Applicable reports whether tune may apply the change (boot parameters and
// commands are instructions only).
func (c Change) Applicable() bool {
	return c.Kind == KindSysctl || c.Kind == KindFile || c.Kind == KindChannels
}

// SysctlPath maps a sysctl name to its /proc/sys path.
func SysctlPath(name string) string { return knob.SysctlPath(name) }

// Rule is one check in the catalogue.
type Rule struct {
	ID        string   // stable, e.g. CPU-GOVERNOR
	Title     string   // one line
	Area      string   // cpu, power, memory, kernel, security, net, irq, block, fs, cgroup, limits, process, virt
	Severity  Severity // severity of a failure
	Workloads []string // workloads it applies to; nil means all
	Knob      string   // exact /proc or /sys path or sysctl name
	Why       string   // one paragraph, with the number that makes it matter
	Source    string   // where the number comes from (seed, doc, paper URL)
	Check     func(*Context) Result
}

// AppliesTo reports whether the rule runs for workload w.
func (r *Rule) AppliesTo(w string) bool {
	if len(r.Workloads) == 0 {
		return true
	}
	for _, x := range r.Workloads {
		if x == w {
			return true
		}
	}
	return false
}

// Context is what a rule sees.
type Context struct {
	S *snapshot.Snapshot
	W *Workload
}

// Result is a rule's verdict on one snapshot.
type Result struct {
	Status   Status
	Observed string
	Expected string
	Reason   string    // for na and error; optional detail for pass/fail
	Changes  []Change  // for fail: what fixes it
	Fix      string    // overrides the command rendered from Changes
	Revert   string    // overrides the revert command rendered from Changes
	Severity *Severity // overrides the rule's severity (e.g. worse when the gap is larger)
}

// Finding is a rule's result with the rule's metadata, as reported.
type Finding struct {
	Rule     string   `json:"rule"`
	Title    string   `json:"title"`
	Area     string   `json:"area"`
	Status   Status   `json:"status"`
	Severity Severity `json:"severity"`
	Workload string   `json:"workload"`
	Knob     string   `json:"knob"`
	Observed string   `json:"observed"`
	Expected string   `json:"expected"`
	Reason   string   `json:"reason,omitempty"`
	Why      string   `json:"why"`
	Source   string   `json:"source"`
	Fix      string   `json:"fix,omitempty"`
	Revert   string   `json:"revert,omitempty"`
	Changes  []Change `json:"changes,omitempty"`
}

// ruleFiles register each rule file's rules. They run on the first use
// of the catalogue, not at start-up: every perflab command, --version
// too, would otherwise build all the rules (and the knob catalogue their
// paths come from).
var ruleFiles = []func(){
	registerBlockRules,
	registerCgroupRules,
	registerContainerRules,
	registerCpuRules,
	registerFsRules,
	registerIrqRules,
	registerKernelRules,
	registerLimitsRules,
	registerMemoryRules,
	registerNetRules,
	registerPerfRules,
	registerPowerRules,
	registerProcessRules,
	registerSecurityRules,
	registerVirtRules,
}

var (
	catalogueOnce sync.Once
	rulesByID     map[string]*Rule
)

// catalogue returns every rule by ID.
func catalogue() map[string]*Rule {
	catalogueOnce.Do(func() {
		rulesByID = map[string]*Rule{}
		for _, f := range ruleFiles {
			f()
		}
	})
	return rulesByID
}

// register adds rules to the catalogue; each rule file's register…Rules
// calls it (ruleFiles).
func register(rules ...*Rule) {
	for _, r := range rules {
		if _, dup := rulesByID[r.ID]; dup {
			panic("audit: duplicate rule " + r.ID)
		}
		if r.Check == nil || r.ID == "" || r.Why == "" || r.Knob == "" {
			panic("audit: incomplete rule " + r.ID)
		}
		rulesByID[r.ID] = r
	}
}

// Rules returns the catalogue sorted by ID.
func Rules() []*Rule {
	out := make([]*Rule, 0, len(catalogue()))
	for _, r := range catalogue() {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// Lookup returns a rule by ID.
func Lookup(id string) (*Rule, bool) {
	r, ok := catalogue()[id]
	return r, ok
}

// Evaluate runs one rule, turning a panic inside a rule into an error
// finding so that one bad rule never takes the audit down.
func Evaluate(r *Rule, ctx *Context) (f Finding) {
	f = Finding{
		Rule: r.ID, Title: r.Title, Area: r.Area, Severity: r.Severity,
		Workload: ctx.W.Name, Knob: r.Knob, Why: r.Why, Source: r.Source,
	}
	defer func() {
		if p := recover(); p != nil {
			f.Status = Error
			f.Reason = fmt.Sprintf("rule failed: %v", p)
		}
	}()
	if !r.AppliesTo(ctx.W.Name) && !ctx.W.extends(r.Workloads) {
		f.Status = NA
		f.Reason = "not relevant to workload " + ctx.W.Name
		return f
	}
	res := r.Check(ctx)
	f.Status = res.Status
	f.Observed, f.Expected, f.Reason = res.Observed, res.Expected, res.Reason
	if res.Severity != nil {
		f.Severity = *res.Severity
	}
	if res.Status == Fail {
		f.Changes = res.Changes
		f.Fix, f.Revert = res.Fix, res.Revert
		if f.Fix == "" {
			f.Fix = FixCommands(res.Changes)
		}
		if f.Revert == "" {
			f.Revert = RevertCommands(res.Changes)
		}
	}
	if ctx.S.Container != nil {
		placeInContainer(&f, ctx.S)
	}
	return f
}

// Run evaluates the whole catalogue (minus the workload's skipped rules) and
// returns findings sorted by severity (highest first), then rule ID.
func Run(s *snapshot.Snapshot, w *Workload) []Finding {
	ctx := &Context{S: s, W: w}
	var out []Finding
	for _, r := range Rules() {
		if w.Skip[r.ID] {
			continue
		}
		out = append(out, Evaluate(r, ctx))
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Severity != out[j].Severity {
			return out[i].Severity > out[j].Severity
		}
		return out[i].Rule < out[j].Rule
	})
	return out
}

// Worst returns the highest severity among failing findings, and whether
// any finding failed at all.
func Worst(fs []Finding) (Severity, bool) {
	var worst Severity
	any := false
	for _, f := range fs {
		if f.Status == Fail && (!any || f.Severity > worst) {
			worst, any = f.Severity, true
		}
	}
	return worst, any
}
