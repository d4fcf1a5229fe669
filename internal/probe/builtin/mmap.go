package builtin

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// hugePageSize is the transparent huge page size on x86-64 and on arm64
// with 4 KiB base pages.
const hugePageSize = 2 << 20

// region is an anonymous mapping outside the Go heap: the garbage collector
// never scans or moves it, its start is page aligned (O_DIRECT needs that),
// and madvise can choose its page size.
type region struct {
	raw []byte // the whole mapping, for munmap
	buf []byte // the usable, aligned part
}

// mapAnon maps size bytes of private anonymous memory. With align2M the
// usable part starts on a 2 MiB boundary, so that every 2 MiB of it can be
// one huge page. hugeAdvice is "" (leave the system default),
// "huge" (MADV_HUGEPAGE) or "nohuge" (MADV_NOHUGEPAGE); it is applied before
// the first touch, which is when the page size is chosen.
func mapAnon(size int64, align2M bool, hugeAdvice string) (*region, error) {
	if size <= 0 {
		return nil, fmt.Errorf("mmap: size %d", size)
	}
	total := size
	if align2M {
		total += hugePageSize
	}
	raw, err := unix.Mmap(-1, 0, int(total), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return nil, fmt.Errorf("mmap %s: %w", fmtBytes(size), err)
	}
	r := &region{raw: raw, buf: raw[:size]}
	if align2M {
		addr := uintptr(unsafe.Pointer(&raw[0]))
		off := (hugePageSize - int(addr%hugePageSize)) % hugePageSize
		r.buf = raw[off : off+int(size)]
	}
	if hugeAdvice != "" {
		adv := unix.MADV_HUGEPAGE
		if hugeAdvice == "nohuge" {
			adv = unix.MADV_NOHUGEPAGE
		}
		if err := unix.Madvise(r.buf, adv); err != nil {
			_ = r.unmap()
			return nil, fmt.Errorf("madvise(%s): %w", hugeAdvice, err)
		}
	}
	return r, nil
}

// unmap releases the mapping; safe on nil and twice.
func (r *region) unmap() error {
	if r == nil || r.raw == nil {
		return nil
	}
	err := unix.Munmap(r.raw)
	r.raw, r.buf = nil, nil
	return err
}

// words views b (8-byte aligned, length a multiple of 8) as uint64s.
func words(b []byte) []uint64 {
	if len(b) < 8 {
		return nil
	}
	return unsafe.Slice((*uint64)(unsafe.Pointer(&b[0])), len(b)/8)
}

// touchPages writes one byte in every 4 KiB page of b, faulting it in.
func touchPages(b []byte) {
	for i := 0; i < len(b); i += 4096 {
		b[i] = 1
	}
}

// unsafeUint32s views b (4-byte aligned) as uint32s.
func unsafeUint32s(b []byte) []uint32 {
	if len(b) < 4 {
		return nil
	}
	return unsafe.Slice((*uint32)(unsafe.Pointer(&b[0])), len(b)/4)
}
