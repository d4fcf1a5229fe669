// Package check is the newcomer's one command: it takes a snapshot of the
// host, audits it for a workload, measures it with a bench suite, stores
// the runs under a label, and compares them with the previous check of the
// same machine so that a change between two checks comes with its likely
// causes.
//
// It only orchestrates: the audit, the harness, the store and the compare
// engine do the work, exactly as 'perflab audit', 'bench', and 'compare'
// do, so a check never judges differently from the commands it combines.
// Rendering is internal/report's (CheckDoc).
package check

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"time"

	"github.com/perflab/perflab/internal/audit"
	"github.com/perflab/perflab/internal/bench"
	"github.com/perflab/perflab/internal/compare"
	"github.com/perflab/perflab/internal/hostfs"
	"github.com/perflab/perflab/internal/run"
	"github.com/perflab/perflab/internal/snapshot"
	"github.com/perflab/perflab/internal/store"
)

// DefaultLabel labels the runs of a check, and finds the previous one.
const DefaultLabel = "check"

// Side names in the comparison: short, because they head table columns.
const (
	PreviousSide = "previous"
	CurrentSide  = "now"
)

// Options say what to check.
type Options struct {
	FS       hostfs.FS
	Workload *audit.Workload
	Source   string // recorded in the audit report: "live" or a --root tree
	Version  string // perflab version

	// Items are the probes to measure; none means audit only.
	Items []bench.Item
	Suite string // the suite the items are, "" for a list of probes
	// Bench holds the harness options (precision, limits, progress);
	// Run fills in the host, label, suite, monitor and OnRun.
	Bench bench.Options

	// Store keeps the runs and holds the previous check; nil measures
	// without storing or comparing.
	Store *store.Store
	Label string // default DefaultLabel

	// Log receives one line per stage and per note (nil: discarded).
	Log io.Writer
}

// Result is everything a check found.
type Result struct {
	Snapshot *snapshot.Snapshot
	Audit    *audit.Report
	Runs     []*run.Run // this check's runs, in measuring order
	Stored   int        // how many of them the store kept

	// Previous is the previous check of this machine with the same label
	// and suite (nil when there is none); Comparison compares it with this
	// one, or reports this check alone.
	Previous   *Previous
	Comparison *compare.Comparison

	// Notes are things the reader should know: skipped probes, failed
	// probes, a previous check that could not be compared.
	Notes []string
	// BenchErr is the harness's error: probe failures (the other runs are
	// still in Runs) or bench.ErrInterrupted.
	BenchErr error
}

// Previous describes the check compared against.
type Previous struct {
	At         time.Time  `json:"at"` // when its first run started
	SnapshotID string     `json:"snapshot_id,omitempty"`
	Runs       []*run.Run `json:"-"`
}

// Run performs the check. Errors before anything is measured (the host
// cannot be read, the store cannot be read) are returned as err; a failure
// while measuring is Result.BenchErr, so the caller can still report what
// was measured.
func Run(ctx context.Context, opt Options) (*Result, error) {
	logf := func(format string, args ...any) {
		if opt.Log != nil {
			fmt.Fprintf(opt.Log, format+"\n", args...)
		}
	}
	if opt.Label == "" {
		opt.Label = DefaultLabel
	}
	sess, err := bench.NewSession(opt.FS, opt.Store)
	if err != nil {
		return nil, err
	}
	snap := sess.Snapshot
	res := &Result{Snapshot: snap}
	findings := audit.Run(snap, opt.Workload)
	res.Audit = audit.NewReport(snap, opt.Workload, findings, opt.Version, opt.Source)
	if len(opt.Items) == 0 {
		return res, nil
	}

	// The previous check is looked up before measuring, so this check's
	// own runs can never be mistaken for it.
	if opt.Store != nil {
		res.Previous, err = FindPrevious(ctx, opt.Store, opt.Label, opt.Suite, snap)
		if err != nil {
			return nil, fmt.Errorf("reading earlier checks: %w", err)
		}
	}

	bo := opt.Bench
	bo.Label, bo.Suite, bo.Version = opt.Label, opt.Suite, opt.Version
	if bo.Monitor == nil {
		res.Notes = append(res.Notes, sess.Notes...)
	}
	logf("measuring %d probe(s)%s", len(opt.Items), suiteWords(opt.Suite))
	res.Runs, res.BenchErr = sess.Run(ctx, opt.Items, bo)
	res.Stored = sess.Stored
	var storeErr *bench.StoreError
	if errors.As(res.BenchErr, &storeErr) {
		return res, storeErr
	}
	for _, r := range res.Runs {
		if r.Stop == run.StopFailed {
			res.Notes = append(res.Notes, fmt.Sprintf("%s failed: %s", r.Probe, r.Error))
		}
	}
	res.Comparison, err = res.compare(ctx, sess)
	if err != nil {
		return res, err
	}
	return res, nil
}

func suiteWords(s string) string {
	if s == "" {
		return ""
	}
	return " (suite " + s + ")"
}

// compare builds the comparison with the previous check, or a report of
// this check alone when there is none or it shares no metric with this one.
func (res *Result) compare(ctx context.Context, sess *bench.Session) (*compare.Comparison, error) {
	st := sess.Store
	cur := measured(res.Runs)
	if len(cur) == 0 {
		return nil, nil
	}
	now := compare.Side{Name: CurrentSide, Runs: cur, Snapshots: map[string]*snapshot.Snapshot{res.Snapshot.ID: res.Snapshot}}
	sides := []compare.Side{now}
	if res.Previous != nil {
		prev := compare.Side{Name: PreviousSide, Runs: measured(res.Previous.Runs), Snapshots: map[string]*snapshot.Snapshot{}}
		if id := res.Previous.SnapshotID; id != "" && st != nil {
			if s, err := st.Snapshot(ctx, id); err == nil {
				prev.Snapshots[id] = s
			} else {
				res.Notes = append(res.Notes, fmt.Sprintf("the previous check's host snapshot could not be read (%v): differences are not explained by configuration", err))
			}
		}
		if len(prev.Runs) > 0 {
			sides = []compare.Side{prev, now}
		}
	}
	opt := compare.Options{History: sess.History(ctx, cur)}
	c, err := compare.Compare(sides, opt)
	if errors.Is(err, compare.ErrNothingInCommon) && len(sides) == 2 {
		res.Notes = append(res.Notes, "the previous check measured other probes; this check is reported alone ("+err.Error()+")")
		c, err = compare.Compare(sides[1:], opt)
	}
	if err != nil {
		return nil, fmt.Errorf("compare: %w", err)
	}
	return c, nil
}

// measured drops runs without a single sample (a probe that failed in
// setup): they have nothing to compare.
func measured(runs []*run.Run) []*run.Run {
	var out []*run.Run
	for _, r := range runs {
		if len(r.Samples) > 0 {
			out = append(out, r)
		}
	}
	return out
}

// FindPrevious returns the newest check stored under label on the machine
// snap was taken on, with the runs of that check. A check is the set of
// runs sharing one snapshot (one invocation); the machine is recognised by
// its machine id, or by hostname when either side lacks one. suite, when
// set, restricts the search to checks of that suite, since runs of other
// suites compare nothing. Incomplete runs are left out.
func FindPrevious(ctx context.Context, st *store.Store, label, suite string, snap *snapshot.Snapshot) (*Previous, error) {
	runs, err := st.Runs(ctx, store.Filter{Label: label, Host: snap.Host.Hostname, Suite: suite})
	if err != nil {
		return nil, err
	}
	groups := map[string][]*run.Run{}
	var newest *run.Run
	for _, r := range runs {
		// Runs cut short (Ctrl-C, a failed probe) are no baseline: an
		// interrupted check must not become the one the next compares with.
		if !sameMachine(r, snap) || r.SnapshotID == snap.ID || !r.Complete {
			continue
		}
		groups[r.SnapshotID] = append(groups[r.SnapshotID], r)
		if newest == nil || r.Started.After(newest.Started) {
			newest = r
		}
	}
	if newest == nil {
		return nil, nil
	}
	g := groups[newest.SnapshotID]
	sort.SliceStable(g, func(i, j int) bool { return g[i].Started.Before(g[j].Started) })
	return &Previous{At: g[0].Started, SnapshotID: newest.SnapshotID, Runs: g}, nil
}

func sameMachine(r *run.Run, snap *snapshot.Snapshot) bool {
	if r.MachineID != "" && snap.Host.MachineID != "" {
		return r.MachineID == snap.Host.MachineID
	}
	return r.Host == snap.Host.Hostname
}
