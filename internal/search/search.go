package search

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	mstats "github.com/aclements/go-moremath/stats"
	"github.com/perflab/perflab/internal/clierr"
	"github.com/perflab/perflab/internal/effect"
	"github.com/perflab/perflab/internal/run"
	"github.com/perflab/perflab/internal/stats"
)

// Config is a configuration as the knobs it changes from the baseline:
// knob name → value. The empty Config is the baseline.
type Config map[string]string

// with returns c with knob set to v (a copy).
func (c Config) with(knob, v string) Config {
	out := maps.Clone(c)
	if out == nil {
		out = Config{}
	}
	out[knob] = v
	return out
}

// without returns c without knob (a copy).
func (c Config) without(knob string) Config {
	out := maps.Clone(c)
	delete(out, knob)
	return out
}

// Names lists the knobs c changes, sorted.
func (c Config) Names() []string { return slices.Sorted(maps.Keys(c)) }

// Session is one interleaved session's outcome: Medians[s][b] holds, for
// state s (in the order asked) and block b, each metric's run median.
type Session struct {
	Metrics []run.Metric
	Medians [][]map[string]float64
	Runs    int
	Blocks  int
	Elapsed time.Duration
}

// Measurer measures configurations in interleaved blocks: every block puts
// the target once into each configuration, in a random order, through
// tune's journal, and measures the probe there. Host (bench.Interleave and
// tune.Host) on a real target; Sim in tests.
type Measurer interface {
	Measure(ctx context.Context, states []Config, blocks int) (*Session, error)
}

// Options configures a search.
type Options struct {
	Probe     string
	Knobs     []Knob
	Baseline  map[string]string // each knob's value before the search, as tune reads it
	Objective Objective
	Measurer  Measurer
	// Blocks per screening step (default 4), Confirm blocks of the final
	// confirmation (default 6).
	Blocks, Confirm int
	// MaxBlocks bounds a screening step extended because a value looked
	// like a gain its interval could not yet show (default 3·Blocks;
	// Blocks: never extend).
	MaxBlocks int
	// MinGain is the smallest relative effect the search acts on: a
	// value is kept only when its whole interval lies beyond it (default
	// 0.02, ±2%).
	MinGain float64
	// Budget bounds the time spent measuring (0: one pass over the space,
	// whatever it takes). Screening stops early enough to leave the
	// shrink and the confirmation their share.
	Budget time.Duration
	// Excluded lists knobs left out of the space and why (reported).
	Excluded []string
	Log      func(format string, args ...any)
}

// Effect is a measured ratio (configuration / reference) of the objective
// metric with its 95% interval, and how the search reads it.
type Effect struct {
	Ratio  float64 `json:"ratio"`
	Lo     float64 `json:"lo"`
	Hi     float64 `json:"hi"`
	Blocks int     `json:"blocks"`
	// Verdict: "better", "worse" (beyond the margin, in the objective's
	// direction) or "unclear".
	Verdict string `json:"verdict"`
}

// Tried is one value measured in a screening step.
type Tried struct {
	Value  string `json:"value"`
	Effect Effect `json:"effect"`
	// Constraint names a bound the value broke in one of its blocks.
	Constraint string `json:"constraint,omitempty"`
}

// Step is one screening step: a knob's values against the current
// configuration.
type Step struct {
	Knob    string  `json:"knob"`
	From    string  `json:"from"`           // the baseline value
	Tried   []Tried `json:"tried"`          // every value measured
	Kept    string  `json:"kept,omitempty"` // the value kept, "" when none
	Against Config  `json:"against"`        // the current configuration it was measured against
	Pass    int     `json:"pass"`           // 1, 2 for a retry against a changed configuration, 3 for a group tried together
	Runs    int     `json:"runs"`
	// Members are the knobs of a group step (Knob.Group), tried together:
	// Knob is then "a + b" and each value "a=v, b=w".
	Members []string `json:"members,omitempty"`
}

// ShrinkStep is one knob taken out of the winner and measured.
type ShrinkStep struct {
	Knob    string `json:"knob"`
	Value   string `json:"value"`
	Without Effect `json:"without"` // winner without the knob / winner
	Dropped bool   `json:"dropped"`
	Why     string `json:"why"`
}

// Setting is one knob of the confirmed winner.
type Setting struct {
	Knob  string `json:"knob"`
	Value string `json:"value"`
	From  string `json:"from"`
	// Alone is the knob by itself against the baseline in the
	// confirmation blocks; Share its part of the winner's gain
	// (ln(alone/base) / ln(winner/base) per block, t interval).
	Alone   *Effect `json:"alone,omitempty"`
	Share   float64 `json:"share"`
	ShareLo float64 `json:"share_lo"`
	ShareHi float64 `json:"share_hi"`
}

// Rejected is a knob the search tried and did not keep, with its best
// measured value's effect; Harmful when some value made the objective
// measurably worse.
type Rejected struct {
	Knob    string  `json:"knob"`
	Value   string  `json:"value"`
	Effect  Effect  `json:"effect"`
	Harmful bool    `json:"harmful"`
	Worst   *Tried  `json:"worst,omitempty"`
	Why     string  `json:"why"`
	Dropped *Effect `json:"dropped,omitempty"` // kept, then dropped by the shrink
}

// Result is a search's outcome.
type Result struct {
	Probe     string     `json:"probe"`
	Metric    string     `json:"metric"`
	Unit      string     `json:"unit"`
	Better    run.Better `json:"better"`
	Objective string     `json:"objective"`
	MinGain   float64    `json:"min_gain"`
	Knobs     []Knob     `json:"knobs"`
	Excluded  []string   `json:"excluded,omitempty"`

	Steps  []Step       `json:"steps"`
	Shrink []ShrinkStep `json:"shrink,omitempty"`
	// Gain is the winner against the untouched baseline on fresh
	// confirmation blocks; Confirmed when it clears the margin and every
	// constraint holds in every confirmation block.
	Gain      *Effect    `json:"gain,omitempty"`
	Confirmed bool       `json:"confirmed"`
	Winner    []Setting  `json:"winner"`
	Rejected  []Rejected `json:"rejected"`
	// Constraints as measured on the winner in the confirmation blocks:
	// the worst block's value for each.
	Constraints []ConstraintCheck `json:"constraints,omitempty"`
	Untried     []string          `json:"untried,omitempty"` // knobs the budget left out
	Conclusion  string            `json:"conclusion"`

	Runs          int      `json:"runs"`
	Blocks        int      `json:"blocks"`
	ConfirmBlocks int      `json:"confirm_blocks"`
	Seconds       float64  `json:"seconds"`        // measuring time spent
	BudgetSeconds float64  `json:"budget_seconds"` // 0: none
	Applied       bool     `json:"applied"`        // the winner was left on the host (--apply)
	Restored      bool     `json:"restored"`       // every knob reads its value from before the search
	Notes         []string `json:"notes,omitempty"`
}

// ConstraintCheck is one bound as the winner met it in the confirmation.
type ConstraintCheck struct {
	Constraint string  `json:"constraint"`
	Worst      float64 `json:"worst"` // the winner's worst block
	Baseline   float64 `json:"baseline"`
	Held       bool    `json:"held"`
}

type searcher struct {
	opt     Options
	res     *Result
	knobs   map[string]Knob
	elapsed time.Duration
	perRun  time.Duration
	// gains of the kept knobs at screening (log ratio), for the shrink order.
	gain map[string]float64
}

// Run searches. It is pure over the Measurer: every configuration change
// and measurement goes through it.
func Run(ctx context.Context, opt Options) (*Result, error) {
	if opt.Blocks <= 0 {
		opt.Blocks = 4
	}
	if opt.Confirm <= 0 {
		opt.Confirm = 6
	}
	if opt.MaxBlocks <= 0 {
		opt.MaxBlocks = 3 * opt.Blocks
	}
	if opt.MinGain <= 0 {
		opt.MinGain = 0.02
	}
	if opt.Log == nil {
		opt.Log = func(string, ...any) {}
	}
	if opt.Measurer == nil {
		return nil, errors.New("search: no measurer")
	}
	res := &Result{Probe: opt.Probe, MinGain: opt.MinGain, Knobs: opt.Knobs, Excluded: opt.Excluded, BudgetSeconds: opt.Budget.Seconds(), Steps: []Step{}, Winner: []Setting{}, Rejected: []Rejected{}}
	s := &searcher{opt: opt, res: res, knobs: map[string]Knob{}, gain: map[string]float64{}}
	for _, k := range opt.Knobs {
		s.knobs[k.Name] = k
	}
	err := s.run(ctx)
	res.Seconds = s.elapsed.Seconds()
	if err == nil {
		res.Conclusion = s.conclusion()
	}
	return res, err
}

func (s *searcher) run(ctx context.Context) error {
	if len(s.opt.Knobs) == 0 {
		s.res.Notes = append(s.res.Notes, "no knob to search: the space is empty on this target")
		return nil
	}
	cur, err := s.screen(ctx)
	if err != nil {
		return err
	}
	s.rejected(cur)
	if len(cur) == 0 {
		return nil
	}
	if cur, err = s.shrink(ctx, cur); err != nil {
		return err
	}
	return s.confirm(ctx, cur)
}

// measure runs one session and keeps the budget's accounts.
func (s *searcher) measure(ctx context.Context, states []Config, blocks int) (*Session, error) {
	ss, err := s.opt.Measurer.Measure(ctx, states, blocks)
	if ss != nil {
		s.res.Runs += ss.Runs
		s.res.Blocks += ss.Blocks
		s.elapsed += ss.Elapsed
		if s.res.Runs > 0 {
			s.perRun = s.elapsed / time.Duration(s.res.Runs)
		}
	}
	if err != nil {
		return ss, err
	}
	if s.res.Metric == "" {
		if err := s.pickMetric(ss.Metrics); err != nil {
			return ss, err
		}
	}
	return ss, nil
}

// pickMetric fixes the objective's metric and direction from the first
// session's metrics, and checks the constraints name metrics the probe has.
func (s *searcher) pickMetric(ms []run.Metric) error {
	if len(ms) == 0 {
		return clierr.Runtimef("", "the %s runs measured nothing", s.opt.Probe)
	}
	find := func(name string) (run.Metric, bool) {
		for _, m := range ms {
			if m.Name == name {
				return m, true
			}
		}
		return run.Metric{}, false
	}
	var names []string
	for _, m := range ms {
		names = append(names, m.Name)
	}
	o := s.opt.Objective
	m := ms[0]
	if o.Metric != "" {
		var ok bool
		if m, ok = find(o.Metric); !ok {
			return clierr.Usagef("pick one of: "+strings.Join(names, ", "), "%s measures no metric %q", s.opt.Probe, o.Metric)
		}
	}
	for _, c := range o.Constraints {
		if _, ok := find(c.Metric); !ok {
			return clierr.Usagef("constrain one of: "+strings.Join(names, ", "), "%s measures no metric %q", s.opt.Probe, c.Metric)
		}
	}
	o.Metric = m.Name
	if o.Better == "" {
		o.Better = m.Better
	}
	s.opt.Objective = o
	s.res.Metric, s.res.Unit, s.res.Better = m.Name, m.Unit, o.Better
	s.res.Objective = o.String()
	return nil
}

// logRatios pairs state i's blocks with state ref's: ln(state/ref) of the
// objective metric per block where both measured it.
func (s *searcher) logRatios(ss *Session, ref, i int) []float64 {
	var out []float64
	for b := range min(len(ss.Medians[ref]), len(ss.Medians[i])) {
		r, x := ss.Medians[ref][b][s.res.Metric], ss.Medians[i][b][s.res.Metric]
		if r > 0 && x > 0 {
			out = append(out, math.Log(x/r))
		}
	}
	return out
}

// broken names the first constraint state i breaks in any block ("" when
// all hold).
func (s *searcher) broken(ss *Session, i int) string {
	for _, c := range s.opt.Objective.Constraints {
		for _, blk := range ss.Medians[i] {
			if v, ok := blk[c.Metric]; ok && !c.Holds(v) {
				return c.String()
			}
		}
	}
	return ""
}

// stepEffect turns a screening or shrink step's paired log-ratios into an
// effect: a paired t interval on the step's own blocks, at confidence conf
// (Bonferroni over the values of a step). The variance is the step's own:
// pooling it over steps, as bisect does, assumes every configuration is as
// noisy as every other, and on a loaded host a configuration with 4 KiB
// socket buffers varies several times more from run to run than one with
// large buffers — one noisy step then blinds every later one.
func (s *searcher) stepEffect(ds []float64, conf float64) Effect {
	e := Effect{Ratio: math.NaN(), Lo: math.NaN(), Hi: math.NaN(), Blocks: len(ds), Verdict: "unclear"}
	if len(ds) == 0 {
		return e
	}
	m := stats.Mean(ds)
	e.Ratio = math.Exp(m)
	df := len(ds) - 1
	if df <= 0 {
		return e
	}
	var ss float64
	for _, d := range ds {
		ss += (d - m) * (d - m)
	}
	se := math.Sqrt(ss/float64(df)) / math.Sqrt(float64(len(ds)))
	half := stats.TQuantile((1+conf)/2, float64(df)) * se
	e.Lo, e.Hi = math.Exp(m-half), math.Exp(m+half)
	p := 1.0
	if se > 0 {
		p = math.Min(1, 2*(1-mstats.TDist{V: float64(df)}.CDF(math.Abs(m)/se)))
	} else if m != 0 {
		p = 0
	}
	e.Verdict = judge(e, p, df, s.res.Better, s.opt.MinGain, 1-conf)
	return e
}

// pairedEffect is a comparison on its own blocks (the confirmation): a
// paired t interval with their degrees of freedom only.
func (s *searcher) pairedEffect(ss *Session, ref, i int) Effect {
	var a, b []float64
	for blk := range min(len(ss.Medians[ref]), len(ss.Medians[i])) {
		a = append(a, ss.Medians[ref][blk][s.res.Metric])
		b = append(b, ss.Medians[i][blk][s.res.Metric])
	}
	ef := effect.Paired(a, b, s.res.Better, effect.Options{Margin: s.opt.MinGain / stats.MinEffect})
	e := Effect{Ratio: ef.Ratio, Lo: ef.Lo, Hi: ef.Hi, Blocks: ef.Ka, Verdict: "unclear"}
	switch ef.Verdict() {
	case effect.Better:
		e.Verdict = "better"
	case effect.Worse:
		e.Verdict = "worse"
	}
	return e
}

// judge is the search's one reading of an interval, through the one
// verdict rule (internal/effect): "better" when the change is significant
// at alpha and its whole interval lies beyond ±minGain in the objective's
// direction, "worse" the other way, else "unclear". The margin is given
// as effect's equivalence margin, whose MinEffect share is the smallest
// change called.
func judge(e Effect, p float64, df int, better run.Better, minGain, alpha float64) string {
	nan := math.NaN()
	ef := effect.Effect{Better: better, Level: effect.LevelRuns, Source: stats.DriftBlocks, Ka: e.Blocks, Kb: e.Blocks, DF: df,
		Ratio: e.Ratio, Lo: e.Lo, Hi: e.Hi, Diff: nan, DiffLo: nan, DiffHi: nan, EqLo: nan, EqHi: nan, MinP: nan, DriftPct: nan,
		P: p, Alpha: alpha, Margin: minGain / stats.MinEffect}
	switch ef.Verdict() {
	case effect.Better:
		return "better"
	case effect.Worse:
		return "worse"
	}
	return "unclear"
}

// gainOf is the log-ratio in the objective's direction (positive = better).
func (s *searcher) gainOf(e Effect) float64 {
	g := math.Log(e.Ratio)
	if s.res.Better == run.Lower {
		g = -g
	}
	return g
}

// screen is greedy coordinate ascent: each knob's ladder values against
// the current configuration in one interleaved session; the best value
// whose interval clears the margin (and breaks no constraint) joins the
// current configuration. A second pass retries the knobs the first pass
// rejected against a configuration that changed after them (tcp_rmem may
// help only once tcp_wmem is raised); then it stops.
func (s *searcher) screen(ctx context.Context) (Config, error) {
	cur := Config{}
	todo := s.opt.Knobs
	for pass := 1; pass <= 2 && len(todo) > 0; pass++ {
		var retry []Knob
		for i, k := range todo {
			st, tried, err := s.step(ctx, k, cur, pass)
			if err != nil {
				return cur, err
			}
			if st == nil && tried {
				for _, rest := range todo[i:] {
					s.res.Untried = append(s.res.Untried, rest.Name)
				}
				s.res.Notes = append(s.res.Notes, fmt.Sprintf("the budget (%s) ended the screening (pass %d) before %d knob(s)", s.opt.Budget, pass, len(todo)-i))
				return cur, nil
			}
			if st == nil {
				continue
			}
			if st.Kept != "" {
				cur = cur.with(k.Name, st.Kept)
			} else {
				retry = append(retry, k)
			}
		}
		// Only knobs measured against a configuration that changed since.
		todo = retry[:0:0]
		for _, k := range retry {
			if last := s.lastStep(k.Name); last != nil && !maps.Equal(last.Against, cur) {
				todo = append(todo, k)
			}
		}
	}
	for _, g := range groups(s.opt.Knobs) {
		next, over, err := s.jointStep(ctx, g, cur)
		if err != nil {
			return cur, err
		}
		if over {
			s.res.Notes = append(s.res.Notes, fmt.Sprintf("the budget (%s) ended the screening before %s were tried together", s.opt.Budget, g[0].Group))
			break
		}
		cur = next
	}
	return cur, nil
}

func (s *searcher) lastStep(knob string) *Step {
	for i := len(s.res.Steps) - 1; i >= 0; i-- {
		if s.res.Steps[i].Knob == knob {
			return &s.res.Steps[i]
		}
	}
	return nil
}

// step measures one knob's values against cur. A nil step with over true
// means the budget ended the screening; nil with over false, that the
// knob has no value to try.
func (s *searcher) step(ctx context.Context, k Knob, cur Config, pass int) (*Step, bool, error) {
	var vals []string
	for _, v := range k.Ladder {
		if v != s.opt.Baseline[k.Name] {
			vals = append(vals, v)
		}
	}
	if len(vals) == 0 {
		return nil, false, nil
	}
	states := make([]Config, len(vals))
	for i, v := range vals {
		states[i] = cur.with(k.Name, v)
	}
	step := Step{Knob: k.Name, From: s.opt.Baseline[k.Name], Against: cur, Pass: pass}
	best, over, err := s.measureStep(ctx, &step, cur, states, vals)
	if best >= 0 {
		s.gain[k.Name] = s.gainOf(step.Tried[best].Effect)
	}
	return s.recordStep(step, over, err)
}

// measureStep measures cur against each candidate state (labelled for the
// report) in one interleaved session, extended while a value is
// promising, fills step.Tried and step.Kept, and returns the kept
// candidate's index (-1: none). over reports that the budget left no room
// for the step.
func (s *searcher) measureStep(ctx context.Context, step *Step, cur Config, cands []Config, labels []string) (best int, over bool, err error) {
	if s.overBudget(len(cands)+1, len(cur)+1) {
		return -1, true, nil
	}
	states := append([]Config{cur}, cands...)
	before := s.res.Runs
	defer func() { step.Runs = s.res.Runs - before }()
	ss, err := s.measure(ctx, states, s.opt.Blocks)
	if err != nil {
		return -1, false, err
	}
	best = s.judgeStep(step, ss, labels)
	// Extend the step while a value looks like a gain its interval cannot
	// show yet: a configuration with tiny buffers can vary ±50% from run
	// to run, and four blocks then leave a real ×2 "unclear". Only the
	// confirmation's fresh blocks decide what is kept, so looking again
	// here cannot make a false gain more likely to be reported.
	for best < 0 && s.promising(*step) && ss.Blocks+s.opt.Blocks <= s.opt.MaxBlocks && !s.overBudget(len(states), len(cur)+1) {
		more, err := s.measure(ctx, states, s.opt.Blocks)
		if err != nil {
			return -1, false, err
		}
		for i := range states {
			ss.Medians[i] = append(ss.Medians[i], more.Medians[i]...)
		}
		ss.Blocks += more.Blocks
		s.opt.Log("%s: %s; measuring %d more blocks", step.Knob, describeStep(*step), s.opt.Blocks)
		step.Tried = step.Tried[:0]
		best = s.judgeStep(step, ss, labels)
	}
	if best >= 0 {
		step.Kept = labels[best]
	}
	return best, false, nil
}

// recordStep appends a measured step to the result (nil, over when the
// budget ended the screening before it).
func (s *searcher) recordStep(step Step, over bool, err error) (*Step, bool, error) {
	if err != nil || over {
		return nil, over, err
	}
	s.res.Steps = append(s.res.Steps, step)
	s.opt.Log("%s: %s", step.Knob, describeStep(step))
	return &s.res.Steps[len(s.res.Steps)-1], false, nil
}

// groups are the space's knob groups (Knob.Group) with two or more
// members, in space order.
func groups(ks []Knob) [][]Knob {
	var order []string
	byGroup := map[string][]Knob{}
	for _, k := range ks {
		if k.Group == "" {
			continue
		}
		if _, ok := byGroup[k.Group]; !ok {
			order = append(order, k.Group)
		}
		byGroup[k.Group] = append(byGroup[k.Group], k)
	}
	var out [][]Knob
	for _, g := range order {
		if len(byGroup[g]) > 1 {
			out = append(out, byGroup[g])
		}
	}
	return out
}

// jointStep tries a group's members together against cur, their ladders
// zipped (the i-th value of each), when none of them joined cur alone:
// knobs that act together can each be harmful alone (a receive window of
// MiBs against a 4 KiB send buffer stalls on delayed ACKs) and a gain only
// together. On a keep every member joins cur.
func (s *searcher) jointStep(ctx context.Context, g []Knob, cur Config) (Config, bool, error) {
	n := len(g[0].Ladder)
	for _, k := range g {
		if _, in := cur[k.Name]; in {
			return cur, false, nil
		}
		n = min(n, len(k.Ladder))
	}
	var cands []Config
	var labels, names, from []string
	for _, k := range g {
		names = append(names, k.Name)
		from = append(from, k.Name+"="+s.opt.Baseline[k.Name])
	}
	for i := range n {
		c, changed := maps.Clone(cur), false
		var parts []string
		for _, k := range g {
			c[k.Name] = k.Ladder[i]
			changed = changed || k.Ladder[i] != s.opt.Baseline[k.Name]
			parts = append(parts, k.Name+"="+k.Ladder[i])
		}
		if changed {
			cands, labels = append(cands, c), append(labels, strings.Join(parts, ", "))
		}
	}
	if len(cands) == 0 {
		return cur, false, nil
	}
	step := Step{Knob: strings.Join(names, " + "), From: strings.Join(from, ", "), Against: cur, Pass: 3, Members: names}
	best, over, err := s.measureStep(ctx, &step, cur, cands, labels)
	if _, over, err = s.recordStep(step, over, err); err != nil || over || best < 0 {
		return cur, over, err
	}
	for _, k := range g {
		s.gain[k.Name] = s.gainOf(step.Tried[best].Effect)
	}
	return cands[best], false, nil
}

// judgeStep fills step.Tried from the session's blocks and returns the
// index of the best value that is better and breaks no constraint (-1:
// none).
func (s *searcher) judgeStep(step *Step, ss *Session, vals []string) int {
	conf := 1 - (1-stats.DefaultConfidence)/float64(len(vals))
	best := -1
	for j, v := range vals {
		t := Tried{Value: v, Effect: s.stepEffect(s.logRatios(ss, 0, j+1), conf), Constraint: s.broken(ss, j+1)}
		step.Tried = append(step.Tried, t)
		if t.Effect.Verdict == "better" && t.Constraint == "" && (best < 0 || s.gainOf(t.Effect) > s.gainOf(step.Tried[best].Effect)) {
			best = j
		}
	}
	return best
}

// promising: some value of the step is unclear and breaks no constraint,
// and would clear the margin at MaxBlocks if its true effect were its
// point estimate: estimate − the interval's projected half-width at
// MaxBlocks (the same spread per block, t at the larger df) still lies
// beyond the margin. A value near the margin, which only many more blocks
// could resolve, is not worth them: that is where a null knob's estimate
// lands by chance.
func (s *searcher) promising(step Step) bool {
	conf := 1 - (1-stats.DefaultConfidence)/float64(len(step.Tried))
	for _, t := range step.Tried {
		e := t.Effect
		if e.Verdict != "unclear" || t.Constraint != "" || e.Blocks < 2 || math.IsNaN(e.Lo) {
			continue
		}
		n, max := float64(e.Blocks), float64(s.opt.MaxBlocks)
		se := (math.Log(e.Hi) - math.Log(e.Lo)) / 2 / stats.TQuantile((1+conf)/2, n-1)
		half := stats.TQuantile((1+conf)/2, max-1) * se * math.Sqrt(n/max)
		if s.gainOf(e)-half > math.Log1p(s.opt.MinGain) {
			return true
		}
	}
	return false
}

func describeStep(st Step) string {
	var parts []string
	for _, t := range st.Tried {
		parts = append(parts, fmt.Sprintf("%s ×%.3f [%.3f, %.3f] %s", t.Value, t.Effect.Ratio, t.Effect.Lo, t.Effect.Hi, t.Effect.Verdict))
	}
	out := strings.Join(parts, "; ")
	if st.Kept != "" {
		out += " → kept " + st.Kept
	}
	return out
}

// overBudget: would a step of states states, followed by the shrink and
// the confirmation of a winner of k knobs, overrun the budget?
func (s *searcher) overBudget(states, k int) bool {
	if s.opt.Budget <= 0 || s.perRun == 0 {
		return false
	}
	step := states * s.opt.Blocks
	shrink := 0
	if k > 1 {
		shrink = k * 2 * s.opt.Blocks
	}
	confirm := s.opt.Confirm * (2 + k)
	need := time.Duration(step+shrink+confirm) * s.perRun
	return s.elapsed+need > s.opt.Budget
}

// shrink takes each kept knob out of the winner, the one with the smallest
// screening gain first, and measures the winner without it against the
// winner: a knob whose removal does not make the objective measurably
// worse (nor breaks a constraint) is dropped — bisect in reverse.
func (s *searcher) shrink(ctx context.Context, cur Config) (Config, error) {
	if len(cur) < 2 {
		return cur, nil
	}
	order := cur.Names()
	sort.SliceStable(order, func(i, j int) bool { return s.gain[order[i]] < s.gain[order[j]] })
	for _, k := range order {
		if len(cur) < 2 {
			break
		}
		less := cur.without(k)
		ss, err := s.measure(ctx, []Config{cur, less}, s.opt.Blocks)
		if err != nil {
			return cur, err
		}
		ds := s.logRatios(ss, 0, 1)
		e := s.stepEffect(ds, stats.DefaultConfidence)
		st := ShrinkStep{Knob: k, Value: cur[k], Without: e}
		switch br := s.broken(ss, 1); {
		case br != "":
			st.Why = "without it " + br + " breaks"
		case e.Verdict == "worse":
			st.Why = "without it " + s.res.Metric + " is measurably worse"
		default:
			st.Dropped = true
			st.Why = "without it " + s.res.Metric + " is not measurably worse"
			cur = less
		}
		s.res.Shrink = append(s.res.Shrink, st)
		s.opt.Log("shrink %s: ×%.3f [%.3f, %.3f] dropped=%v", k, e.Ratio, e.Lo, e.Hi, st.Dropped)
	}
	return cur, nil
}

// confirm measures the baseline, the winner and (for shares) each of its
// knobs alone on fresh blocks: none of them chose the winner.
func (s *searcher) confirm(ctx context.Context, win Config) error {
	names := win.Names()
	states := []Config{{}, win}
	if len(names) > 1 {
		for _, k := range names {
			states = append(states, Config{k: win[k]})
		}
	}
	ss, err := s.measure(ctx, states, s.opt.Confirm)
	if err != nil {
		return err
	}
	s.res.ConfirmBlocks = ss.Blocks
	g := s.pairedEffect(ss, 0, 1)
	s.res.Gain = &g
	held := true
	for _, c := range s.opt.Objective.Constraints {
		cc := ConstraintCheck{Constraint: c.String(), Held: true, Worst: math.NaN(), Baseline: math.NaN()}
		var base []float64
		for b, blk := range ss.Medians[1] {
			v, ok := blk[c.Metric]
			if !ok {
				continue
			}
			if math.IsNaN(cc.Worst) || (c.Op == "<=" && v > cc.Worst) || (c.Op == ">=" && v < cc.Worst) {
				cc.Worst = v
			}
			cc.Held = cc.Held && c.Holds(v)
			if bv, ok := ss.Medians[0][b][c.Metric]; ok {
				base = append(base, bv)
			}
		}
		if len(base) > 0 {
			cc.Baseline = stats.Median(base)
		}
		held = held && cc.Held && !math.IsNaN(cc.Worst)
		s.res.Constraints = append(s.res.Constraints, cc)
	}
	s.res.Confirmed = g.Verdict == "better" && held
	winDs := s.logRatios(ss, 0, 1)
	for i, k := range names {
		st := Setting{Knob: k, Value: win[k], From: s.opt.Baseline[k], Share: 1, ShareLo: math.NaN(), ShareHi: math.NaN()}
		if len(names) > 1 {
			alone := s.pairedEffect(ss, 0, 2+i)
			st.Alone = &alone
			st.Share, st.ShareLo, st.ShareHi = shares(s.logRatios(ss, 0, 2+i), winDs)
		}
		s.res.Winner = append(s.res.Winner, st)
	}
	return nil
}

// shares: per block ln(alone/base)/ln(winner/base), mean and t interval.
func shares(part, whole []float64) (float64, float64, float64) {
	return stats.RatioMeanCI(part, whole, stats.DefaultConfidence)
}

// rejected lists every screened knob that did not join the winner with
// its best value's effect, harmful ones flagged.
func (s *searcher) rejected(cur Config) {
	for i, st := range s.res.Steps {
		if st.Kept != "" || len(st.Tried) == 0 || s.lastStep(st.Knob) != &s.res.Steps[i] {
			continue
		}
		if _, kept := cur[st.Knob]; kept {
			continue
		}
		best, worst := 0, -1
		for j, t := range st.Tried {
			if s.gainOf(t.Effect) > s.gainOf(st.Tried[best].Effect) {
				best = j
			}
			if t.Effect.Verdict == "worse" && (worst < 0 || s.gainOf(t.Effect) < s.gainOf(st.Tried[worst].Effect)) {
				worst = j
			}
		}
		r := Rejected{Knob: st.Knob, Value: st.Tried[best].Value, Effect: st.Tried[best].Effect}
		switch {
		case st.Tried[best].Effect.Verdict == "better":
			r.Why = "breaks " + st.Tried[best].Constraint
		default:
			r.Why = "no value moved " + s.res.Metric + " beyond ±" + pct(s.opt.MinGain)
		}
		if worst >= 0 {
			w := st.Tried[worst]
			r.Harmful, r.Worst = true, &w
			r.Why = fmt.Sprintf("harmful: %s=%s makes %s worse", st.Knob, w.Value, s.res.Metric)
		}
		s.res.Rejected = append(s.res.Rejected, r)
	}
}

func pct(f float64) string { return fmt.Sprintf("%g%%", math.Round(f*1000)/10) }

func (s *searcher) conclusion() string {
	switch {
	case len(s.opt.Knobs) == 0:
		return "nothing to search"
	case s.res.Gain == nil:
		return fmt.Sprintf("no setting improved %s beyond ±%s", s.opt.Probe, pct(s.opt.MinGain))
	case !s.res.Confirmed:
		for _, c := range s.res.Constraints {
			if !c.Held {
				return fmt.Sprintf("the winner breaks %s in the confirmation blocks: no setting improved %s beyond ±%s within the constraints", c.Constraint, s.opt.Probe, pct(s.opt.MinGain))
			}
		}
		return fmt.Sprintf("the screening's winner did not confirm on fresh blocks: no setting improved %s beyond ±%s", s.opt.Probe, pct(s.opt.MinGain))
	}
	// Shrink-dropped knobs are rejected too, with their measured removal.
	for _, sh := range s.res.Shrink {
		if sh.Dropped {
			e := sh.Without
			s.res.Rejected = append(s.res.Rejected, Rejected{Knob: sh.Knob, Value: sh.Value, Effect: e, Dropped: &e, Why: "kept at screening, dropped by the shrink: the winner without it is not measurably worse"})
		}
	}
	return fmt.Sprintf("%d setting(s) improve %s by ×%.3f [%.3f, %.3f], confirmed on %d fresh blocks", len(s.res.Winner), s.res.Metric, s.res.Gain.Ratio, s.res.Gain.Lo, s.res.Gain.Hi, s.res.Gain.Blocks)
}

// WinnerConfig is the confirmed winner as a Config (empty when nothing was
// confirmed).
func (r *Result) WinnerConfig() Config {
	c := Config{}
	if !r.Confirmed {
		return c
	}
	for _, w := range r.Winner {
		c[w.Knob] = w.Value
	}
	return c
}
