package fold

import (
	"errors"
	"os"
	"runtime/debug"
	"syscall"
)

// mapFile maps a regular file read-only, so that folding it reads the
// page cache in place: no copy into a buffer, and workers take blocks
// without waiting for one another's reads. ok is false (and the caller
// reads f instead) for pipes, empty or huge files, or when mmap fails.
func mapFile(f *os.File) (data []byte, unmap func(), ok bool) {
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() || st.Size() <= 0 || st.Size() > maxMap {
		return nil, nil, false
	}
	off, err := f.Seek(0, 1) // what was already read is not the input's
	if err != nil || off != 0 {
		return nil, nil, false
	}
	data, err = syscall.Mmap(int(f.Fd()), 0, int(st.Size()), syscall.PROT_READ, syscall.MAP_PRIVATE)
	if err != nil {
		return nil, nil, false
	}
	return data, func() { _ = syscall.Munmap(data) }, true
}

// maxMap bounds the mapping (the address space of a 32-bit build, and
// sanity); larger inputs are read.
const maxMap = 1 << 40

// errShrunk is returned when a mapped input is truncated while folding:
// reading past its new end raises SIGBUS, which guardFaults and
// recoverFault turn into this error.
var errShrunk = errors.New("the input file shrank while it was being folded (is something still writing it?)")

// guardFaults runs fn, returning errShrunk if it faulted on the mapping.
func guardFaults(fn func()) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer recoverFault(&err)
	fn()
	return nil
}

// recoverFault turns a memory fault panic into errShrunk; any other
// panic continues.
func recoverFault(err *error) {
	r := recover()
	if r == nil {
		return
	}
	if _, ok := r.(interface{ Addr() uintptr }); ok {
		*err = errShrunk
		return
	}
	panic(r)
}

// releasePages drops the whole pages of b, a part of the mapping mem,
// from this process's resident set (madvise MADV_DONTNEED). Only for a
// file mapping: on anonymous memory the same call would zero the pages.
func releasePages(mem, b []byte) {
	if len(b) == 0 {
		return
	}
	page := os.Getpagesize()
	off := cap(mem) - cap(b) // b's offset in mem
	lo := (off + page - 1) / page * page
	hi := (off + len(b)) / page * page
	if hi > lo {
		_ = syscall.Madvise(mem[lo:hi], syscall.MADV_DONTNEED)
	}
}
