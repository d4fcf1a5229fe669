package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// checkWritable refuses, before SQLite opens it, a database that Open could
// not write. SQLite would otherwise fall back to reading silently and fail
// only at the first write (or leave a reader's -wal and -shm files behind),
// so a command that stores runs would measure for minutes and then fail.
//
// access(2) judges the file, its -wal and -shm and, when SQLite must create
// any of them, the directory, the way the kernel will judge the write: it
// reports EROFS on a read-only mount even for root. Permission bits do not
// stop root, so a database file without any write bit (chmod a-w, the
// usual way to share one read-only) is refused too: writing into it as
// root would defeat what its owner asked for.
func checkWritable(path string) error {
	missing := false
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		st, err := os.Stat(p)
		if errors.Is(err, fs.ErrNotExist) {
			missing = true
			continue
		}
		if err != nil {
			return nil // SQLite reports what stat could not
		}
		if p == path && st.Mode().Perm()&0o222 == 0 {
			return fmt.Errorf("%w: %s has no write permission (mode %04o)", ErrReadOnly, path, st.Mode().Perm())
		}
		if err := unix.Access(p, unix.W_OK); err != nil {
			return readOnlyErr(path, p, err)
		}
	}
	if !missing {
		return nil
	}
	// SQLite creates the database, its -wal and its -shm beside it.
	dir := filepath.Dir(path)
	if err := unix.Access(dir, unix.W_OK); err != nil {
		return readOnlyErr(path, dir, err)
	}
	return nil
}

// readOnlyErr names why p, the database at path or a file SQLite needs
// beside it, cannot be written.
func readOnlyErr(path, p string, err error) error {
	what := p
	if st, serr := os.Stat(p); serr == nil && st.IsDir() {
		what = "its directory " + p
	}
	switch {
	case errors.Is(err, unix.EROFS):
		return fmt.Errorf("%w: %s is on a read-only filesystem", ErrReadOnly, path)
	case errors.Is(err, unix.EACCES), errors.Is(err, unix.EPERM):
		if p == path {
			return fmt.Errorf("%w: no permission to write %s", ErrReadOnly, path)
		}
		return fmt.Errorf("%w: no permission to write %s, which SQLite needs for %s", ErrReadOnly, what, path)
	}
	return fmt.Errorf("%w: %s: %v", ErrReadOnly, what, err)
}

// writeErr turns SQLite's refusal to write into ErrReadOnly, for a
// database that checkWritable could not foresee to be read-only (an ACL or
// security module denying the write, a mount remounted read-only since).
func (s *Store) writeErr(err error) error {
	if err == nil || errors.Is(err, ErrReadOnly) {
		return err
	}
	if _, ok := s.d.(pgDialect); ok {
		return pgWriteErr(s.Path, err)
	}
	var coded interface{ Code() int }
	if errors.As(err, &coded) && coded.Code()&0xff == sqliteReadOnly {
		return fmt.Errorf("%w: %s cannot be written: %v", ErrReadOnly, s.Path, err)
	}
	return err
}

// refuseWrite is the error of a write through a store opened with
// OpenReadOnly, which SQLite would report only as "attempt to write a
// readonly database".
func (s *Store) refuseWrite(what string) error {
	if !s.readOnly {
		return nil
	}
	return fmt.Errorf("%w: %s is open for reading only, and %s writes (open it with store.Open)", ErrReadOnly, s.Path, what)
}
