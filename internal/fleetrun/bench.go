package fleetrun

import (
	"context"
	"fmt"
	"io"

	"github.com/perflab/perflab/internal/compare"
	"github.com/perflab/perflab/internal/remote"
	"github.com/perflab/perflab/internal/run"
	"github.com/perflab/perflab/internal/snapshot"
)

// BenchStep is one planned probe: its name and the flags that set its
// parameters and limits.
type BenchStep struct {
	Probe string
	Args  []string
}

// BenchOptions configure 'bench SUITE --on A --on B'.
type BenchOptions struct {
	Targets  []string // the hosts as the user wrote them
	Conn     remote.Options
	Binary   remote.BinaryOptions
	Steps    []BenchStep
	Base     []string // flags every step gets (the user's bench flags)
	Suite    string   // recorded on every run
	Store    Store    // nil stores nothing
	Progress io.Writer
}

// BenchResult is every host's runs, one comparison side per host in
// --on order.
type BenchResult struct {
	Sides  []compare.Side
	Failed int // probe runs that stored nothing
}

// StoreError is a run that came back but could not be stored.
type StoreError struct {
	Run, Host string
	Err       error
}

func (e *StoreError) Error() string {
	return fmt.Sprintf("storing run %s from %s: %v", e.Run, e.Host, e.Err)
}

// BenchHosts runs every step on each host in turn (step by step, so drift
// falls on all hosts alike) over one session per host, stores the runs
// attributed to each host and returns them by host. A host that cannot
// be reached, or a run that fails to come back, ends it with that error
// (a *remote.Error, ctx's error when interrupted, or a *StoreError); the
// runs stored so far stay stored.
func BenchHosts(ctx context.Context, o BenchOptions) (*BenchResult, error) {
	if o.Progress == nil {
		o.Progress = io.Discard
	}
	hosts := make([]*remote.Session, 0, len(o.Targets))
	defer func() {
		for _, h := range hosts {
			h.Close()
		}
	}()
	for _, t := range o.Targets {
		h, err := remote.OpenSession(ctx, t, remote.ExecOptions{Conn: o.Conn, Binary: o.Binary, Stderr: o.Progress})
		if err != nil {
			return nil, err
		}
		hosts = append(hosts, h)
	}
	res := &BenchResult{Sides: make([]compare.Side, len(hosts))}
	for i, h := range hosts {
		res.Sides[i] = compare.Side{Name: h.Name, Snapshots: map[string]*snapshot.Snapshot{}}
	}
	step := 0
	for _, it := range o.Steps {
		for i, h := range hosts {
			step++
			fmt.Fprintf(o.Progress, "[%d/%d] %s on %s\n", step, len(o.Steps)*len(hosts), it.Probe, h.Name)
			runs, snaps, err := benchStepOn(ctx, h, it, o)
			if err != nil {
				if ctx.Err() != nil {
					return res, ctx.Err()
				}
				return res, err
			}
			if len(runs) == 0 {
				res.Failed++
			}
			if err := addRuns(ctx, o, &res.Sides[i], runs, snaps); err != nil {
				return res, err
			}
		}
	}
	return res, nil
}

// benchStepOn runs one probe on one host and returns its runs.
func benchStepOn(ctx context.Context, h *remote.Session, it BenchStep, o BenchOptions) ([]*run.Run, map[string]*snapshot.Snapshot, error) {
	args := append(append(append([]string{"bench", "probe:" + it.Probe}, it.Args...), o.Base...), "--format", "json")
	res, err := h.Run(ctx, args, true, io.Discard, o.Progress)
	if err != nil {
		return nil, nil, err
	}
	if len(res.Export) == 0 {
		fmt.Fprintf(o.Progress, "note: %s on %s stored no run (exit %d)\n", it.Probe, h.Name, res.Code)
		return nil, nil, nil
	}
	ex, err := remote.Attribute(res.Export, h.Name)
	if err != nil {
		return nil, nil, err
	}
	return ex.Runs, ex.Snapshots, nil
}

// addRuns stores one host's runs of a step (unless there is no store)
// and adds them to its side of the comparison.
func addRuns(ctx context.Context, o BenchOptions, side *compare.Side, runs []*run.Run, snaps map[string]*snapshot.Snapshot) error {
	for _, r := range runs {
		r.Suite = o.Suite
		if o.Store != nil {
			if err := o.Store.SaveRun(context.WithoutCancel(ctx), r, snaps[r.SnapshotID]); err != nil {
				return &StoreError{Run: r.ID, Host: side.Name, Err: err}
			}
		}
		side.Runs = append(side.Runs, r)
	}
	for id, s := range snaps {
		side.Snapshots[id] = s
	}
	return nil
}
