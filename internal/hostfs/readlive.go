package hostfs

import (
	"io/fs"
	"path/filepath"
	"strconv"
	"sync"

	"golang.org/x/sys/unix"
)

// scratch holds the buffers readLive reads into before copying out the
// exact bytes: one allocation per file, of its size.
var scratch = sync.Pool{New: func() any { b := make([]byte, 16<<10); return &b }}

// readLive reads a file of the live host with the fewest system calls:
// open, read until end of file, close. os.ReadFile also stats the file,
// registers it with the runtime's poller (procfs and sysfs files are
// pollable) and sets it non-blocking, five more calls per file; a snapshot
// reads hundreds (docs/performance.md, "Snapshot + audit"). Errors are
// *fs.PathError as os.ReadFile returns them.
func readLive(path string) ([]byte, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	for err == unix.EINTR {
		fd, err = unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	}
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	defer unix.Close(fd)
	bp := scratch.Get().(*[]byte)
	defer scratch.Put(bp)
	buf := *bp
	var out []byte // set once the file outgrows buf
	n := 0
	for {
		if n == len(buf) {
			out = append(out, buf...)
			n = 0
		}
		m, err := unix.Read(fd, buf[n:])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, &fs.PathError{Op: "read", Path: path, Err: err}
		}
		if m == 0 {
			break
		}
		n += m
	}
	if out == nil {
		out = make([]byte, n)
		copy(out, buf[:n])
		return out, nil
	}
	return append(out, buf[:n]...), nil
}

// realPath is filepath.EvalSymlinks of an absolute path done by the
// kernel: open it O_PATH and read the descriptor's name back, three system
// calls where EvalSymlinks lstats every component (a /sys/class/net or
// /sys/block entry is eight or more deep). Without /proc it falls back to
// EvalSymlinks.
func realPath(p string) (string, error) {
	if !filepath.IsAbs(p) {
		return filepath.EvalSymlinks(p)
	}
	fd, err := unix.Open(p, unix.O_PATH|unix.O_CLOEXEC, 0)
	for err == unix.EINTR {
		fd, err = unix.Open(p, unix.O_PATH|unix.O_CLOEXEC, 0)
	}
	if err != nil {
		return "", &fs.PathError{Op: "lstat", Path: p, Err: err}
	}
	defer unix.Close(fd)
	var buf [unix.PathMax]byte
	n, err := unix.Readlink("/proc/self/fd/"+strconv.Itoa(fd), buf[:])
	if err != nil || n == 0 || buf[0] != '/' || n == len(buf) {
		return filepath.EvalSymlinks(p)
	}
	return string(buf[:n]), nil
}
