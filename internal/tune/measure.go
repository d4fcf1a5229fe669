package tune

import (
	"context"
	"errors"
	"fmt"

	"github.com/perflab/perflab/internal/bench"
	"github.com/perflab/perflab/internal/clierr"
	"github.com/perflab/perflab/internal/run"
)

// Measured is the outcome of MeasureApply: the interleaved session and
// where it left the host.
type Measured struct {
	*bench.Interleaved
	Runs    []*run.Run
	Applied []Entry // the final apply that leaves the host tuned
}

// MeasureApply measures what a plan does before applying it for good:
// interleaved blocks put the host "before" (everything the journal holds
// reverted) and "after" (the plan applied through the journal), measure
// the items in each, and pair the blocks (bench.Interleave), so the host's
// drift over the session cancels. Seed 002's engineers tested tcp_tw_reuse
// "separately, to prevent a negative optimisation": this is that test for
// every knob of the plan at once. The host is left tuned — the plan applied
// and journaled — unless the session fails or is interrupted, in which
// case everything is reverted.
//
// The journal must be empty when it starts: "before" reverts everything in
// it, which would undo an earlier tuning.
func (h Host) MeasureApply(ctx context.Context, p Plan, opt ApplyOptions, items []bench.Item, io bench.InterleaveOptions, bo bench.Options) (*Measured, error) {
	if j, err := h.Status(); err != nil {
		return nil, err
	} else if j != nil {
		for _, e := range j.Entries {
			if e.State != Reverted {
				return nil, clierr.Runtimef("run 'perflab tune revert' first, then apply with --measure", "the tune journal holds changes: measuring 'before' would revert them")
			}
		}
	}
	if len(p.Items) == 0 {
		return nil, clierr.Usagef("", "the plan changes nothing on this host: nothing to measure")
	}
	before := bench.State{Name: "before", Apply: func(context.Context) error {
		_, err := h.Revert(RevertOptions{Discard: true})
		return err
	}}
	after := bench.State{Name: "after", Apply: func(ctx context.Context) error {
		if _, err := h.Revert(RevertOptions{Discard: true}); err != nil {
			return err
		}
		_, err := h.Apply(ctx, p, ApplyOptions{Source: opt.Source + " (measuring)"})
		return err
	}}
	io.States = []bench.State{before, after}
	runs, res, err := bench.Interleave(ctx, items, io, bo)
	m := &Measured{Interleaved: res, Runs: runs}
	if err != nil {
		_, rerr := h.Revert(RevertOptions{Discard: true})
		return m, errors.Join(err, rerr)
	}
	if _, err := h.Revert(RevertOptions{Discard: true}); err != nil {
		return m, fmt.Errorf("reverting after the measurement: %w", err)
	}
	m.Applied, err = h.Apply(ctx, p, opt)
	return m, err
}
