package profile

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/perflab/perflab/internal/clierr"
	"github.com/perflab/perflab/internal/flame/folded"
	"github.com/perflab/perflab/internal/hostfs"
	"github.com/perflab/perflab/internal/trace"
)

// Blocked says which eBPF views profile records instead of (or with) perf.
type Blocked struct {
	OffCPU   bool          // time blocked, by kernel and user stack (sched_switch)
	Mixed    bool          // on-CPU (perf) and off-CPU in one graph
	Locks    bool          // futex waits by stack and lock address
	MinBlock time.Duration // shorter blocks are ignored
}

// Any reports whether an eBPF view was asked for.
func (b Blocked) Any() bool { return b.OffCPU || b.Mixed || b.Locks }

// OptionError names the Blocked or Target field that is wrong, never a
// flag: the command line words it (cli maps fields to flags).
type OptionError struct {
	Field  string // e.g. "MinBlock", or "OffCPU, Mixed, Locks"
	Value  any    // the value given, nil when the field names a choice
	Reason string
	Hint   string
}

func (e *OptionError) Error() string {
	if e.Value == nil {
		return e.Field + " " + e.Reason
	}
	return fmt.Sprintf("%s %v %s", e.Field, e.Value, e.Reason)
}

// Validate checks the combination and the target.
func (b Blocked) Validate(t Target) error {
	n := 0
	for _, x := range []bool{b.OffCPU, b.Mixed, b.Locks} {
		if x {
			n++
		}
	}
	const views = "OffCPU, Mixed, Locks"
	if n > 1 {
		return &OptionError{Field: views, Reason: "cannot be combined", Hint: "give one of " + views}
	}
	if len(t.Command) > 0 {
		return &OptionError{Field: views, Reason: "trace a running process (PID) or all (All), not a command",
			Hint: "start the command first and give PID, or use All"}
	}
	if b.MinBlock < 0 {
		return &OptionError{Field: "MinBlock", Value: b.MinBlock, Reason: "is negative", Hint: "use MinBlock 0 or more"}
	}
	return nil
}

// BlockedProfile is the result: folded stacks weighted in nanoseconds.
type BlockedProfile struct {
	Profile *folded.Profile
	What    string
	Kind    string // "off-CPU", "on+off-CPU", "lock wait"
	Elapsed time.Duration
	Locks   *trace.Locks // --locks only
	Notes   []string
}

// OffCPUFrame marks off-CPU stacks in a mixed profile (their leaf).
const OffCPUFrame = "[off-cpu]"

// RecordBlocked records the eBPF view b asks for.
func RecordBlocked(ctx context.Context, fs hostfs.FS, opt Options, b Blocked) (*BlockedProfile, error) {
	what := "all processes"
	if opt.PID != 0 {
		if !fs.Exists(fmt.Sprintf("/proc/%d", opt.PID)) {
			return nil, clierr.Usagef("give the PID of a running process", "no process %d", opt.PID)
		}
		what = fmt.Sprintf("PID %d", opt.PID)
	}
	res := &BlockedProfile{What: what}
	switch {
	case b.Locks:
		l, err := trace.RecordLocks(ctx, fs, trace.LockOptions{PID: opt.PID, Duration: opt.Duration, MinBlock: b.MinBlock})
		if err != nil {
			return nil, err
		}
		res.Kind, res.Profile, res.Elapsed, res.Locks = "lock wait", l.Profile, l.Elapsed, l
	case b.OffCPU:
		o, err := trace.RecordOffCPU(ctx, fs, trace.OffCPUOptions{PID: opt.PID, Duration: opt.Duration, MinBlock: b.MinBlock})
		if err != nil {
			return nil, err
		}
		res.Kind, res.Profile, res.Elapsed, res.Notes = "off-CPU", o.Profile, o.Elapsed, o.Notes
	default:
		return recordMixed(ctx, fs, opt, b, res)
	}
	return res, nil
}

// recordMixed runs perf (cpu-clock, so on-CPU weights are nanoseconds too)
// and the off-CPU tracer over the same time and merges them.
func recordMixed(ctx context.Context, fs hostfs.FS, opt Options, b Blocked, res *BlockedProfile) (*BlockedProfile, error) {
	ready, err := CheckReadiness(fs, opt.Target)
	if err != nil {
		return nil, err
	}
	opt.Event = "cpu-clock"
	var (
		wg     sync.WaitGroup
		off    *trace.OffCPU
		offErr error
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		off, offErr = trace.RecordOffCPU(ctx, fs, trace.OffCPUOptions{PID: opt.PID, Duration: opt.Duration, MinBlock: b.MinBlock})
	}()
	on, onErr := Record(ctx, ready, opt)
	wg.Wait()
	if offErr != nil {
		return nil, offErr
	}
	if onErr != nil {
		return nil, onErr
	}
	res.Kind, res.Elapsed, res.Notes = "on+off-CPU", on.Elapsed, off.Notes
	res.Profile = MergeMixed(on.Fold.Profile, off.Profile)
	return res, nil
}

// MergeMixed puts on-CPU and off-CPU stacks (both in nanoseconds) in one
// profile; off-CPU stacks end in OffCPUFrame so they stay apart.
func MergeMixed(on, off *folded.Profile) *folded.Profile {
	m := map[string]uint64{}
	for _, s := range on.Stacks {
		m[s.Frames] += s.Count
	}
	for _, s := range off.Stacks {
		m[s.Frames+";"+OffCPUFrame] += s.Count
	}
	p := &folded.Profile{}
	for f, c := range m {
		p.Stacks = append(p.Stacks, folded.Stack{Frames: f, Count: c})
	}
	p.Sort()
	return p
}
