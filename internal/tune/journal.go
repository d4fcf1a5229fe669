package tune

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	pathpkg "path"
	"path/filepath"
	"strings"
	"time"

	"github.com/perflab/perflab/internal/audit"
	"github.com/perflab/perflab/internal/hostfs"
	"github.com/perflab/perflab/internal/knob"
	"golang.org/x/sys/unix"
)

// JournalSchema is the version of the journal file format.
const JournalSchema = 1

// journalDir is where journals live, under the root.
const journalDir = "/var/lib/perflab/tune"

// Entry states.
const (
	Pending  = "pending"  // old value journaled; the write may or may not have happened
	Applied  = "applied"  // written and read back
	Reverted = "reverted" // old value restored
)

// Entry is one knob write.
type Entry struct {
	Txn    int          `json:"txn"`
	Rule   string       `json:"rule,omitempty"`
	Knob   string       `json:"knob,omitempty"` // the catalogue knob (internal/knob) the change writes
	Change audit.Change `json:"change"`
	Old    string       `json:"old"` // read from the host just before writing
	New    string       `json:"new"`
	State  string       `json:"state"`
	// NS is the namespaces the write reached (netns for net knobs, mntns
	// for /sys): revert and verify act on the entry only there.
	NS
}

// Txn is one apply (or irq pin) and what asked for it.
type Txn struct {
	ID       int       `json:"id"`
	Source   string    `json:"source"` // "tune apply web", "irq pin eth0"
	Workload string    `json:"workload,omitempty"`
	Time     time.Time `json:"time"`
}

// Persisted is a file tune wrote for boot-time persistence, with what was
// there before so revert can restore it.
type Persisted struct {
	Path    string `json:"path"`
	Existed bool   `json:"existed"`
	Old     string `json:"old"`
}

// Journal is the record of everything tune changed and has not reverted.
type Journal struct {
	Schema    int         `json:"schema"`
	MachineID string      `json:"machine_id"`
	BootID    string      `json:"boot_id"`
	Txns      []Txn       `json:"txns"`
	Entries   []Entry     `json:"entries"`
	Persisted []Persisted `json:"persisted,omitempty"`
}

// Host is a host to tune: its root and where the journal lives.
type Host struct {
	FS hostfs.FS
	// Dir is the journal directory as a real path; "" means
	// <root>/var/lib/perflab/tune.
	Dir string
	// Scope, when set, confines every write to one container's network
	// namespace and cgroup (see Scope); nil is the host itself.
	Scope Scope
}

func (h Host) dir() string {
	if h.Dir != "" {
		return h.Dir
	}
	// A journal kept elsewhere (a test's, or a second one beside a
	// host's own): every tune command honours it.
	if d := os.Getenv("PERFLAB_TUNE_DIR"); d != "" {
		return d
	}
	return h.FS.Path(journalDir)
}

func (h Host) journalPath() string { return filepath.Join(h.dir(), "journal.json") }

// maxJournal bounds what loadJournal reads.
const maxJournal = 64 << 20

// openDir opens (creating if asked) the journal directory and checks it:
// a directory, not a link, owned by root or the user running perflab, not
// writable by group or others. Under --root it is resolved inside the tree.
func (h Host) openDir(create bool) (*os.File, error) {
	var d *os.File
	var err error
	if h.Dir != "" {
		if create {
			if err := os.MkdirAll(h.Dir, 0o700); err != nil {
				return nil, fmt.Errorf("cannot create %s: %w (run as root)", h.Dir, err)
			}
		}
		var fd int
		fd, err = unix.Open(h.Dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err == nil {
			d = os.NewFile(uintptr(fd), h.Dir)
		} else {
			err = &fs.PathError{Op: "open", Path: h.Dir, Err: err}
		}
	} else {
		if create {
			if err := h.FS.MkdirAll(journalDir, 0o700); err != nil {
				return nil, fmt.Errorf("cannot create %s: %w (run as root)", h.dir(), err)
			}
		}
		d, err = h.FS.OpenDir(journalDir)
	}
	if err != nil {
		return nil, err
	}
	if err := trusted(d, h.dir(), "directory"); err != nil {
		d.Close()
		return nil, err
	}
	return d, nil
}

// trusted refuses a journal file or directory that someone other than root
// (or the user running perflab) could have written: perflab acts on a
// journal as root, so whoever can write it decides what root writes.
func trusted(f *os.File, name, what string) error {
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return err
	}
	uid := uint32(os.Geteuid())
	if st.Uid != 0 && st.Uid != uid {
		return &JournalError{Path: name, Problem: fmt.Sprintf("the tune journal %s %s is owned by uid %d, not root", what, name, st.Uid), Fix: fmt.Sprintf("check who wrote it; if it is yours, 'chown root: %s'", name)}
	}
	if st.Mode&0o022 != 0 {
		return &JournalError{Path: name, Problem: fmt.Sprintf("the tune journal %s %s is writable by group or others (mode %04o)", what, name, st.Mode&0o7777), Fix: fmt.Sprintf("check it was not edited, then 'chmod go-w %s'", name)}
	}
	return nil
}

// JournalError is a journal perflab refuses to act on: the problem and the
// fix, one line.
type JournalError struct{ Path, Problem, Fix string }

func (e *JournalError) Error() string { return e.Problem + "; " + e.Fix }

// loadJournal returns the active journal, or nil when there is none. The
// file is opened without following a link, must be a regular file that
// only root can write, and every entry must name a knob perflab writes
// (validate) before anything acts on it.
func (h Host) loadJournal() (*Journal, error) {
	d, err := h.openDir(false)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer d.Close()
	fd, err := unix.Openat(int(d.Fd()), "journal.json", unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ENOENT) {
		return nil, nil
	}
	if errors.Is(err, unix.ELOOP) {
		return nil, &JournalError{Path: h.journalPath(), Problem: "the tune journal " + h.journalPath() + " is a symbolic link", Fix: "perflab never writes one: remove it after checking what it points to"}
	}
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: h.journalPath(), Err: err}
	}
	f := os.NewFile(uintptr(fd), h.journalPath())
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return nil, &JournalError{Path: h.journalPath(), Problem: "the tune journal " + h.journalPath() + " is not a regular file", Fix: "remove it after checking what it is"}
	}
	if err := trusted(f, h.journalPath(), "file"); err != nil {
		return nil, err
	}
	data, err := io.ReadAll(io.LimitReader(f, maxJournal+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxJournal {
		return nil, fmt.Errorf("tune journal %s is over %d MiB; perflab never writes one that large (inspect it)", h.journalPath(), maxJournal>>20)
	}
	var j Journal
	if err := json.Unmarshal(data, &j); err != nil {
		return nil, fmt.Errorf("tune journal %s is corrupt: %v (inspect it; remove it only after restoring by hand)", h.journalPath(), err)
	}
	if j.Schema > JournalSchema {
		return nil, fmt.Errorf("tune journal %s has schema %d; this perflab reads %d (use the perflab that wrote it)", h.journalPath(), j.Schema, JournalSchema)
	}
	if err := j.validate(h.journalPath()); err != nil {
		return nil, err
	}
	return &j, nil
}

// validate refuses a journal naming anything perflab never writes: knob
// files outside the root's /proc/sys and /sys, NIC names that are not
// names, persisted files other than PersistPath. One bad entry refuses the
// whole journal, so a revert of an edited journal changes nothing.
func (j *Journal) validate(name string) error {
	bad := func(what string) error {
		return &JournalError{Path: name, Problem: "the tune journal " + name + " " + what + ": perflab never writes there, so the journal was edited or is not perflab's", Fix: "restore by hand from its old values and remove it"}
	}
	for i, e := range j.Entries {
		if err := ValidTarget(e.Change); err != nil {
			return bad(fmt.Sprintf("entry %d %v", i+1, err))
		}
	}
	for _, p := range j.Persisted {
		if p.Path != PersistPath {
			return bad(fmt.Sprintf("lists persisted file %q (only %s is perflab's)", p.Path, PersistPath))
		}
	}
	return nil
}

// ValidTarget reports whether a change names a knob tune may write: a
// sysctl name, a file under /proc/sys or /sys written as a clean absolute
// path, another /proc file only where the knob catalogue has a knob for it
// (an IRQ's smp_affinity_list), or a network interface name.
func ValidTarget(c audit.Change) error {
	switch c.Kind {
	case audit.KindSysctl:
		if c.Target == "" || strings.ContainsAny(c.Target, "/\x00") || strings.Contains(c.Target, "..") || strings.HasPrefix(c.Target, ".") || strings.HasSuffix(c.Target, ".") {
			return fmt.Errorf("names sysctl %q, which is not a sysctl name", c.Target)
		}
	case audit.KindFile:
		p := c.Target
		_, catalogued := knob.ForFile(p)
		inProc := strings.HasPrefix(p, "/proc/") && catalogued
		if p != pathpkg.Clean(p) || !(strings.HasPrefix(p, "/proc/sys/") || strings.HasPrefix(p, "/sys/") || inProc) || strings.ContainsRune(p, 0) {
			return fmt.Errorf("targets %q, outside /proc/sys, /sys and the catalogue's /proc knobs", p)
		}
	case audit.KindChannels:
		if c.Target == "" || len(c.Target) > 15 || strings.ContainsAny(c.Target, "/ \x00:") || c.Target == "." || c.Target == ".." {
			return fmt.Errorf("names NIC %q, which is not an interface name", c.Target)
		}
	default:
		return fmt.Errorf("is a %q change, which tune never journals", c.Kind)
	}
	return nil
}

// save writes the journal durably: an exclusive temp file in the checked
// journal directory, fsync, rename, fsync dir. A crash at any point leaves
// either the old or the new journal, never a torn one, and a journaled old
// value is on disk before its knob is written.
func (j *Journal) save(h Host) error {
	d, err := h.openDir(true)
	if err != nil {
		return fmt.Errorf("cannot use the tune journal directory: %w", err)
	}
	defer d.Close()
	data, err := json.MarshalIndent(j, "", "  ")
	if err != nil {
		return err
	}
	return hostfs.ReplaceAt(d, "journal.json", data, 0o600)
}

// remove deletes the active journal.
func (h Host) removeJournal() error {
	d, err := h.openDir(false)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := unix.Unlinkat(int(d.Fd()), "journal.json", 0); err != nil {
		return &fs.PathError{Op: "remove", Path: h.journalPath(), Err: err}
	}
	return d.Sync()
}

// archive moves a fully reverted journal into the history.
func (j *Journal) archive(h Host) error {
	d, err := h.openDir(false)
	if err != nil {
		return err
	}
	defer d.Close()
	dst := fmt.Sprintf("journal-%s.reverted.json", time.Now().UTC().Format("20060102T150405.000000000"))
	if err := unix.Renameat(int(d.Fd()), "journal.json", int(d.Fd()), dst); err != nil {
		return &fs.PathError{Op: "rename", Path: h.journalPath(), Err: err}
	}
	return d.Sync()
}

// lock takes an exclusive lock so that two perflab processes never tune
// the same host at once.
func (h Host) lock() (func(), error) {
	d, err := h.openDir(true)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	fd, err := unix.Openat(int(d.Fd()), "lock", unix.O_CREAT|unix.O_RDWR|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: filepath.Join(h.dir(), "lock"), Err: err}
	}
	f := os.NewFile(uintptr(fd), filepath.Join(h.dir(), "lock"))
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		return nil, errors.New("another perflab tune is running on this host")
	}
	return func() { unix.Flock(int(f.Fd()), unix.LOCK_UN); f.Close() }, nil
}

// hostIdentity reads the machine and boot ids a journal is bound to.
func hostIdentity(fsys hostfs.FS) (machine, boot string) {
	machine, _ = fsys.ReadString("/etc/machine-id")
	boot, _ = fsys.ReadString("/proc/sys/kernel/random/boot_id")
	return machine, boot
}
