package termfmt

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"os"
)

// Safe wraps w so that control characters in what is written are shown,
// not interpreted: labels, host names and tree values come from stores,
// imports and trees that others wrote, and an escape sequence in one must
// not retitle, clear or rewrite the user's terminal. Kept: newline, tab,
// carriage return (progress lines) and perflab's own styles (CSI SGR "m"
// and erase-line "K" with numeric parameters). Everything else is written
// visibly: ESC as ^[, other C0 controls as ^X, DEL as ^?, C1 controls as
// \u0080…\u009f. JSON, Markdown, HTML and Prometheus output hold none of
// these, so every output goes through it unchanged.
func Safe(w io.Writer) io.Writer {
	if w == nil {
		return nil
	}
	if _, ok := w.(safeWriter); ok {
		return w
	}
	return safeWriter{w}
}

type safeWriter struct{ w io.Writer }

// Unwrap returns the writer underneath (IsTTY looks through it).
func (s safeWriter) Unwrap() io.Writer { return s.w }

func (s safeWriter) Write(p []byte) (int, error) {
	if _, err := s.w.Write(Sanitize(p)); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Sanitize returns p with control characters made visible (see Safe).
func Sanitize(p []byte) []byte {
	if clean(p) {
		return p
	}
	var b bytes.Buffer
	b.Grow(len(p) + 16)
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c == '\n' || c == '\t' || c == '\r':
			b.WriteByte(c)
		case c == 0x1b:
			if n := styleLen(p[i:]); n > 0 {
				b.Write(p[i : i+n])
				i += n - 1
			} else {
				b.WriteString("^[")
			}
		case c < 0x20:
			b.WriteByte('^')
			b.WriteByte(c + 0x40)
		case c == 0x7f:
			b.WriteString("^?")
		case c == 0xc2 && i+1 < len(p) && p[i+1] >= 0x80 && p[i+1] <= 0x9f:
			fmt.Fprintf(&b, "\\u%04x", p[i+1])
			i++
		default:
			b.WriteByte(c)
		}
	}
	return b.Bytes()
}

// clean reports whether p has nothing Sanitize would change. Every byte
// perflab prints passes here (a flame fold writes ~15 MB), so it reads
// 32 bytes at a time and looks at single bytes only in a block that is
// not all printable ASCII (newlines, tabs, UTF-8, DEL, controls).
func clean(p []byte) bool {
	i := 0
	for ; i+32 <= len(p); i += 32 {
		b := p[i : i+32 : i+32]
		m := suspect(binary.LittleEndian.Uint64(b)) | suspect(binary.LittleEndian.Uint64(b[8:])) |
			suspect(binary.LittleEndian.Uint64(b[16:])) | suspect(binary.LittleEndian.Uint64(b[24:]))
		if m == 0 {
			continue
		}
		for j := i; j < i+32; j++ {
			if dirty(p, j) {
				return false
			}
		}
	}
	for ; i < len(p); i++ {
		if dirty(p, i) {
			return false
		}
	}
	return true
}

// dirty reports whether Sanitize changes the byte at p[i].
func dirty(p []byte, i int) bool {
	c := p[i]
	return (c < 0x20 && c != '\n' && c != '\t' && c != '\r') || c == 0x7f || (c == 0xc2 && i+1 < len(p) && p[i+1] >= 0x80 && p[i+1] <= 0x9f)
}

// suspect is non-zero when word w holds a byte outside 0x20…0x7e: below
// 0x20 (the subtraction's borrow only ever runs past a byte that is
// itself below 0x20, so "holds one" is exact), or from 0x7f up (adding
// one sets the high bit of 0x7f; the carry out of 0xff is past a byte
// whose own high bit is set).
func suspect(w uint64) uint64 {
	const low, high = 0x0101010101010101, 0x8080808080808080
	return ((w-0x20*low)&^w | (w + low) | w) & high
}

// styleLen is the length of the CSI sequence at p if it is one perflab
// writes itself (ESC [ digits/semicolons m or K), else 0.
func styleLen(p []byte) int {
	if len(p) < 3 || p[1] != '[' {
		return 0
	}
	for j := 2; j < len(p) && j < 24; j++ {
		switch c := p[j]; {
		case c >= '0' && c <= '9' || c == ';':
		case c == 'm' || c == 'K':
			return j + 1
		default:
			return 0
		}
	}
	return 0
}

// isFile unwraps Safe for the TTY checks.
func isFile(w io.Writer) (*os.File, bool) {
	for {
		switch v := w.(type) {
		case *os.File:
			return v, true
		case interface{ Unwrap() io.Writer }:
			w = v.Unwrap()
		default:
			return nil, false
		}
	}
}
