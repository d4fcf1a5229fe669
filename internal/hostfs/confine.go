package hostfs

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"sort"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// Confinement of a tree (--root): every path is resolved inside the root
// as the kernel resolves it inside a chroot. An absolute link means the
// tree's path (etc/localtime -> /usr/share/zoneinfo/UTC is the tree's
// zoneinfo), ".." stops at the root, and a magic link (/proc/PID/root of a
// live procfs mounted in a tree) is never followed. Where the kernel has
// openat2 (5.6+) it does this itself with RESOLVE_IN_ROOT and
// RESOLVE_NO_MAGICLINKS; elsewhere walk does the same component by
// component with openat(O_NOFOLLOW) and readlinkat, never handing the
// kernel more than one name at a time. No Go library does either for an
// arbitrary directory (os.Root, Go 1.24, refuses links that leave the root
// instead of resolving them in it), hence this file.

// MaxRead is the most a read through a confined FS returns: a sparse 2 GiB
// proc/cpuinfo in a tree is refused instead of read.
const MaxRead = 16 << 20

// Errors of confined reads; Reason words them.
var (
	// ErrOutsideRoot: the path resolves outside the tree, or through a
	// link to a place the tree does not have.
	ErrOutsideRoot = errors.New("resolves outside the tree (links are followed only inside --root)")
	// ErrNotRegular: a FIFO, socket or device where a file was expected.
	ErrNotRegular = errors.New("is not a regular file (a FIFO, socket or device in a tree is never opened for reading)")
	// ErrTooLarge: a file over MaxRead.
	ErrTooLarge = fmt.Errorf("is larger than the %d MiB read limit", MaxRead>>20)
)

// maxLinks is the kernel's limit on links followed in one resolution.
const maxLinks = 40

// useOpenat2 is cleared after the kernel says it has no openat2; tests
// clear it to prove the walk.
var useOpenat2 = true

// openRoot opens the root directory for resolution.
func (f FS) openRoot() (int, error) {
	return unix.Open(f.root, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
}

// rel turns a host path into a clean path relative to the root ("." for
// the root itself).
func rel(p string) string {
	c := path.Clean("/" + p)
	if c == "/" {
		return "."
	}
	return c[1:]
}

// openIn opens the host path p inside the tree with flags (O_NOFOLLOW is
// not honoured on the last component: links are followed, inside the
// root). O_CLOEXEC and O_NOCTTY are always added; callers add O_NONBLOCK
// when a FIFO must not block.
func (f FS) openIn(p string, flags int) (int, error) {
	rootfd, err := f.openRoot()
	if err != nil {
		return -1, err
	}
	defer unix.Close(rootfd)
	flags |= unix.O_CLOEXEC
	if flags&unix.O_PATH == 0 {
		flags |= unix.O_NOCTTY // openat2 refuses other flags beside O_PATH
	}
	r := rel(f.mapped(p))
	if useOpenat2 {
		fd, err := openat2InRoot(rootfd, r, flags)
		if !errors.Is(err, unix.ENOSYS) {
			return fd, pathErr(p, err, f, r)
		}
		useOpenat2 = false
	}
	fd, _, err := walk(rootfd, r, flags, true)
	return fd, pathErr(p, err, f, r)
}

// openat2InRoot resolves with RESOLVE_IN_ROOT|RESOLVE_NO_MAGICLINKS,
// retrying the EAGAIN the kernel returns when a rename raced it.
func openat2InRoot(rootfd int, r string, flags int) (int, error) {
	how := unix.OpenHow{Flags: uint64(flags), Resolve: unix.RESOLVE_IN_ROOT | unix.RESOLVE_NO_MAGICLINKS}
	for range 8 {
		fd, err := unix.Openat2(rootfd, r, &how)
		if err != unix.EAGAIN && err != unix.EINTR {
			return fd, err
		}
	}
	return -1, unix.EAGAIN
}

// pathErr wraps a resolution error with the host path; a missing file
// reached through a link that pointed out of the tree is ErrOutsideRoot,
// the reason a reader needs.
func pathErr(p string, err error, f FS, r string) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, unix.ENOENT) && f.leavesLexically(r) {
		return &fs.PathError{Op: "open", Path: p, Err: ErrOutsideRoot}
	}
	if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.EXDEV) {
		return &fs.PathError{Op: "open", Path: p, Err: fmt.Errorf("%w: too many or magic links", ErrOutsideRoot)}
	}
	return &fs.PathError{Op: "open", Path: p, Err: err}
}

// leavesLexically reports whether resolving r as a host would (following
// links outside the root) leaves the tree: the reason for a miss.
func (f FS) leavesLexically(r string) bool {
	rootfd, err := f.openRoot()
	if err != nil {
		return false
	}
	defer unix.Close(rootfd)
	_, escaped, _ := walk(rootfd, r, unix.O_PATH, true)
	return escaped
}

// walk resolves r under rootfd component by component, as RESOLVE_IN_ROOT
// does, and opens the result with flags (follow: whether a link as the last
// component is followed). escaped reports a link with an absolute target
// or a ".." that would have climbed above the root: the places where
// following naively would have left the tree.
func walk(rootfd int, r string, flags int, follow bool) (fd int, escaped bool, err error) {
	stack := []int{rootfd} // stack[0] is not ours to close
	defer func() {
		for _, d := range stack[1:] {
			unix.Close(d)
		}
	}()
	todo := splitPath(r)
	links := 0
	for len(todo) > 0 {
		name := todo[0]
		todo = todo[1:]
		cur := stack[len(stack)-1]
		switch name {
		case "", ".":
			if len(todo) == 0 {
				fd, err := unix.Openat(cur, ".", flags|unix.O_CLOEXEC, 0)
				return fd, escaped, err
			}
			continue
		case "..":
			if len(stack) > 1 {
				unix.Close(stack[len(stack)-1])
				stack = stack[:len(stack)-1]
			} else {
				escaped = true
			}
			if len(todo) == 0 {
				fd, err := unix.Openat(stack[len(stack)-1], ".", flags|unix.O_CLOEXEC, 0)
				return fd, escaped, err
			}
			continue
		}
		last := len(todo) == 0
		if last {
			fd, err := unix.Openat(cur, name, flags|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
			if err == nil && !isLinkFd(fd) {
				return fd, escaped, nil
			}
			if err == nil {
				unix.Close(fd) // O_PATH|O_NOFOLLOW opened the link itself
			} else if !isLinkAt(cur, name) {
				return -1, escaped, err
			}
			if !follow {
				return -1, escaped, unix.ELOOP
			}
		}
		// An O_PATH descriptor of a link (flags without O_PATH fail on one).
		var st unix.Stat_t
		nfd, err := unix.Openat(cur, name, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			return -1, escaped, err
		}
		if err := unix.Fstat(nfd, &st); err != nil {
			unix.Close(nfd)
			return -1, escaped, err
		}
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFLNK:
			target, err := readlinkFd(nfd)
			unix.Close(nfd)
			if err != nil {
				return -1, escaped, err
			}
			if links++; links > maxLinks {
				return -1, escaped, unix.ELOOP
			}
			if strings.HasPrefix(target, "/") {
				escaped = true
				for _, d := range stack[1:] {
					unix.Close(d)
				}
				stack = stack[:1]
			}
			todo = append(splitPath(target), todo...)
			if len(todo) == 0 { // a link to "/"
				todo = []string{"."}
			}
		case unix.S_IFDIR:
			stack = append(stack, nfd)
		default:
			unix.Close(nfd)
			if !last {
				return -1, escaped, unix.ENOTDIR
			}
			fd, err := unix.Openat(cur, name, flags|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
			return fd, escaped, err
		}
	}
	fd, err = unix.Openat(stack[len(stack)-1], ".", flags|unix.O_CLOEXEC, 0)
	return fd, escaped, err
}

func isLinkFd(fd int) bool {
	var st unix.Stat_t
	return unix.Fstat(fd, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFLNK
}

func isLinkAt(dirfd int, name string) bool {
	var st unix.Stat_t
	return unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFLNK
}

func splitPath(p string) []string {
	var out []string
	for _, c := range strings.Split(p, "/") {
		if c != "" {
			out = append(out, c)
		}
	}
	return out
}

// readlinkFd reads the target of a link opened with O_PATH|O_NOFOLLOW.
func readlinkFd(fd int) (string, error) {
	buf := make([]byte, 4096)
	n, err := unix.Readlinkat(fd, "", buf)
	if err != nil {
		return "", err
	}
	return string(buf[:n]), nil
}

// readConfined reads a regular file inside the tree, at most MaxRead bytes.
func (f FS) readConfined(p string) ([]byte, error) {
	fd, err := f.openIn(p, unix.O_RDONLY|unix.O_NONBLOCK)
	if err != nil {
		return nil, err
	}
	fh := os.NewFile(uintptr(fd), f.Path(p))
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, &fs.PathError{Op: "read", Path: p, Err: ErrNotRegular}
	}
	if st.Size() > MaxRead {
		return nil, &fs.PathError{Op: "read", Path: p, Err: ErrTooLarge}
	}
	b, err := io.ReadAll(io.LimitReader(fh, MaxRead+1))
	if err != nil {
		return nil, err
	}
	if len(b) > MaxRead {
		return nil, &fs.PathError{Op: "read", Path: p, Err: ErrTooLarge}
	}
	return b, nil
}

// readDirConfined lists a directory inside the tree.
func (f FS) readDirConfined(p string) ([]os.DirEntry, error) {
	fd, err := f.openIn(p, unix.O_RDONLY|unix.O_DIRECTORY)
	if err != nil {
		return nil, err
	}
	fh := os.NewFile(uintptr(fd), f.Path(p))
	defer fh.Close()
	ents, err := fh.ReadDir(-1)
	sortEntries(ents)
	return ents, err
}

// statConfined stats the file p resolves to inside the tree.
func (f FS) statConfined(p string) (fs.FileInfo, error) {
	fd, err := f.openIn(p, unix.O_PATH)
	if err != nil {
		return nil, err
	}
	fh := os.NewFile(uintptr(fd), f.Path(p))
	defer fh.Close()
	return fh.Stat()
}

// resolveConfined returns the host path p resolves to inside the tree.
func (f FS) resolveConfined(p string) (string, error) {
	var names []string
	todo := splitPath(rel(f.mapped(p)))
	links := 0
	for len(todo) > 0 {
		name := todo[0]
		todo = todo[1:]
		switch name {
		case ".":
			continue
		case "..":
			if len(names) > 0 {
				names = names[:len(names)-1]
			}
			continue
		}
		cur := "/" + strings.Join(append(names[:len(names):len(names)], name), "/")
		fi, err := f.lstatParentConfined(names, name)
		if err != nil {
			return "", &fs.PathError{Op: "resolve", Path: p, Err: err}
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			names = append(names, name)
			continue
		}
		if links++; links > maxLinks {
			return "", &fs.PathError{Op: "resolve", Path: p, Err: unix.ELOOP}
		}
		t, err := f.readlinkConfined(cur)
		if err != nil {
			return "", err
		}
		if strings.HasPrefix(t, "/") {
			names = nil
		}
		todo = append(splitPath(t), todo...)
	}
	return "/" + strings.Join(names, "/"), nil
}

// lstatParentConfined lstats name in the directory names (already
// resolved, so it holds no links).
func (f FS) lstatParentConfined(names []string, name string) (fs.FileInfo, error) {
	fd, err := f.openIn("/"+strings.Join(names, "/"), unix.O_PATH|unix.O_DIRECTORY)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return nil, err
	}
	return statInfo{name: name, st: st}, nil
}

// readlinkConfined reads the link p names (its directory resolved inside
// the tree; the link itself not followed).
func (f FS) readlinkConfined(p string) (string, error) {
	c := path.Clean("/" + p)
	dir, base := path.Split(c)
	if base == "" {
		return "", &fs.PathError{Op: "readlink", Path: p, Err: unix.EINVAL}
	}
	fd, err := f.openIn(dir, unix.O_PATH|unix.O_DIRECTORY)
	if err != nil {
		return "", err
	}
	defer unix.Close(fd)
	buf := make([]byte, 4096)
	n, err := unix.Readlinkat(fd, base, buf)
	if err != nil {
		return "", &fs.PathError{Op: "readlink", Path: p, Err: err}
	}
	return string(buf[:n]), nil
}

// writeConfined writes an existing regular file inside the tree in place.
func (f FS) writeConfined(p string, data []byte) error {
	fd, err := f.openIn(p, unix.O_WRONLY|unix.O_NONBLOCK)
	if err != nil {
		return err
	}
	fh := os.NewFile(uintptr(fd), f.Path(p))
	st, err := fh.Stat()
	if err == nil && !st.Mode().IsRegular() {
		err = &fs.PathError{Op: "write", Path: p, Err: ErrNotRegular}
	}
	if err == nil {
		err = fh.Truncate(0)
	}
	if err == nil {
		_, err = fh.Write(data)
	}
	if cerr := fh.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", p, err)
	}
	return nil
}

// statInfo is an fs.FileInfo from a raw stat.
type statInfo struct {
	name string
	st   unix.Stat_t
}

func (s statInfo) Name() string { return s.name }
func (s statInfo) Size() int64  { return s.st.Size }
func (s statInfo) Mode() fs.FileMode {
	m := fs.FileMode(s.st.Mode & 0o777)
	switch s.st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		m |= fs.ModeDir
	case unix.S_IFLNK:
		m |= fs.ModeSymlink
	case unix.S_IFIFO:
		m |= fs.ModeNamedPipe
	case unix.S_IFSOCK:
		m |= fs.ModeSocket
	case unix.S_IFCHR:
		m |= fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFBLK:
		m |= fs.ModeDevice
	}
	return m
}
func (s statInfo) ModTime() time.Time { return time.Unix(s.st.Mtim.Unix()) }
func (s statInfo) IsDir() bool        { return s.Mode().IsDir() }
func (s statInfo) Sys() any           { return &s.st }

// globConfined is filepath.Glob over a tree, listing directories through
// the confined door.
func (f FS) globConfined(pattern string) ([]string, error) {
	if _, err := path.Match(pattern, ""); err != nil {
		return nil, err
	}
	cur := []string{""}
	for _, comp := range splitPath(path.Clean("/" + pattern)) {
		var next []string
		if !strings.ContainsAny(comp, `*?[\`) {
			for _, d := range cur {
				next = append(next, d+"/"+comp)
			}
			cur = next
			continue
		}
		for _, d := range cur {
			ents, err := f.readDirConfined(d + "/")
			if err != nil {
				continue
			}
			for _, e := range ents {
				if ok, _ := path.Match(comp, e.Name()); ok {
					next = append(next, d+"/"+e.Name())
				}
			}
		}
		cur = next
	}
	out := cur[:0]
	for _, p := range cur {
		if p == "" {
			p = "/"
		}
		if _, err := f.statConfined(p); err == nil {
			out = append(out, p)
		}
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}

func sortEntries(ents []os.DirEntry) {
	sort.Slice(ents, func(i, j int) bool { return ents[i].Name() < ents[j].Name() })
}
