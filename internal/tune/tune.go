package tune

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strings"
	"time"

	"github.com/perflab/perflab/internal/audit"
	"github.com/perflab/perflab/internal/hostfs"
	"github.com/perflab/perflab/internal/snapshot"
)

// Item is one planned change and the finding behind it.
type Item struct {
	Rule     string       `json:"rule"`
	Title    string       `json:"title"`
	Severity string       `json:"severity"`
	Why      string       `json:"why"`
	Change   audit.Change `json:"change"`
	// Blocked says why tune cannot apply this change here ("" when it can).
	Blocked string `json:"blocked,omitempty"`
}

// Plan is what a workload implies for a host.
type Plan struct {
	Workload     string `json:"workload"`
	Items        []Item `json:"items"`        // knobs tune can write
	Instructions []Item `json:"instructions"` // boot parameters and commands for a person
}

// MakePlan derives the plan from the audit of s for w: the Changes of every
// failing finding. Pure: it reads nothing from the host.
func MakePlan(s *snapshot.Snapshot, w *audit.Workload) Plan {
	p := Plan{Workload: w.Name}
	seen := map[string]bool{}
	for _, f := range audit.Run(s, w) {
		if f.Status != audit.Fail {
			continue
		}
		for _, c := range f.Changes {
			it := Item{Rule: f.Rule, Title: f.Title, Severity: f.Severity.String(), Why: f.Why, Change: c}
			key := string(c.Kind) + "\x00" + c.Target
			if c.Applicable() {
				if seen[key] {
					continue // two rules agree on a knob; the first (most severe) wins
				}
				seen[key] = true
				p.Items = append(p.Items, it)
			} else {
				p.Instructions = append(p.Instructions, it)
			}
		}
	}
	return p
}

// Check marks items that cannot be applied on fs and why (no such knob,
// read-only /proc/sys in a container, no permission).
func (p *Plan) Check(fsys hostfs.FS) (blocked int) {
	for i := range p.Items {
		if err := writable(fsys, p.Items[i].Change); err != nil {
			p.Items[i].Blocked = err.Error()
			blocked++
		}
	}
	return blocked
}

// ApplyOptions tune an apply.
type ApplyOptions struct {
	Source  string // recorded in the journal: "tune apply web"
	Persist bool   // also write /etc/sysctl.d/99-perflab.conf
	// Log receives one line per knob as it is written (may be nil).
	Log func(format string, args ...any)
}

// PersistPath is where --persist writes sysctls.
const PersistPath = "/etc/sysctl.d/99-perflab.conf"

// ErrBlocked is returned when some knobs cannot be written: nothing was
// changed.
var ErrBlocked = errors.New("some knobs cannot be changed here; nothing was changed")

// Apply writes the plan's items as one transaction. Before each write the
// old value is journaled durably; if any write fails, or ctx is cancelled
// (Ctrl-C, SIGTERM), every knob this transaction wrote is restored and the
// error returned. On success the journal keeps the old values for revert.
func (h Host) Apply(ctx context.Context, p Plan, opt ApplyOptions) (applied []Entry, err error) {
	fsys := h.FS
	logf := opt.Log
	if logf == nil {
		logf = func(string, ...any) {}
	}
	if n := h.Check(&p); n > 0 {
		return nil, ErrBlocked
	}
	unlock, err := h.lock()
	if err != nil {
		return nil, err
	}
	defer unlock()
	j, err := h.loadJournal()
	if err != nil {
		return nil, err
	}
	machine, boot := hostIdentity(fsys)
	if j == nil {
		j = &Journal{Schema: JournalSchema, MachineID: machine, BootID: boot}
	} else if err := j.sameHost(machine, boot); err != nil {
		return nil, err
	}
	here := h.here()
	txn := Txn{ID: len(j.Txns) + 1, Source: opt.Source, Workload: p.Workload, Time: time.Now().UTC()}
	j.Txns = append(j.Txns, txn)

	rollback := func(cause error) error {
		var errs []string
		for i := len(j.Entries) - 1; i >= 0; i-- {
			e := &j.Entries[i]
			if e.Txn != txn.ID || e.State == Reverted {
				continue
			}
			if werr := write(fsys, e.Change, e.Old); werr != nil {
				errs = append(errs, fmt.Sprintf("%s: %v", e.Change.Target, werr))
				continue
			}
			e.State = Reverted
		}
		_ = j.save(h)
		if len(errs) > 0 {
			return fmt.Errorf("%w; rollback also failed for %s (run 'perflab tune revert')", cause, strings.Join(errs, "; "))
		}
		return fmt.Errorf("%w; every knob of this apply was restored", cause)
	}

	// Every knob's value before this apply writes any: one write can move
	// another knob (enabling THP makes the kernel raise
	// vm.min_free_kbytes), and the journal must hold what was there before
	// the apply — read after the first write, the raised value would look
	// like the target and never be restored.
	olds := make([]string, len(p.Items))
	for i, it := range p.Items {
		v, err := read(fsys, it.Change)
		if err != nil {
			return nil, rollback(fmt.Errorf("read %s: %v", it.Change.Target, err))
		}
		olds[i] = v
	}
	for i, it := range p.Items {
		if err := ctx.Err(); err != nil {
			return nil, rollback(fmt.Errorf("interrupted"))
		}
		c := it.Change
		old := olds[i]
		if old == normalize(c, c.Value) {
			continue
		}
		// A knob perflab already changed keeps its original value: revert
		// must go back to before perflab, not to an intermediate state. The
		// same net sysctl in another namespace is another knob.
		ns := bind(c, here)
		if orig, ok := j.original(c, ns); ok {
			old = orig
		}
		k, _ := knobOf(c)
		j.Entries = append(j.Entries, Entry{Txn: txn.ID, Rule: it.Rule, Knob: k.Path, Change: c, Old: old, New: normalize(c, c.Value), State: Pending, NS: ns})
		if err := j.save(h); err != nil {
			return nil, rollback(fmt.Errorf("journal: %v", err))
		}
		e := &j.Entries[len(j.Entries)-1]
		if err := write(fsys, c, e.New); err != nil {
			return nil, rollback(fmt.Errorf("write %s=%s: %v", c.Target, e.New, err))
		}
		if got, err := read(fsys, c); err != nil || got != e.New {
			return nil, rollback(fmt.Errorf("%s did not take %q (reads back %q): the kernel may not support this value", c.Target, e.New, got))
		}
		e.State = Applied
		if err := j.save(h); err != nil {
			return nil, rollback(fmt.Errorf("journal: %v", err))
		}
		logf("set %s = %s (was %s)", c.Target, e.New, e.Old)
		applied = append(applied, *e)
	}
	if opt.Persist {
		if err := j.persist(h); err != nil {
			return nil, rollback(err)
		}
	}
	if len(applied) == 0 && !opt.Persist {
		// Nothing changed: drop the empty transaction.
		j.Txns = j.Txns[:len(j.Txns)-1]
		if len(j.Entries) == 0 {
			_ = h.removeJournal()
			return nil, nil
		}
	}
	return applied, j.save(h)
}

func (j *Journal) original(c audit.Change, ns NS) (string, bool) {
	for _, e := range j.Entries {
		if e.Change.Kind == c.Kind && e.Change.Target == c.Target && e.State != Reverted && e.NS.same(ns) {
			return e.Old, true
		}
	}
	return "", false
}

// sameHost refuses a journal written on another machine or before a reboot.
func (j *Journal) sameHost(machine, boot string) error {
	if j.MachineID != "" && machine != "" && j.MachineID != machine {
		return fmt.Errorf("the tune journal was written on another host (machine-id %s, this is %s); it was copied here by mistake", j.MachineID, machine)
	}
	if j.BootID != "" && boot != "" && j.BootID != boot {
		return fmt.Errorf("the tune journal is from an earlier boot: runtime knobs were reset by the reboot; run 'perflab tune revert --force' to restore its old values anyway, or 'perflab tune forget' to drop it")
	}
	return nil
}

// persist writes the journal's applied sysctls to PersistPath, remembering
// what was there before.
func (j *Journal) persist(h Host) error {
	rec := Persisted{Path: PersistPath}
	known := false
	for _, pr := range j.Persisted {
		if pr.Path == PersistPath {
			known = true
		}
	}
	if !known {
		if b, err := h.FS.ReadFile(PersistPath); err == nil {
			rec.Existed, rec.Old = true, string(b)
		}
		j.Persisted = append(j.Persisted, rec)
		if err := j.save(h); err != nil {
			return err
		}
	}
	var b strings.Builder
	b.WriteString("# Written by 'perflab tune apply --persist'; 'perflab tune revert' restores the previous state.\n")
	vals := map[string]string{}
	for _, e := range j.Entries {
		if e.Change.Kind == audit.KindSysctl && e.State == Applied {
			vals[e.Change.Target] = e.New
		}
	}
	keys := make([]string, 0, len(vals))
	for k := range vals {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "%s = %s\n", k, vals[k])
	}
	if err := h.FS.MkdirAll("/etc/sysctl.d", 0o755); err != nil {
		return fmt.Errorf("persist: %w", err)
	}
	if err := h.FS.Replace(PersistPath, []byte(b.String()), 0o644); err != nil {
		return fmt.Errorf("persist: %w", err)
	}
	return nil
}

// Drift is one knob's state against what tune applied.
type Drift struct {
	Rule     string `json:"rule,omitempty"`
	Kind     string `json:"kind"`
	Target   string `json:"target"`
	Expected string `json:"expected"`
	Current  string `json:"current"`
	OK       bool   `json:"ok"`
	Error    string `json:"error,omitempty"`
}

// Drifted counts the knobs whose current value is not the applied one.
func Drifted(drift []Drift) int {
	n := 0
	for _, d := range drift {
		if !d.OK {
			n++
		}
	}
	return n
}

// Verify compares every applied knob with its current value.
func (h Host) Verify() ([]Drift, error) {
	fsys := h.FS
	j, err := h.loadJournal()
	if err != nil || j == nil {
		return nil, err
	}
	var out []Drift
	last := map[string]int{}
	for i, e := range j.Entries {
		if e.State == Applied {
			last[fmt.Sprintf("%s\x00%s\x00%d", e.Change.Kind, e.Change.Target, e.NS.Net)] = i
		}
	}
	idx := make([]int, 0, len(last))
	for _, i := range last {
		idx = append(idx, i)
	}
	sort.Ints(idx)
	here := h.here()
	for _, i := range idx {
		e := j.Entries[i]
		d := Drift{Rule: e.Rule, Kind: string(e.Change.Kind), Target: e.Change.Target, Expected: e.New}
		if why := e.NS.elsewhere(here); why != "" {
			d.Error = "applied in " + why + ": verify inside that namespace"
			out = append(out, d)
			continue
		}
		cur, err := read(fsys, e.Change)
		if err != nil {
			d.Error = hostfs.Reason(path(e.Change), err)
		} else {
			d.Current, d.OK = cur, cur == e.New
		}
		out = append(out, d)
	}
	return out, nil
}

// RevertOptions tune a revert.
type RevertOptions struct {
	Force bool // revert a journal from an earlier boot
	// Discard removes the reverted journal instead of keeping it as
	// journal-*.reverted.json history: for the many intermediate reverts
	// of bisect and apply --measure, whose flips are not the user's.
	Discard bool
	Log     func(format string, args ...any)
}

// Revert restores every journaled knob to its value before perflab, newest
// first, removes persisted files, and archives the journal. It is
// idempotent: with no journal it does nothing, and a journal left by a crash
// mid-apply (pending entries) is reverted like any other.
func (h Host) Revert(opt RevertOptions) (restored []Entry, err error) {
	fsys := h.FS
	logf := opt.Log
	if logf == nil {
		logf = func(string, ...any) {}
	}
	unlock, err := h.lock()
	if err != nil {
		return nil, err
	}
	defer unlock()
	j, err := h.loadJournal()
	if err != nil || j == nil {
		return nil, err
	}
	machine, boot := hostIdentity(fsys)
	if err := j.sameHost(machine, boot); err != nil {
		if !opt.Force || (j.MachineID != "" && machine != "" && j.MachineID != machine) {
			return nil, err
		}
	}
	var failed []string
	var skipped []Skipped
	here := h.here()
	for i := len(j.Entries) - 1; i >= 0; i-- {
		e := &j.Entries[i]
		if e.State == Reverted {
			continue
		}
		if why := e.NS.elsewhere(here); why != "" {
			// Writing here would set this namespace's knob to the other
			// namespace's old value, and leave the other one tuned.
			skipped = append(skipped, Skipped{Entry: *e, Reason: "applied in " + why})
			logf("skipped %s: applied in %s", e.Change.Target, why)
			continue
		}
		if cur, err := read(fsys, e.Change); err == nil && cur == e.Old {
			e.State = Reverted
			continue
		}
		if err := write(fsys, e.Change, e.Old); err != nil {
			failed = append(failed, fmt.Sprintf("%s: %v", e.Change.Target, err))
			continue
		}
		e.State = Reverted
		logf("restored %s = %s", e.Change.Target, e.Old)
		restored = append(restored, *e)
	}
	if len(skipped) > 0 {
		// The journal stays, with the skipped entries and the persisted
		// files, for the revert inside the other namespace.
		if err := j.save(h); err != nil {
			return restored, err
		}
		if len(failed) > 0 {
			return restored, fmt.Errorf("could not restore %s; the journal is kept, fix the cause and run revert again; also %v", strings.Join(failed, "; "), &ErrOtherNamespace{Skipped: skipped})
		}
		return restored, &ErrOtherNamespace{Skipped: skipped}
	}
	for _, p := range j.Persisted {
		if p.Existed {
			err = fsys.Replace(p.Path, []byte(p.Old), 0o644)
		} else {
			err = fsys.Remove(p.Path)
			if errors.Is(err, fs.ErrNotExist) {
				err = nil
			}
		}
		if err != nil {
			failed = append(failed, fmt.Sprintf("%s: %v", p.Path, err))
		} else {
			logf("restored %s", p.Path)
		}
	}
	if len(failed) > 0 {
		_ = j.save(h)
		return restored, fmt.Errorf("could not restore %s; the journal is kept, fix the cause and run revert again", strings.Join(failed, "; "))
	}
	if opt.Discard {
		if err := h.removeJournal(); err != nil {
			return restored, err
		}
		return restored, nil
	}
	return restored, j.archive(h)
}

// Status is the active journal, or nil.
func (h Host) Status() (*Journal, error) { return h.loadJournal() }

// Forget drops an active journal without restoring anything (after a
// reboot reset the runtime values, for instance). It is archived, not
// deleted.
func (h Host) Forget() error {
	j, err := h.loadJournal()
	if err != nil || j == nil {
		return err
	}
	return j.archive(h)
}
