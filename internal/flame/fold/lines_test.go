package fold

import (
	"bytes"
	"strings"
	"testing"
)

// TestByteClassMatchesDefinitions: lineKey's table says what isHex and
// the blank test say, for every byte.
func TestByteClassMatchesDefinitions(t *testing.T) {
	for c := range 256 {
		b := byte(c)
		if got, want := byteClass[b] == classHex, isHex(b); got != want {
			t.Errorf("byte %#x: hex %v, want %v", b, got, want)
		}
		if got, want := byteClass[b] == classBlank, b == '\t' || b == ' '; got != want {
			t.Errorf("byte %#x: blank %v, want %v", b, got, want)
		}
	}
}

// TestPaddedAddrAgreesWithSlowScan: the eight-bytes-at-a-time reading of
// a frame line's prefix gives lineKeySlow's answer wherever it answers,
// over every prefix shape (blank runs, address lengths, stray bytes) and
// with and without --addrs.
func TestPaddedAddrAgreesWithSlowScan(t *testing.T) {
	alphabet := []byte{' ', '\t', '0', '9', 'a', 'f', 'A', 'F', 'g', 'x', '/', ':', '@', '`', 0x7f, 0x80, 0xe0}
	rest := " sym+0x1 (mod)"
	seen := 0
	check := func(line []byte) {
		for _, addrs := range []bool{false, true} {
			f := &folder{opt: Options{Addrs: addrs}}
			off, ok := f.lineKey(line)
			wo, wok := f.lineKeySlow(line)
			if ok != wok || off != wo {
				t.Fatalf("%q (addrs %v): lineKey %d,%v, slow scan %d,%v", line, addrs, off, ok, wo, wok)
			}
		}
		if _, ok := paddedAddr(line); ok {
			seen++
		}
	}
	// Every address length right-aligned in 16 columns, then one byte
	// changed to each byte of the alphabet, at every position.
	for n := 0; n <= 17; n++ {
		base := []byte("\t" + strings.Repeat(" ", max(0, 16-n)) + strings.Repeat("7", n) + rest)
		check(base)
		for pos := range addrEnd + 2 {
			for _, c := range alphabet {
				line := bytes.Clone(base)
				line[pos] = c
				check(line)
			}
		}
	}
	for n := range 20 {
		check([]byte("\t" + strings.Repeat(" ", n)))
	}
	if seen < 16 {
		t.Fatalf("the fast path took only %d lines", seen)
	}
}
