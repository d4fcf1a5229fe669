package search

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/perflab/perflab/internal/bench"
	"github.com/perflab/perflab/internal/clierr"
	"github.com/perflab/perflab/internal/run"
	"github.com/perflab/perflab/internal/stats"
	"github.com/perflab/perflab/internal/tune"
	"gopkg.in/yaml.v3"
)

// MeasureFunc runs an interleaved session; bench.Interleave in production.
type MeasureFunc func(ctx context.Context, items []bench.Item, io bench.InterleaveOptions, opt bench.Options) ([]*run.Run, *bench.Interleaved, error)

// Host measures configurations on a real target: each state reverts
// tune's journal and applies its configuration through it (tune.Host),
// and bench.Interleave runs the probe in interleaved blocks — the --state
// engine, as bisect and tune apply --measure use it.
type Host struct {
	Tune       tune.Host
	Items      []bench.Item
	Bench      bench.Options
	Knobs      []Knob
	Interleave MeasureFunc // nil: bench.Interleave
	Seed       uint64
	Source     string // journal source, "tune search web"
	// Now is the clock for the budget (nil: time.Now).
	Now func() time.Time
}

func (h *Host) knob(name string) (Knob, bool) {
	i := slices.IndexFunc(h.Knobs, func(k Knob) bool { return k.Name == name })
	if i < 0 {
		return Knob{}, false
	}
	return h.Knobs[i], true
}

// plan is the tune plan that moves the baseline to c.
func (h *Host) plan(c Config) (tune.Plan, error) {
	p := tune.Plan{Workload: "search"}
	for _, name := range c.Names() {
		k, ok := h.knob(name)
		if !ok {
			return p, fmt.Errorf("no knob %s in the space", name)
		}
		p.Items = append(p.Items, tune.Item{Rule: "SEARCH", Title: name, Change: k.Change(c[name])})
	}
	return p, nil
}

// put reverts everything the journal holds and applies c.
func (h *Host) put(ctx context.Context, c Config, why string) error {
	if _, err := h.Tune.Revert(tune.RevertOptions{Discard: true}); err != nil {
		return fmt.Errorf("reverting before %s: %w", why, err)
	}
	if len(c) == 0 {
		return nil
	}
	p, err := h.plan(c)
	if err != nil {
		return err
	}
	if _, err := h.Tune.Apply(ctx, p, tune.ApplyOptions{Source: h.Source + " (" + why + ")"}); err != nil {
		return fmt.Errorf("applying %s: %w", why, err)
	}
	return nil
}

// Measure implements Measurer.
func (h *Host) Measure(ctx context.Context, states []Config, blocks int) (*Session, error) {
	now := h.Now
	if now == nil {
		now = time.Now
	}
	measure := h.Interleave
	if measure == nil {
		measure = bench.Interleave
	}
	var bs []bench.State
	for i, c := range states {
		name := fmt.Sprintf("s%d", i)
		bs = append(bs, bench.State{Name: name, Apply: func(ctx context.Context) error { return h.put(ctx, c, name) }})
	}
	h.Seed++
	opt := h.Bench
	opt.Label = ""
	start := now()
	runs, _, err := measure(ctx, h.Items, bench.InterleaveOptions{States: bs, Blocks: blocks, MinBlocks: blocks, Seed: h.Seed}, opt)
	ss := &Session{Medians: make([][]map[string]float64, len(states)), Elapsed: now().Sub(start), Runs: len(runs)}
	probe := ""
	if len(h.Items) > 0 {
		probe = h.Items[0].Probe.Name()
	}
	for i := range states {
		ss.Medians[i] = make([]map[string]float64, blocks)
	}
	seenBlock := map[int]bool{}
	for _, r := range runs {
		var si int
		if _, e := fmt.Sscanf(r.State, "s%d", &si); e != nil || si < 0 || si >= len(states) || r.Block < 1 || r.Block > blocks || !r.Complete || r.Probe != probe {
			continue
		}
		if ss.Metrics == nil {
			ss.Metrics = r.Metrics
		}
		m := map[string]float64{}
		for _, mt := range r.Metrics {
			if v := r.Values(mt.Name); len(v) > 0 {
				m[mt.Name] = stats.Median(v)
			}
		}
		ss.Medians[si][r.Block-1] = m
		seenBlock[r.Block] = true
	}
	ss.Blocks = len(seenBlock)
	return ss, err
}

// ErrJournalActive is returned when tune's journal holds changes the
// search's reverts would undo.
var ErrJournalActive = errors.New("tune's journal holds changes that are not reverted")

// OnHost runs a search on a real target, safely: it refuses to start while
// the journal holds unreverted changes (its reverts would undo them),
// reads every knob before it starts, and when it ends — success, failure
// or Ctrl-C — reverts the journal and checks every knob against its value
// from before. With apply, a confirmed winner is then applied through the
// journal and left (revertible with 'perflab tune revert'). After kill -9
// the journal holds what a search had applied; 'perflab tune revert'
// restores it.
func OnHost(ctx context.Context, opt Options, h *Host, apply bool) (*Result, error) {
	if j, err := h.Tune.Status(); err != nil {
		return nil, err
	} else if j != nil {
		for _, e := range j.Entries {
			if e.State != tune.Reverted {
				return nil, clierr.Runtimef("run 'perflab tune revert' first (it restores what the journal holds), then search again", "%v: the search reverts everything it sets and would undo them", ErrJournalActive)
			}
		}
	}
	h.Knobs = opt.Knobs
	before := map[string]string{}
	var readable []Knob
	for _, k := range opt.Knobs {
		v, err := tune.Read(h.Tune.FS, k.Change(""))
		if err != nil {
			opt.Log("leaving out %s: %v", k.Name, err)
			continue
		}
		before[k.Name] = v
		readable = append(readable, k)
	}
	opt.Knobs, opt.Baseline, h.Knobs = readable, before, readable
	opt.Measurer = h
	res, err := Run(ctx, opt)
	if res == nil {
		res = &Result{Probe: opt.Probe}
	}
	for _, k := range opt.Knobs {
		if _, ok := before[k.Name]; !ok {
			res.Excluded = append(res.Excluded, k.Name+": cannot be read here")
		}
	}
	res.Restored = restore(h, res, before)
	if err == nil && apply && res.Confirmed && res.Restored {
		if aerr := h.applyWinner(context.WithoutCancel(ctx), res); aerr != nil {
			return res, aerr
		}
	}
	return res, err
}

func restore(h *Host, res *Result, before map[string]string) bool {
	if _, err := h.Tune.Revert(tune.RevertOptions{Discard: true}); err != nil {
		res.Notes = append(res.Notes, "revert: "+err.Error())
		return false
	}
	ok := true
	for _, k := range h.Knobs {
		v, err := tune.Read(h.Tune.FS, k.Change(""))
		if err != nil || v != before[k.Name] {
			ok = false
			res.Notes = append(res.Notes, fmt.Sprintf("%s reads %q after the search, %q before (%v)", k.Name, v, before[k.Name], err))
		}
	}
	return ok
}

func (h *Host) applyWinner(ctx context.Context, res *Result) error {
	p, err := h.plan(res.WinnerConfig())
	if err != nil {
		return err
	}
	p.Workload = strings.TrimPrefix(h.Source, "tune search ")
	if _, err := h.Tune.Apply(ctx, p, tune.ApplyOptions{Source: h.Source + " --apply"}); err != nil {
		return fmt.Errorf("applying the winner: %w", err)
	}
	res.Applied = true
	return nil
}

// profileDoc is a user profile as audit.ParseProfile reads it.
type profileDoc struct {
	Name        string            `yaml:"name"`
	Description string            `yaml:"description"`
	Extends     string            `yaml:"extends"`
	Set         map[string]string `yaml:"set"`
}

// Profile exports the confirmed winner as a user profile YAML extending
// workload: 'perflab tune apply FILE' applies it and 'perflab audit
// --workload FILE' checks a host against it. Nil when nothing confirmed.
func Profile(res *Result, name, workload string) ([]byte, error) {
	if !res.Confirmed || len(res.Winner) == 0 {
		return nil, fmt.Errorf("the search confirmed no winner: there is no profile to export")
	}
	d := profileDoc{Name: name, Extends: workload, Set: map[string]string{},
		Description: fmt.Sprintf("perflab tune search: %s, %s ×%.3f [%.3f, %.3f] on %d confirmation blocks", res.Objective, res.Metric, res.Gain.Ratio, res.Gain.Lo, res.Gain.Hi, res.Gain.Blocks)}
	var skipped []string
	for _, w := range res.Winner {
		if !strings.Contains(w.Knob, ".") || strings.HasPrefix(w.Knob, "/") {
			skipped = append(skipped, w.Knob+"="+w.Value)
			continue
		}
		d.Set[w.Knob] = w.Value
	}
	out, err := yaml.Marshal(d)
	if err != nil || len(skipped) == 0 {
		return out, err
	}
	// A profile names knobs the audit knows; a /sys path is not one.
	return append(out, []byte("# not expressible as a profile target, set by hand: "+strings.Join(skipped, ", ")+"\n")...), nil
}
