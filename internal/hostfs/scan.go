package hostfs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// procfs and its sysfs read a tree with plain opens, following links as
// the machine perflab runs on resolves them. Before a tree's proc/ or sys/
// is handed to them, Check walks it once without following anything and
// refuses it if any link would lead out of the tree, or it holds a FIFO,
// socket or device, or a file over MaxRead: the facts procfs gives are then
// Unavailable with that reason, and no byte from outside the tree can reach
// a snapshot through procfs. (A tree changed while perflab reads it is
// outside this guarantee: trees are captured data, not live adversaries.)

// maxScan bounds the entries Check visits in one top directory.
const maxScan = 2_000_000

// scans caches Check's answer per tree and top directory.
type scans struct {
	mu   sync.Mutex
	done map[string]error
}

// Check reports whether the top-level directory dir ("/proc", "/sys") of a
// tree may be read by code that opens paths itself (procfs, sysfs, the
// sysctl walk). On the live host it is always nil.
func (f FS) Check(dir string) error {
	if f.Live() || f.scans == nil {
		return nil
	}
	r := rel(dir)
	f.scans.mu.Lock()
	defer f.scans.mu.Unlock()
	if err, ok := f.scans.done[r]; ok {
		return err
	}
	err := f.scan(r)
	f.scans.done[r] = err
	return err
}

func (f FS) scan(r string) error {
	top := filepath.Join(f.root, r)
	fi, err := os.Lstat(top)
	if err != nil {
		return err
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		if _, err := f.naiveInside(top); err != nil {
			return err
		}
		top, _ = filepath.EvalSymlinks(top)
	}
	n := 0
	return filepath.WalkDir(top, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // unreadable: procfs will say so itself
		}
		if n++; n > maxScan {
			return fmt.Errorf("/%s holds over %d entries; refusing to read it", r, maxScan)
		}
		host := "/" + strings.TrimPrefix(strings.TrimPrefix(p, f.root), "/")
		t := d.Type()
		switch {
		case t.IsDir():
			return nil
		case t&fs.ModeSymlink != 0:
			if magicName(host) {
				return nil
			}
			if _, err := f.naiveInside(p); err != nil {
				return err
			}
		case t.IsRegular():
			if fi, err := d.Info(); err == nil && fi.Size() > MaxRead {
				return &fs.PathError{Op: "read", Path: host, Err: ErrTooLarge}
			}
		default:
			return &fs.PathError{Op: "read", Path: host, Err: ErrNotRegular}
		}
		return nil
	})
}

// naiveInside reports where the link at p leads when followed as plain
// opens follow it, and fails if that is outside the root.
func (f FS) naiveInside(p string) (string, error) {
	host := "/" + strings.TrimPrefix(strings.TrimPrefix(p, f.root), "/")
	t, _ := os.Readlink(p)
	res, err := filepath.EvalSymlinks(p)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil // dangling here too: an open fails the same way
	}
	if res != f.root && !strings.HasPrefix(res, f.root+"/") {
		return "", &fs.PathError{Op: "follow", Path: host + " -> " + t, Err: ErrOutsideRoot}
	}
	return res, nil
}

// magicName reports the per-process links of procfs (exe, cwd, root, fd/N,
// map_files/*, ns/*), which a copied proc/ holds as links to the captured
// host's paths and perflab only ever reads as links.
func magicName(host string) bool {
	parts := strings.Split(host, "/")
	if len(parts) < 4 || parts[1] != "proc" || !isPID(parts[2]) {
		return false
	}
	rest := parts[3:]
	if len(rest) >= 3 && rest[0] == "task" && isPID(rest[1]) {
		rest = rest[2:]
	}
	switch {
	case len(rest) == 1:
		return rest[0] == "exe" || rest[0] == "cwd" || rest[0] == "root"
	case len(rest) == 2:
		return rest[0] == "fd" || rest[0] == "map_files" || rest[0] == "ns"
	}
	return false
}

func isPID(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}
