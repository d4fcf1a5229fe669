package bench

import (
	"context"
	"errors"
	"fmt"
	"github.com/perflab/perflab/internal/effect"
	"math/rand/v2"
	"strings"

	"github.com/perflab/perflab/internal/clierr"
	"github.com/perflab/perflab/internal/run"
	"github.com/perflab/perflab/internal/stats"
)

// Interleaved A/B. Measuring state A for a while and then state B for a
// while reads the host's drift between the two periods as the difference
// between the states. Interleaving cancels it: the session is cut into
// blocks, every block puts the host in each state once, in a random order,
// and measures every item there; block i of A and block i of B are minutes
// apart at most, so the comparison pairs them (stats.ComparePaired) and the
// drift between blocks falls out of the difference.
//
// The session stops after a block when, for every item, metric and state,
// the paired interval of the ratio against the first state is within
// ±Options.Precision (never before MinBlocks), or after Blocks blocks.

// State is one configuration of the host under test: Apply puts the host in
// it (runs a command, applies or reverts a tuning plan) before each of its
// measurements.
type State struct {
	Name  string
	Apply func(ctx context.Context) error
}

// InterleaveOptions configures an interleaved session.
type InterleaveOptions struct {
	States    []State
	Blocks    int    // at most this many blocks (default 10)
	MinBlocks int    // at least this many before the precision stop (default 3)
	Seed      uint64 // seeds the per-block order of the states (0: random)
}

// Effect is the measured difference of one state from the first, for one
// metric, over the blocks measured.
type Effect struct {
	Probe, Metric, Unit string
	Better              run.Better
	Base, State         string
	Blocks              int
	// Ratio is state/base with its interval (stats.ComparePaired); P is
	// the paired test's two-sided p-value.
	Ratio, Lo, Hi, P float64
	// Verdict is the one rule's (package effect) on the paired blocks.
	Verdict effect.Verdict
}

// Interleaved is the outcome of an interleaved session.
type Interleaved struct {
	Blocks  int
	Stopped string // "precision", "blocks" or "interrupted"
	Effects []Effect
}

// Interleave runs the items in interleaved blocks of states. Every run is
// labelled opt.Label+"/"+state (or the state's name when there is no
// label), and records its State and Block. OnRun stores runs as they end.
func Interleave(ctx context.Context, items []Item, io InterleaveOptions, opt Options) ([]*run.Run, *Interleaved, error) {
	if err := validateStates(io); err != nil {
		return nil, nil, err
	}
	if io.Blocks <= 0 {
		io.Blocks = 10
	}
	if io.MinBlocks <= 0 {
		io.MinBlocks = 3
	}
	io.MinBlocks = min(io.MinBlocks, io.Blocks)
	seed := io.Seed
	if seed == 0 {
		seed = rand.Uint64()
	}
	rng := rand.New(rand.NewPCG(seed, seed>>1|1))
	base := opt.Label
	var all []*run.Run
	res := &Interleaved{Stopped: "blocks"}
	for b := 1; b <= io.Blocks; b++ {
		order := rng.Perm(len(io.States))
		for _, si := range order {
			st := io.States[si]
			if err := ctx.Err(); err != nil {
				res.Stopped = "interrupted"
				return all, res.summarize(all, io), ErrInterrupted
			}
			if err := st.Apply(ctx); err != nil {
				if ctx.Err() != nil {
					res.Stopped = "interrupted"
					return all, res.summarize(all, io), ErrInterrupted
				}
				return all, res.summarize(all, io), clierr.Runtimef("the runs measured so far were recorded", "putting the host in state %s (block %d): %v", st.Name, b, err)
			}
			o := opt
			o.Label = stateLabel(base, st.Name)
			o.Repeat = 0
			onRun := opt.OnRun
			o.OnRun = func(r *run.Run) error {
				r.State, r.Block = st.Name, b
				all = append(all, r)
				if onRun != nil {
					return onRun(r)
				}
				return nil
			}
			_, err := Run(ctx, items, o)
			if errors.Is(err, ErrInterrupted) {
				res.Stopped = "interrupted"
				return all, res.summarize(all, io), err
			}
			if err != nil {
				return all, res.summarize(all, io), err
			}
		}
		res.Blocks = b
		res.summarize(all, io)
		if b >= io.MinBlocks && opt.Precision > 0 && res.precise(opt.Precision) {
			res.Stopped = "precision"
			break
		}
	}
	return all, res, nil
}

func stateLabel(base, state string) string {
	if base == "" {
		return state
	}
	return base + "/" + state
}

func validateStates(io InterleaveOptions) error {
	if len(io.States) < 2 {
		return &OptionError{"States", len(io.States), "are fewer than the two interleaving needs", "e.g. States A='true' and B='sysctl -w vm.swappiness=10'"}
	}
	seen := map[string]bool{}
	for _, s := range io.States {
		if s.Name == "" || strings.ContainsAny(s.Name, "/ \t\n") {
			return &OptionError{"States", fmt.Sprintf("%q", s.Name), "is not a name: empty, or with a slash or space", "name each state with a word, e.g. before='…'"}
		}
		if seen[s.Name] {
			return &OptionError{"States", s.Name, "is named twice", "give each state its own name"}
		}
		seen[s.Name] = true
		if s.Apply == nil {
			return fmt.Errorf("state %s has no way to apply it", s.Name)
		}
	}
	if io.Blocks < 0 || io.Blocks > MaxRepeat {
		return &OptionError{"Blocks", io.Blocks, fmt.Sprintf("is not between 1 and %d", MaxRepeat), "e.g. 10"}
	}
	return nil
}

// summarize recomputes the effects from the runs so far.
func (res *Interleaved) summarize(runs []*run.Run, io InterleaveOptions) *Interleaved {
	res.Effects = Effects(runs, io.States[0].Name)
	return res
}

// precise: every effect's interval is within ±prec of its ratio.
func (res *Interleaved) precise(prec float64) bool {
	if len(res.Effects) == 0 {
		return false
	}
	for _, e := range res.Effects {
		rl := stats.RunLevel{DF: 1, Ratio: e.Ratio, Lo: e.Lo, Hi: e.Hi}
		if !(rl.RelHalfWidth() <= prec) {
			return false
		}
	}
	return true
}

// Effects pairs the runs of every state with those of base by block and
// probe, metric by metric, in the order the runs first name them.
func Effects(runs []*run.Run, base string) []Effect {
	type key struct{ probe, metric string }
	type cell struct {
		unit   string
		better run.Better
		byS    map[string]map[int]float64 // state → block → run median
	}
	cells := map[key]*cell{}
	var order []key
	var states []string
	seenState := map[string]bool{}
	for _, r := range runs {
		if r.State == "" || r.Block == 0 || !r.Complete {
			continue
		}
		if !seenState[r.State] {
			seenState[r.State] = true
			states = append(states, r.State)
		}
		for _, m := range r.Metrics {
			k := key{r.Probe, m.Name}
			c, ok := cells[k]
			if !ok {
				c = &cell{unit: m.Unit, better: m.Better, byS: map[string]map[int]float64{}}
				cells[k] = c
				order = append(order, k)
			}
			if c.byS[r.State] == nil {
				c.byS[r.State] = map[int]float64{}
			}
			if v := r.Values(m.Name); len(v) > 0 {
				c.byS[r.State][r.Block] = stats.Median(v)
			}
		}
	}
	var out []Effect
	for _, k := range order {
		c := cells[k]
		for _, s := range states {
			if s == base {
				continue
			}
			var a, b []float64
			for blk, va := range c.byS[base] {
				if vb, ok := c.byS[s][blk]; ok {
					a, b = append(a, va), append(b, vb)
				}
			}
			if len(a) == 0 {
				continue
			}
			e := effect.Paired(a, b, c.better, effect.Options{})
			out = append(out, Effect{Probe: k.probe, Metric: k.metric, Unit: c.unit, Better: c.better,
				Base: base, State: s, Blocks: len(a), Ratio: e.Ratio, Lo: e.Lo, Hi: e.Hi, P: e.P, Verdict: e.Verdict()})
		}
	}
	return out
}
