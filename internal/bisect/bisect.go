// Package bisect confirms which settings cause a performance gap between a
// good host and this one by flipping them and measuring again, instead of
// ranking suspicions (compare's knowledge base is a correlation).
//
// # Candidates
//
// The differences between the good snapshot and this host's that perflab
// can set at run time (sysctls, THP, governor and EPP, boost, block queue
// settings) are candidates; the others (boot parameters, mitigations, the
// kernel, the CPU model, NIC and IRQ placement it does not flip yet) are
// listed as untestable with the instruction that would test them. State
// facts (free memory, load) are neither.
//
// # Search
//
// Every measurement is an interleaved session (bench.Interleave): blocks
// in which the host is put, in random order, into "bad" (every knob as it
// was) and into a test state (a group of candidates flipped to the good
// host's values through tune's journal), each measured once. Blocks pair:
// the effect of a state is the paired ratio state/bad of the metric.
//
//  1. all: every candidate flipped. If that does not improve the metric
//     (its interval does not clear the minimum effect), no testable setting
//     explains the gap and the search ends.
//  2. split(S): candidates are ordered by how plausible the knowledge base
//     finds them for the metric; S is split into halves A (the more
//     plausible) and B. A is measured. If A's effect covers S's (their
//     intervals overlap), B is cleared without a measurement. If A
//     improves but less, B is measured too and both halves are split. If A
//     does nothing, B is measured; if B covers S, A is cleared; if neither
//     half alone improves but S does, S is one joint cause (an
//     interaction), narrowed by removing one candidate at a time and keeping
//     it out when the rest still covers the effect (delta debugging's
//     complement test). A single candidate that improves is found.
//
// Screening sessions are short (Blocks, default 2); their intervals pool
// the block-to-block variance of the paired log-ratios of every session so
// far (same probe, host and minutes), so a two-block session still has an
// interval with the degrees of freedom of all of them.
//
// # Confirmation and attribution
//
// One final session measures bad, all and every found cause, Confirm
// blocks (default 3): every cause is applied and reverted Confirm times.
// A cause is confirmed, KernelCI-style, when it improves the metric in
// every one of its blocks and its paired interval clears the minimum
// effect. Its share of the gap is ln(cause/bad) / ln(all/bad) per block,
// with a t interval over blocks; the interaction is 1 − Σ shares.
//
// # Budget
//
// The count of runs is reported with what one-at-a-time testing with the
// same confirmation would cost: a gap session plus every candidate alone
// for Confirm blocks, (n + 1) · Confirm · 2 runs.
//
// # Safety
//
// Every flip goes through tune's journal (tune.Host.Apply): the old value
// is journaled before each write. Bisect refuses to start while the journal
// holds unreverted changes, reverts everything when it ends — on success,
// failure and Ctrl-C — and then checks every knob against the value it
// read before it started. After kill -9, 'perflab tune revert' (or the next
// bisect, which refuses and says so) restores from the journal.
package bisect

import (
	"context"
	"errors"
	"fmt"
	"github.com/perflab/perflab/internal/effect"
	"math"
	"slices"
	"strings"

	"github.com/perflab/perflab/internal/audit"
	"github.com/perflab/perflab/internal/bench"
	"github.com/perflab/perflab/internal/clierr"
	"github.com/perflab/perflab/internal/knowledge"
	"github.com/perflab/perflab/internal/run"
	"github.com/perflab/perflab/internal/stats"
	"github.com/perflab/perflab/internal/tune"
)

// MeasureFunc runs an interleaved session; bench.Interleave in production.
type MeasureFunc func(ctx context.Context, items []bench.Item, io bench.InterleaveOptions, opt bench.Options) ([]*run.Run, *bench.Interleaved, error)

// Options configures a bisection.
type Options struct {
	Host       tune.Host
	Items      []bench.Item // what is measured (one probe, usually)
	Bench      bench.Options
	Metric     string // the metric with the gap; "" picks the one "all" moves most
	Candidates []Candidate
	Untestable []Untestable
	Blocks     int     // screening blocks per session (default 2)
	Confirm    int     // apply/revert cycles in the confirmation (default 3)
	Margin     float64 // minimum effect is stats.MinEffect × Margin (default 0.02)
	// GoodValue is the metric's median on the good host, when a stored
	// run gives it (0: unknown): the share no tested setting explains is
	// then reported.
	GoodValue float64
	Measure   MeasureFunc
	Seed      uint64
	Log       func(format string, args ...any)
}

// Effect is a measured ratio state/bad with its interval.
type Effect struct {
	Ratio   float64        `json:"ratio"`
	Lo      float64        `json:"lo"`
	Hi      float64        `json:"hi"`
	Verdict effect.Verdict `json:"verdict,omitempty"`
}

// Step is one node of the search tree.
type Step struct {
	Knobs    []string `json:"knobs"`
	Effect   *Effect  `json:"effect,omitempty"` // nil when inferred
	Outcome  string   `json:"outcome"`          // improves, nothing, cleared (inferred), found, joint
	Why      string   `json:"why,omitempty"`
	Runs     int      `json:"runs"`
	Children []int    `json:"children,omitempty"` // indices into Result.Steps
}

// CauseResult is one candidate's outcome (causes[] in the JSON).
type CauseResult struct {
	Knob      string  `json:"knob"`
	Good      string  `json:"good"`
	Bad       string  `json:"bad"`
	Confirmed bool    `json:"confirmed"`
	Share     float64 `json:"share"`
	ShareLo   float64 `json:"share_lo"`
	ShareHi   float64 `json:"share_hi"`
	// Joint lists the other knobs of a cause found only together.
	Joint []string `json:"joint,omitempty"`
	// Blocks improved out of Confirm, for found causes.
	Improved int    `json:"improved_blocks,omitempty"`
	Blocks   int    `json:"blocks,omitempty"`
	Outcome  string `json:"outcome"` // confirmed, not confirmed, cleared
}

// Result is a bisection's outcome.
type Result struct {
	Probe      string        `json:"probe"`
	Metric     string        `json:"metric"`
	Unit       string        `json:"unit"`
	Better     run.Better    `json:"better"`
	All        *Effect       `json:"all,omitempty"` // every candidate flipped vs bad
	Steps      []Step        `json:"steps"`
	Causes     []CauseResult `json:"causes"`
	Untestable []Untestable  `json:"untestable"`
	// Interaction is 1 − the sum of the confirmed causes' shares: what
	// they do together beyond their separate effects.
	Interaction *float64 `json:"interaction,omitempty"`
	// Unexplained is the share of the good host's gap that flipping every
	// candidate does not recover (needs GoodValue).
	Unexplained *float64 `json:"unexplained,omitempty"`
	Runs        int      `json:"runs"`
	NaiveRuns   int      `json:"naive_runs"`
	Restored    bool     `json:"restored"`
	Notes       []string `json:"notes,omitempty"`
}

// ErrJournalActive is returned when tune's journal holds changes that a
// bisection's revert would undo.
var ErrJournalActive = errors.New("tune's journal holds changes that are not reverted")

type bisector struct {
	opt      Options
	res      *Result
	runs     int
	pooledSS float64 // Σ squared deviations of the paired log-ratios of every earlier session
	pooledDF int     // their degrees of freedom
	applied  map[string]bool
	metric   string
	seed     uint64
}

// Run bisects. The host ends as it started: everything is reverted when
// Run returns, and Result.Restored says whether every knob reads its
// original value again.
func Run(ctx context.Context, opt Options) (*Result, error) {
	if opt.Blocks <= 0 {
		opt.Blocks = 2
	}
	if opt.Confirm <= 0 {
		opt.Confirm = 3
	}
	if opt.Margin <= 0 {
		opt.Margin = 0.02
	}
	if opt.Measure == nil {
		opt.Measure = bench.Interleave
	}
	if opt.Log == nil {
		opt.Log = func(string, ...any) {}
	}
	if len(opt.Items) == 0 {
		return nil, clierr.Usagef("name a probe or suite, e.g. 'perflab bisect --good good.json memory.pagefault'", "nothing to measure")
	}
	res := &Result{Probe: opt.Items[0].Probe.Name(), Untestable: opt.Untestable}
	n := len(opt.Candidates)
	res.NaiveRuns = (n + 1) * opt.Confirm * 2
	if n == 0 {
		res.Notes = append(res.Notes, "no setting perflab can flip differs between the good host and this one")
		return res, nil
	}
	if j, err := opt.Host.Status(); err != nil {
		return nil, err
	} else if j != nil && active(j) {
		return nil, clierr.Runtimef("run 'perflab tune revert' first (it restores what the journal holds), then bisect again", "%v: bisect reverts everything it flips and would undo them", ErrJournalActive)
	}
	before, err := readAll(opt.Host, opt.Candidates)
	if err != nil {
		return nil, err
	}
	b := &bisector{opt: opt, res: res, applied: map[string]bool{}, metric: opt.Metric, seed: opt.Seed}
	defer func() {
		res.Restored = b.restore(before)
	}()
	err = b.search(ctx)
	res.Runs = b.runs
	return res, err
}

func active(j *tune.Journal) bool {
	for _, e := range j.Entries {
		if e.State != tune.Reverted {
			return true
		}
	}
	return false
}

// readAll reads every candidate knob as it is now.
func readAll(h tune.Host, cands []Candidate) (map[string]string, error) {
	out := map[string]string{}
	for _, c := range cands {
		for _, ch := range c.Changes {
			v, err := tune.Read(h.FS, ch)
			if err != nil {
				return nil, clierr.Runtimef("bisect flips only knobs it can read and write", "reading %s: %v", ch.Target, err)
			}
			out[ch.Target] = v
		}
	}
	return out, nil
}

// restore reverts the journal and checks every knob against its value
// before the bisection.
func (b *bisector) restore(before map[string]string) bool {
	if _, err := b.opt.Host.Revert(tune.RevertOptions{Discard: true}); err != nil {
		b.res.Notes = append(b.res.Notes, "revert: "+err.Error())
		return false
	}
	ok := true
	for _, c := range b.opt.Candidates {
		for _, ch := range c.Changes {
			v, err := tune.Read(b.opt.Host.FS, ch)
			if err != nil || v != before[ch.Target] {
				ok = false
				b.res.Notes = append(b.res.Notes, fmt.Sprintf("%s reads %q after the bisection, %q before (%v)", ch.Target, v, before[ch.Target], err))
			}
		}
	}
	return ok
}

// state returns the bench state that flips exactly the given candidates.
func (b *bisector) state(name string, set []Candidate) bench.State {
	return bench.State{Name: name, Apply: func(ctx context.Context) error {
		if _, err := b.opt.Host.Revert(tune.RevertOptions{Discard: true}); err != nil {
			return fmt.Errorf("reverting before %s: %w", name, err)
		}
		if len(set) == 0 {
			return nil
		}
		var plan tune.Plan
		plan.Workload = "bisect"
		for _, c := range set {
			for _, ch := range c.Changes {
				plan.Items = append(plan.Items, tune.Item{Rule: "BISECT", Title: c.Name, Change: ch})
			}
		}
		if _, err := b.opt.Host.Apply(ctx, plan, tune.ApplyOptions{Source: "bisect " + name}); err != nil {
			return fmt.Errorf("applying %s: %w", name, err)
		}
		return nil
	}}
}

// session measures bad and the given states for blocks blocks and returns
// the runs.
func (b *bisector) session(ctx context.Context, blocks int, states ...bench.State) ([]*run.Run, error) {
	b.seed++
	all := append([]bench.State{b.state("bad", nil)}, states...)
	opt := b.opt.Bench
	opt.Label = ""
	runs, _, err := b.opt.Measure(ctx, b.opt.Items, bench.InterleaveOptions{States: all, Blocks: blocks, MinBlocks: blocks, Seed: b.seed}, opt)
	b.runs += len(runs)
	return runs, err
}

// medians returns state → block → median of the metric.
func (b *bisector) medians(runs []*run.Run) map[string]map[int]float64 {
	out := map[string]map[int]float64{}
	for _, r := range runs {
		if !r.Complete || r.Probe != b.res.Probe {
			continue
		}
		v := r.Values(b.metric)
		if len(v) == 0 {
			continue
		}
		if out[r.State] == nil {
			out[r.State] = map[int]float64{}
		}
		out[r.State][r.Block] = stats.Median(v)
	}
	return out
}

// logRatios pairs a state's blocks with bad's: ln(state/bad) per block.
func logRatios(m map[string]map[int]float64, state string) []float64 {
	var out []float64
	var blocks []int
	for blk := range m[state] {
		blocks = append(blocks, blk)
	}
	slices.Sort(blocks)
	for _, blk := range blocks {
		s, bad := m[state][blk], m["bad"][blk]
		if s > 0 && bad > 0 {
			out = append(out, math.Log(s/bad))
		}
	}
	return out
}

// effect turns a session's paired log-ratios into an effect, with the
// variance pooled over every session so far (this one included), and
// decides it by the one rule (package effect).
func (b *bisector) effect(ds []float64) *Effect {
	if len(ds) == 0 {
		return nil
	}
	eff := effect.PairedLogs(ds, b.pooledSS, b.pooledDF, b.res.Better, effect.Options{Margin: b.opt.Margin})
	b.pooledSS += stats.SumSq(ds)
	b.pooledDF += len(ds) - 1
	e := &Effect{Ratio: eff.Ratio, Lo: math.NaN(), Hi: math.NaN(), Verdict: eff.Verdict()}
	if eff.HasInterval() {
		e.Lo, e.Hi = eff.Lo, eff.Hi
	}
	return e
}

// improves: the one rule calls the effect better (its interval lies
// beyond the minimum effect in the metric's good direction).
func (b *bisector) improves(e *Effect) bool {
	return e != nil && e.Verdict == effect.Better
}

// covers: e and other cannot be told apart — their intervals overlap (or
// e's holds other's ratio when other has none). Two measurements of one
// effect are both noisy; demanding that one interval hold the other's
// point rejects a true cover about half the time at the interval's edge.
func covers(e, other *Effect) bool {
	if e == nil || other == nil || math.IsNaN(e.Lo) {
		return false
	}
	if math.IsNaN(other.Lo) {
		return e.Lo <= other.Ratio && other.Ratio <= e.Hi
	}
	return e.Lo <= other.Hi && other.Lo <= e.Hi
}

// test measures one group against bad.
func (b *bisector) test(ctx context.Context, set []Candidate) (*Effect, int, error) {
	before := b.runs
	runs, err := b.session(ctx, b.opt.Blocks, b.state("test", set))
	if err != nil {
		return nil, b.runs - before, err
	}
	return b.effect(logRatios(b.medians(runs), "test")), b.runs - before, nil
}

func names(set []Candidate) []string {
	out := make([]string, len(set))
	for i, c := range set {
		out[i] = c.Name
	}
	return out
}

func (b *bisector) addStep(s Step) int {
	b.res.Steps = append(b.res.Steps, s)
	return len(b.res.Steps) - 1
}

func (b *bisector) search(ctx context.Context) error {
	cands := b.ordered()
	// 1. all.
	before := b.runs
	// Three blocks at least: the first interval has no pooled variance to
	// lean on (two blocks give one degree of freedom, t = 12.7).
	runs, err := b.session(ctx, max(b.opt.Blocks, 3), b.state("test", cands))
	if err != nil {
		return err
	}
	if err := b.pickMetric(runs); err != nil {
		return err
	}
	all := b.effect(logRatios(b.medians(runs), "test"))
	b.res.All = all
	root := b.addStep(Step{Knobs: names(cands), Effect: all, Runs: b.runs - before})
	if !b.improves(all) {
		b.res.Steps[root].Outcome = "nothing"
		b.res.Steps[root].Why = "flipping every candidate to the good host's value does not improve " + b.metric
		for _, c := range cands {
			b.res.Causes = append(b.res.Causes, CauseResult{Knob: c.Name, Good: c.Good, Bad: c.Bad, Outcome: "cleared", Share: math.NaN(), ShareLo: math.NaN(), ShareHi: math.NaN()})
		}
		return nil
	}
	b.res.Steps[root].Outcome = "improves"
	found, err := b.split(ctx, cands, all, root)
	if err != nil {
		return err
	}
	return b.confirm(ctx, cands, found)
}

// ordered sorts candidates by plausibility for the measured probe: the
// knowledge base's weight when its areas cover the probe, first.
func (b *bisector) ordered() []Candidate {
	cands := slices.Clone(b.opt.Candidates)
	areas := knowledge.AreasOf(b.res.Probe, b.opt.Metric, "")
	score := func(c Candidate) int {
		e := knowledge.Lookup(c.Path)
		if e == nil {
			return 0
		}
		if knowledge.Affects(e.Areas, areas) {
			return 10 + e.Weight
		}
		return e.Weight
	}
	slices.SortStableFunc(cands, func(x, y Candidate) int { return score(y) - score(x) })
	return cands
}

// pickMetric chooses the metric: the one asked for, else the one whose
// all/bad ratio moves most.
func (b *bisector) pickMetric(runs []*run.Run) error {
	var metrics []run.Metric
	for _, r := range runs {
		if r.Probe == b.res.Probe && len(r.Metrics) > 0 {
			metrics = r.Metrics
			break
		}
	}
	if len(metrics) == 0 {
		return clierr.Runtimef("", "the %s runs measured nothing", b.res.Probe)
	}
	if b.metric != "" {
		for _, m := range metrics {
			if m.Name == b.metric {
				b.res.Metric, b.res.Unit, b.res.Better = m.Name, m.Unit, m.Better
				return nil
			}
		}
		var ns []string
		for _, m := range metrics {
			ns = append(ns, m.Name)
		}
		return clierr.Usagef("pick one of: "+strings.Join(ns, ", "), "%s measures no metric %q", b.res.Probe, b.metric)
	}
	best, bestMove := metrics[0], -1.0
	for _, m := range metrics {
		b.metric = m.Name
		ds := logRatios(b.medians(runs), "test")
		if len(ds) == 0 {
			continue
		}
		if mv := math.Abs(stats.Mean(ds)); mv > bestMove {
			best, bestMove = m, mv
		}
	}
	b.metric = best.Name
	b.res.Metric, b.res.Unit, b.res.Better = best.Name, best.Unit, best.Better
	return nil
}

// split narrows S (whose effect is eff) to the candidates that recover it.
func (b *bisector) split(ctx context.Context, set []Candidate, eff *Effect, node int) ([][]Candidate, error) {
	if len(set) == 1 {
		b.res.Steps[node].Outcome = "found"
		return [][]Candidate{set}, nil
	}
	h := (len(set) + 1) / 2
	a, c := set[:h], set[h:]
	effA, ra, err := b.test(ctx, a)
	if err != nil {
		return nil, err
	}
	na := b.addStep(Step{Knobs: names(a), Effect: effA, Runs: ra})
	b.res.Steps[node].Children = append(b.res.Steps[node].Children, na)
	switch {
	case b.improves(effA) && covers(effA, eff):
		b.res.Steps[na].Outcome = "improves"
		nc := b.addStep(Step{Knobs: names(c), Outcome: "cleared", Why: "the other half recovers the whole effect"})
		b.res.Steps[node].Children = append(b.res.Steps[node].Children, nc)
		return b.split(ctx, a, effA, na)
	}
	effC, rc, err := b.test(ctx, c)
	if err != nil {
		return nil, err
	}
	nc := b.addStep(Step{Knobs: names(c), Effect: effC, Runs: rc})
	b.res.Steps[node].Children = append(b.res.Steps[node].Children, nc)
	var found [][]Candidate
	impA, impC := b.improves(effA), b.improves(effC)
	switch {
	case !impA && !impC:
		b.res.Steps[na].Outcome, b.res.Steps[nc].Outcome = "nothing", "nothing"
		b.res.Steps[node].Outcome = "joint"
		b.res.Steps[node].Why = "neither half alone improves; together they do: an interaction"
		joint, err := b.minimize(ctx, set, eff, node)
		if err != nil {
			return nil, err
		}
		return [][]Candidate{joint}, nil
	case impC && covers(effC, eff) && !impA:
		b.res.Steps[na].Outcome = "nothing"
		b.res.Steps[nc].Outcome = "improves"
		return b.split(ctx, c, effC, nc)
	}
	for _, half := range []struct {
		set  []Candidate
		eff  *Effect
		node int
		imp  bool
	}{{a, effA, na, impA}, {c, effC, nc, impC}} {
		if !half.imp {
			b.res.Steps[half.node].Outcome = "nothing"
			continue
		}
		b.res.Steps[half.node].Outcome = "improves"
		f, err := b.split(ctx, half.set, half.eff, half.node)
		if err != nil {
			return nil, err
		}
		found = append(found, f...)
	}
	return found, nil
}

// minimize narrows a joint cause: a candidate whose removal still covers
// the group's effect takes no part in the interaction (delta debugging's
// complement test), least plausible first.
func (b *bisector) minimize(ctx context.Context, set []Candidate, eff *Effect, node int) ([]Candidate, error) {
	set = slices.Clone(set)
	for i := len(set) - 1; i >= 0 && len(set) > 1; i-- {
		rest := slices.Delete(slices.Clone(set), i, i+1)
		e, runs, err := b.test(ctx, rest)
		if err != nil {
			return nil, err
		}
		n := b.addStep(Step{Knobs: names(rest), Effect: e, Runs: runs})
		b.res.Steps[node].Children = append(b.res.Steps[node].Children, n)
		if b.improves(e) && covers(e, eff) {
			b.res.Steps[n].Outcome = "improves"
			b.res.Steps[n].Why = "without " + set[i].Name + " the group still recovers the effect: it is cleared"
			set = rest
			continue
		}
		b.res.Steps[n].Outcome = "nothing"
		b.res.Steps[n].Why = set[i].Name + " is part of the interaction"
	}
	return set, nil
}

// confirm measures bad, all and every found cause Confirm times and fills
// Causes with confirmation and shares.
func (b *bisector) confirm(ctx context.Context, cands []Candidate, found [][]Candidate) error {
	states := []bench.State{b.state("all", cands)}
	for i, g := range found {
		states = append(states, b.state(fmt.Sprintf("cause%d", i+1), g))
	}
	runs, err := b.session(ctx, b.opt.Confirm, states...)
	if err != nil {
		return err
	}
	m := b.medians(runs)
	allD := logRatios(m, "all")
	foundKnob := map[string]int{}
	var sum float64
	nConfirmed := 0
	for i, g := range found {
		name := fmt.Sprintf("cause%d", i+1)
		ds := logRatios(m, name)
		improved := 0
		for _, d := range ds {
			if effect.Toward(math.Exp(d), b.res.Better) > 0 {
				improved++
			}
		}
		eff := b.effect(ds)
		confirmed := improved == len(ds) && len(ds) == b.opt.Confirm && b.improves(eff)
		share, lo, hi := shares(ds, allD)
		for _, c := range g {
			foundKnob[c.Name] = len(b.res.Causes)
			cr := CauseResult{Knob: c.Name, Good: c.Good, Bad: c.Bad, Confirmed: confirmed, Share: share, ShareLo: lo, ShareHi: hi,
				Improved: improved, Blocks: len(ds), Outcome: "confirmed"}
			if !confirmed {
				cr.Outcome = "not confirmed"
			}
			if len(g) > 1 {
				cr.Joint = slices.DeleteFunc(names(g), func(n string) bool { return n == c.Name })
			}
			b.res.Causes = append(b.res.Causes, cr)
		}
		if confirmed {
			sum += share
			nConfirmed++
		}
	}
	for _, c := range cands {
		if _, ok := foundKnob[c.Name]; !ok {
			b.res.Causes = append(b.res.Causes, CauseResult{Knob: c.Name, Good: c.Good, Bad: c.Bad, Outcome: "cleared", Share: 0, ShareLo: math.NaN(), ShareHi: math.NaN()})
		}
	}
	if nConfirmed > 0 && !math.IsNaN(sum) {
		inter := 1 - sum
		b.res.Interaction = &inter
	}
	if b.opt.GoodValue > 0 && len(allD) > 0 {
		badMed := stats.Median(valuesOf(m["bad"]))
		if gap := math.Log(b.opt.GoodValue / badMed); gap != 0 {
			u := 1 - stats.Mean(allD)/gap
			b.res.Unexplained = &u
		}
	}
	return nil
}

// shares: per block ln(cause/bad)/ln(all/bad), mean and t interval.
func shares(part, whole []float64) (float64, float64, float64) {
	return stats.RatioMeanCI(part, whole, stats.DefaultConfidence)
}

func valuesOf(m map[int]float64) []float64 {
	var out []float64
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

// plan is exported for --dry-run: the candidates in search order and the
// worst-case and expected run counts.
type Plan struct {
	Order        []Candidate  `json:"order"`
	Untestable   []Untestable `json:"untestable"`
	OneCauseRuns int          `json:"one_cause_runs"` // all + a path down the split tree + confirmation
	NaiveRuns    int          `json:"naive_runs"`
}

// DryRun returns the plan without measuring.
func DryRun(opt Options) Plan {
	if opt.Blocks <= 0 {
		opt.Blocks = 2
	}
	if opt.Confirm <= 0 {
		opt.Confirm = 3
	}
	b := &bisector{opt: opt, res: &Result{Probe: probeName(opt)}}
	n := len(opt.Candidates)
	depth := 0
	for k := n; k > 1; k = (k + 1) / 2 {
		depth++
	}
	return Plan{Order: b.ordered(), Untestable: opt.Untestable,
		OneCauseRuns: 2*max(opt.Blocks, 2) + depth*2*opt.Blocks + 3*opt.Confirm,
		NaiveRuns:    (n + 1) * opt.Confirm * 2}
}

func probeName(opt Options) string {
	if len(opt.Items) == 0 {
		return ""
	}
	return opt.Items[0].Probe.Name()
}

// Changes lists every knob a candidate writes, for display.
func (c Candidate) Knobs() []audit.Change { return c.Changes }
