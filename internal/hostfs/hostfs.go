// Package hostfs is the one door through which perflab reads (and, for tune,
// writes) a host: a root directory holding proc/, sys/, etc/, run/ … which is
// "/" on a live host and a copied tree in tests or for a host captured
// elsewhere. Nothing else in perflab opens /proc or /sys directly, so every
// analysis runs the same on fixture trees as on the machine it describes.
//
// Paths given to FS methods are host paths ("/proc/cpuinfo" or
// "proc/cpuinfo"); the FS maps them under its root.
//
// The live host ("/") is read as the kernel presents it, following its
// links. A tree is confined (confine.go): every path resolves inside the
// root (openat2 RESOLVE_IN_ROOT|RESOLVE_NO_MAGICLINKS, or an equivalent
// walk on kernels before 5.6), only regular files are read, opened
// non-blocking so a FIFO cannot hang, at most MaxRead bytes; procfs and
// sysfs get a tree's proc/ and sys/ only after Check found nothing in them
// that leads outside (scan.go).
package hostfs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/prometheus/procfs"
	"github.com/prometheus/procfs/sysfs"
)

// FS is a host root filesystem, or a container's view of one (WithNetNS).
type FS struct {
	root  string
	scans *scans // nil on the live host
	// netPID, when non-zero, is the process whose network namespace the
	// view shows (see WithNetNS).
	netPID int
}

// ErrNotLinuxRoot is returned by New for a directory without proc/ or sys/.
var ErrNotLinuxRoot = errors.New("not a Linux root filesystem")

// New returns the FS rooted at root ("" means "/"). The root must contain a
// proc/ or sys/ directory.
func New(root string) (FS, error) {
	if root == "" {
		root = "/"
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return FS{}, err
	}
	// The root the user named is trusted; links inside it are not.
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		abs = r
	}
	st, err := os.Stat(abs)
	if err != nil {
		return FS{}, fmt.Errorf("root %s: %w", root, err)
	}
	if !st.IsDir() {
		return FS{}, fmt.Errorf("root %s is not a directory: %w", root, ErrNotLinuxRoot)
	}
	_, perr := os.Stat(filepath.Join(abs, "proc"))
	_, serr := os.Stat(filepath.Join(abs, "sys"))
	if perr != nil && serr != nil {
		return FS{}, fmt.Errorf("root %s has neither proc/ nor sys/: %w", root, ErrNotLinuxRoot)
	}
	if abs == "/" {
		return FS{root: abs}, nil
	}
	return FS{root: abs, scans: &scans{done: map[string]error{}}}, nil
}

// Root returns the absolute root directory.
func (f FS) Root() string { return f.root }

// Live reports whether the FS is the running host's own root.
func (f FS) Live() bool { return f.root == "/" }

// Path maps a host path to the path under the root. ".." components cannot
// climb above the root: "/../etc" is the root's etc, as on the host itself.
// In a network-namespace view /proc/net is the process's /proc/PID/net, and
// in a captured tree /proc/sys/net is /proc/PID/root/proc/sys/net (see
// WithNetNS).
func (f FS) Path(p string) string {
	if f.root == "/" {
		return f.mapped(p) // already clean and absolute: Join would copy it
	}
	return filepath.Join(f.root, f.mapped(p))
}

// mapped is the host path p names in this view, before the root is
// joined: the network-namespace redirections of Path, cleaned.
func (f FS) mapped(p string) string {
	// A collector's path is almost always clean and absolute already;
	// Clean of a clean path allocates nothing, and "/"+p would (twice:
	// the concatenation, and Clean's copy to drop the doubled slash).
	clean := p
	if p == "" || p[0] != '/' || filepath.Clean(p) != p {
		clean = filepath.Clean("/" + p)
	}
	if f.netPID > 0 {
		pid := strconv.Itoa(f.netPID)
		if rest, ok := cutDir(clean, "/proc/net"); ok {
			clean = "/proc/" + pid + "/net" + rest
		} else if rest, ok := cutDir(clean, "/proc/sys/net"); ok && !f.Live() {
			clean = "/proc/" + pid + "/root/proc/sys/net" + rest
		}
	}
	return clean
}

// cutDir returns what follows dir in p when p is dir or under it.
func cutDir(p, dir string) (string, bool) {
	if p == dir {
		return "", true
	}
	if rest, ok := strings.CutPrefix(p, dir+"/"); ok {
		return "/" + rest, true
	}
	return "", false
}

// ReadFile reads a whole file.
// In a tree it is confined, regular files only, at most MaxRead bytes.
func (f FS) ReadFile(p string) ([]byte, error) {
	if f.netScoped(p) {
		var b []byte
		err := f.InNetNS(func() (err error) { b, err = os.ReadFile(f.Path(p)); return err })
		return b, err
	}
	if f.Live() {
		return readLive(f.Path(p))
	}
	return f.readConfined(p)
}

// ReadString reads a file and trims surrounding white space.
func (f FS) ReadString(p string) (string, error) {
	b, err := f.ReadFile(p)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(b)), nil
}

// ReadInt reads a file holding one integer.
func (f FS) ReadInt(p string) (int64, error) {
	s, err := f.ReadString(p)
	if err != nil {
		return 0, err
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", p, err)
	}
	return v, nil
}

// ReadDir lists a directory.
func (f FS) ReadDir(p string) ([]os.DirEntry, error) {
	if f.netScoped(p) {
		var ents []os.DirEntry
		err := f.InNetNS(func() (err error) { ents, err = os.ReadDir(f.Path(p)); return err })
		return ents, err
	}
	if f.Live() {
		return os.ReadDir(f.Path(p))
	}
	return f.readDirConfined(p)
}

// Exists reports whether a path exists (following links; in a tree, only
// inside it).
func (f FS) Exists(p string) bool {
	if f.netScoped(p) {
		return f.InNetNS(func() error { _, err := os.Stat(f.Path(p)); return err }) == nil
	}
	_, err := f.Stat(p)
	return err == nil
}

// Stat returns the file a path leads to (following links; in a tree, only
// inside it).
func (f FS) Stat(p string) (fs.FileInfo, error) {
	if f.Live() {
		return os.Stat(f.Path(p))
	}
	return f.statConfined(p)
}

// LinkBase returns the last element of a symlink's target, e.g. the driver
// name behind /sys/class/net/eth0/device/driver.
func (f FS) LinkBase(p string) (string, error) {
	t, err := f.Readlink(p)
	if err != nil {
		return "", err
	}
	return filepath.Base(t), nil
}

// Readlink returns a link's target as written (in a tree, the directories
// leading to it resolved inside the root).
func (f FS) Readlink(p string) (string, error) {
	if f.Live() {
		return os.Readlink(f.Path(p))
	}
	return f.readlinkConfined(p)
}

// Resolve returns the host path a link resolves to, relative to the root
// (e.g. "/sys/devices/pci0000:00/…"). On the live host links that escape
// the root fail; in a tree every link resolves inside it.
func (f FS) Resolve(p string) (string, error) {
	if !f.Live() {
		r, err := f.resolveConfined(p)
		if err != nil {
			return "", err
		}
		if _, err := f.Stat(r); err != nil {
			return "", err
		}
		return r, nil
	}
	r, err := realPath(f.Path(p))
	if err != nil {
		return "", err
	}
	rel, err := filepath.Rel(f.root, r)
	if err != nil || strings.HasPrefix(rel, "..") {
		return "", fmt.Errorf("%s resolves outside the root", p)
	}
	return "/" + rel, nil
}

// Glob matches a host path pattern and returns host paths.
func (f FS) Glob(pattern string) ([]string, error) {
	if !f.Live() {
		return f.globConfined(pattern)
	}
	m, err := filepath.Glob(f.Path(pattern))
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(m))
	for _, p := range m {
		rel, _ := filepath.Rel(f.root, p)
		out = append(out, "/"+rel)
	}
	return out, nil
}

// WriteFile writes an existing file in place, as the kernel expects for
// /proc/sys and /sys knobs (no create, no rename). It is used only by tune.
// In a tree the file must be a regular file inside it.
func (f FS) WriteFile(p string, data []byte) error {
	if f.netScoped(p) {
		return f.InNetNS(func() error { return f.writeFile(p, data) })
	}
	if !f.Live() {
		return f.writeConfined(p, data)
	}
	return f.writeFile(p, data)
}

func (f FS) writeFile(p string, data []byte) error {
	fh, err := os.OpenFile(f.Path(p), os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		return err
	}
	if _, err := fh.Write(data); err != nil {
		fh.Close()
		return fmt.Errorf("write %s: %w", p, err)
	}
	return fh.Close()
}

// Proc returns a procfs.FS on the root's proc/.
// In a tree, only when Check("/proc") found nothing leading outside it.
func (f FS) Proc() (procfs.FS, error) {
	if err := f.Check("/proc"); err != nil {
		return procfs.FS{}, err
	}
	return procfs.NewFS(f.Path("/proc"))
}

// Sys returns a sysfs.FS on the root's sys/ (in a tree, after Check).
func (f FS) Sys() (sysfs.FS, error) {
	if err := f.Check("/sys"); err != nil {
		return sysfs.FS{}, err
	}
	return sysfs.NewFS(f.Path("/sys"))
}

// Reason turns a read error into the short "unavailable, because…" text that
// snapshots record: absence is a fact about the host, not a failure.
func Reason(p string, err error) string {
	switch {
	case err == nil:
		return ""
	case errors.Is(err, fs.ErrNotExist):
		return p + " does not exist on this host"
	case errors.Is(err, ErrOutsideRoot), errors.Is(err, ErrNotRegular), errors.Is(err, ErrTooLarge):
		return p + " is not read: " + err.Error()
	case errors.Is(err, fs.ErrPermission):
		return "permission denied reading " + p + " (run as root)"
	default:
		return err.Error()
	}
}
