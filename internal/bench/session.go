package bench

import (
	"context"
	"fmt"

	"github.com/perflab/perflab/internal/hostfs"
	"github.com/perflab/perflab/internal/monitor"
	"github.com/perflab/perflab/internal/run"
	"github.com/perflab/perflab/internal/snapshot"
	"github.com/perflab/perflab/internal/store"
)

// Session is one measuring session on a host, the sequence that 'perflab
// bench' and 'perflab check' share: a snapshot of the host, the host's
// identity on every run, a monitor series during each run, each run stored
// as soon as it finishes (so Ctrl-C loses nothing measured), and the
// history of earlier runs for compare's noise floor.
type Session struct {
	FS       hostfs.FS
	Snapshot *snapshot.Snapshot
	// Store keeps each run as it finishes; nil measures without storing.
	Store *store.Store
	// Monitor samples host activity during each run; nil when the host
	// has no /proc to sample (Notes says why).
	Monitor *monitor.Sampler
	// Stored counts the runs the store kept.
	Stored int
	// Notes are what the reader should know about the session itself (no
	// monitor series, and why).
	Notes []string
}

// StoreError is a run that was measured but could not be stored; the
// session stops at it.
type StoreError struct {
	RunID string
	Err   error
}

func (e *StoreError) Error() string { return fmt.Sprintf("storing run %s: %v", e.RunID, e.Err) }
func (e *StoreError) Unwrap() error { return e.Err }

// NewSession takes the snapshot of fs that every run of the session refers
// to. st may be nil.
func NewSession(fs hostfs.FS, st *store.Store) (*Session, error) {
	snap, err := snapshot.Collect(fs, snapshot.Options{})
	if err != nil {
		return nil, fmt.Errorf("snapshot: %w", err)
	}
	s := &Session{FS: fs, Snapshot: snap, Store: st}
	if sm, err := monitor.New(fs); err == nil {
		s.Monitor = sm
	} else {
		s.Notes = append(s.Notes, fmt.Sprintf("no host activity series: %v", err))
	}
	return s, nil
}

// Run measures items with opt, filling in what the session knows: the
// host, the monitor (unless opt has one) and storing each run. A run that
// cannot be stored ends the session with a *StoreError.
func (s *Session) Run(ctx context.Context, items []Item, opt Options) ([]*run.Run, error) {
	snap := s.Snapshot
	opt.Host = Host{Name: snap.Host.Hostname, MachineID: snap.Host.MachineID, BootID: snap.Host.BootID, SnapshotID: snap.ID}
	if opt.Monitor == nil {
		opt.Monitor = s.Monitor
	}
	opt.OnRun = func(r *run.Run) error { return s.save(ctx, r, snap) }
	return Run(ctx, items, opt)
}

// History is the store's earlier runs of the same probes on the same hosts
// (store.History); none without a store.
func (s *Session) History(ctx context.Context, runs []*run.Run) []*run.Run {
	return s.Store.History(ctx, runs)
}

// Interleave runs an interleaved session (bench.Interleave) on the
// session's host: each state's runs refer to a snapshot taken right after
// the state was applied (a state changes the host), and every run is
// stored as it finishes.
func (s *Session) Interleave(ctx context.Context, items []Item, io InterleaveOptions, opt Options) ([]*run.Run, *Interleaved, error) {
	snap := s.Snapshot
	opt.Host = Host{Name: snap.Host.Hostname, MachineID: snap.Host.MachineID, BootID: snap.Host.BootID, SnapshotID: snap.ID}
	if opt.Monitor == nil {
		opt.Monitor = s.Monitor
	}
	states := make([]State, len(io.States))
	for i, st := range io.States {
		apply := st.Apply
		states[i] = State{Name: st.Name, Apply: func(ctx context.Context) error {
			if err := apply(ctx); err != nil {
				return err
			}
			next, err := snapshot.Collect(s.FS, snapshot.Options{})
			if err != nil {
				return fmt.Errorf("snapshot after applying %s: %w", st.Name, err)
			}
			snap = next
			return nil
		}}
	}
	io.States = states
	opt.OnRun = func(r *run.Run) error {
		r.SnapshotID = snap.ID
		return s.save(ctx, r, snap)
	}
	return Interleave(ctx, items, io, opt)
}

// save stores one finished run with its snapshot (nothing without a
// store). Saving must outlive Ctrl-C: the context is already cancelled when
// the partial run arrives here.
func (s *Session) save(ctx context.Context, r *run.Run, snap *snapshot.Snapshot) error {
	if s.Store == nil {
		return nil
	}
	if err := s.Store.SaveRun(context.WithoutCancel(ctx), r, snap); err != nil {
		return &StoreError{RunID: r.ID, Err: err}
	}
	s.Stored++
	return nil
}
