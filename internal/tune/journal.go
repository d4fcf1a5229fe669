package tune

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/perflab/perflab/internal/audit"
	"github.com/perflab/perflab/internal/hostfs"
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
}

func (h Host) dir() string {
	if h.Dir != "" {
		return h.Dir
	}
	return h.FS.Path(journalDir)
}

func (h Host) journalPath() string { return filepath.Join(h.dir(), "journal.json") }

// loadJournal returns the active journal, or nil when there is none.
func (h Host) loadJournal() (*Journal, error) {
	data, err := os.ReadFile(h.journalPath())
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var j Journal
	if err := json.Unmarshal(data, &j); err != nil {
		return nil, fmt.Errorf("tune journal %s is corrupt: %v (inspect it; remove it only after restoring by hand)", h.journalPath(), err)
	}
	if j.Schema > JournalSchema {
		return nil, fmt.Errorf("tune journal %s has schema %d; this perflab reads %d (use the perflab that wrote it)", h.journalPath(), j.Schema, JournalSchema)
	}
	return &j, nil
}

// save writes the journal durably: temp file, fsync, rename, fsync dir. A
// crash at any point leaves either the old or the new journal, never a torn
// one, and a journaled old value is on disk before its knob is written.
func (j *Journal) save(h Host) error {
	p := h.journalPath()
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return fmt.Errorf("cannot create the tune journal directory: %w", err)
	}
	data, err := json.MarshalIndent(j, "", "  ")
	if err != nil {
		return err
	}
	tmp := p + ".tmp"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, p); err != nil {
		return err
	}
	return syncDir(filepath.Dir(p))
}

// archive moves a fully reverted journal into the history.
func (j *Journal) archive(h Host) error {
	p := h.journalPath()
	dst := filepath.Join(filepath.Dir(p), fmt.Sprintf("journal-%s.reverted.json", time.Now().UTC().Format("20060102T150405.000000000")))
	if err := os.Rename(p, dst); err != nil {
		return err
	}
	return syncDir(filepath.Dir(p))
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// lock takes an exclusive lock so that two perflab processes never tune
// the same host at once.
func (h Host) lock() (func(), error) {
	dir := h.dir()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("cannot create %s: %w (run as root)", dir, err)
	}
	f, err := os.OpenFile(filepath.Join(dir, "lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
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
