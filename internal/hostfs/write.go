package hostfs

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"

	"golang.org/x/sys/unix"
)

// OpenDir opens a directory of the host (in a tree, resolved inside it) for
// the *at calls that create, replace and remove files in it without
// following a link planted at their names.
func (f FS) OpenDir(p string) (*os.File, error) {
	if f.Live() {
		fd, err := unix.Open(f.Path(p), unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return nil, &fs.PathError{Op: "open", Path: p, Err: err}
		}
		return os.NewFile(uintptr(fd), f.Path(p)), nil
	}
	fd, err := f.openIn(p, unix.O_RDONLY|unix.O_DIRECTORY)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), f.Path(p)), nil
}

// MkdirAll creates a directory and its parents (in a tree, inside it).
func (f FS) MkdirAll(p string, perm os.FileMode) error {
	if f.Live() {
		return os.MkdirAll(f.Path(p), perm)
	}
	cur := "/"
	for _, c := range splitPath(rel(p)) {
		next := path.Join(cur, c)
		if st, err := f.Stat(next); err == nil {
			if !st.IsDir() {
				return &fs.PathError{Op: "mkdir", Path: next, Err: unix.ENOTDIR}
			}
			cur = next
			continue
		}
		d, err := f.OpenDir(cur)
		if err != nil {
			return err
		}
		err = unix.Mkdirat(int(d.Fd()), c, uint32(perm.Perm()))
		d.Close()
		if err != nil && !errors.Is(err, unix.EEXIST) {
			return &fs.PathError{Op: "mkdir", Path: next, Err: err}
		}
		cur = next
	}
	return nil
}

// ReplaceAt writes name in the open directory d atomically: an exclusive
// temp file (O_CREAT|O_EXCL|O_NOFOLLOW: a planted file or link at any name
// is never opened), fsync, rename over name, fsync the directory.
func ReplaceAt(d *os.File, name string, data []byte, perm os.FileMode) error {
	dfd := int(d.Fd())
	var tmp string
	var fd int
	for range 16 {
		var r [8]byte
		_, _ = rand.Read(r[:])
		tmp = "." + name + "." + hex.EncodeToString(r[:]) + ".tmp"
		var err error
		fd, err = unix.Openat(dfd, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, uint32(perm.Perm()))
		if err == nil {
			break
		}
		if !errors.Is(err, unix.EEXIST) {
			return fmt.Errorf("create a temp file in %s: %w", d.Name(), err)
		}
		fd = -1
	}
	if fd < 0 {
		return fmt.Errorf("create a temp file in %s: too many existing temp files", d.Name())
	}
	fh := os.NewFile(uintptr(fd), tmp)
	_, err := fh.Write(data)
	if err == nil {
		err = fh.Sync()
	}
	if cerr := fh.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = unix.Renameat(dfd, tmp, dfd, name)
	}
	if err != nil {
		_ = unix.Unlinkat(dfd, tmp, 0)
		return fmt.Errorf("write %s/%s: %w", d.Name(), name, err)
	}
	return d.Sync()
}

// Replace writes a whole file of the host atomically (ReplaceAt in its
// directory, resolved inside a tree).
func (f FS) Replace(p string, data []byte, perm os.FileMode) error {
	dir, name := path.Split(path.Clean("/" + p))
	if name == "" {
		return &fs.PathError{Op: "write", Path: p, Err: unix.EISDIR}
	}
	d, err := f.OpenDir(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return ReplaceAt(d, name, data, perm)
}

// Remove removes a file of the host (its directory resolved inside a tree;
// a link at the name is removed, never followed).
func (f FS) Remove(p string) error {
	dir, name := path.Split(path.Clean("/" + p))
	d, err := f.OpenDir(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := unix.Unlinkat(int(d.Fd()), name, 0); err != nil {
		return &fs.PathError{Op: "remove", Path: p, Err: err}
	}
	return d.Sync()
}
