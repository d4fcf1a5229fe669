package fold

import (
	"unicode"
	"unicode/utf8"
)

// The reference folder decodes each line as UTF-8, replacing invalid
// sequences, and trims Unicode white space. These helpers do the same on
// bytes, with an ASCII fast path, so that odd input folds identically.

// isSpaceByte reports ASCII white space as Unicode defines it.
func isSpaceByte(c byte) bool {
	return c == ' ' || (c >= '\t' && c <= '\r')
}

// trimRight removes trailing Unicode white space.
func trimRight(b []byte) []byte {
	for len(b) > 0 {
		c := b[len(b)-1]
		if c < utf8.RuneSelf {
			if !isSpaceByte(c) {
				return b
			}
			b = b[:len(b)-1]
			continue
		}
		r, n := utf8.DecodeLastRune(b)
		if !unicode.IsSpace(r) {
			return b
		}
		b = b[:len(b)-n]
	}
	return b
}

// trimLeft removes leading Unicode white space.
func trimLeft(b []byte) []byte {
	for len(b) > 0 {
		c := b[0]
		if c < utf8.RuneSelf {
			if !isSpaceByte(c) {
				return b
			}
			b = b[1:]
			continue
		}
		r, n := utf8.DecodeRune(b)
		if !unicode.IsSpace(r) {
			return b
		}
		b = b[n:]
	}
	return b
}

func trim(b []byte) []byte { return trimLeft(trimRight(b)) }

// validUTF8 returns b if it is valid UTF-8, else a copy in scratch where
// every maximal invalid subsequence is replaced by U+FFFD (the "substitution
// of maximal subparts" practice that the reference's lossy decoding uses,
// which differs from collapsing a whole run into one replacement).
func validUTF8(b []byte, scratch *[]byte) []byte {
	ascii := true
	for _, c := range b {
		if c >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii || utf8.Valid(b) {
		return b
	}
	out := (*scratch)[:0]
	for i := 0; i < len(b); {
		c := b[i]
		if c < utf8.RuneSelf {
			out = append(out, c)
			i++
			continue
		}
		r, n := utf8.DecodeRune(b[i:])
		if r != utf8.RuneError || n > 1 {
			out = append(out, b[i:i+n]...)
			i += n
			continue
		}
		out = append(out, "\uFFFD"...)
		i += invalidPrefixLen(b[i:])
	}
	*scratch = out
	return out
}

// invalidPrefixLen is the length of the maximal subpart at the start of b:
// the lead byte plus the continuation bytes that could still have begun a
// valid sequence. It is at least 1.
func invalidPrefixLen(b []byte) int {
	c := b[0]
	var need int
	lo, hi := byte(0x80), byte(0xBF)
	switch {
	case c >= 0xC2 && c <= 0xDF:
		need = 1
	case c == 0xE0:
		need, lo = 2, 0xA0
	case c >= 0xE1 && c <= 0xEC, c == 0xEE, c == 0xEF:
		need = 2
	case c == 0xED:
		need, hi = 2, 0x9F
	case c == 0xF0:
		need, lo = 3, 0x90
	case c >= 0xF1 && c <= 0xF3:
		need = 3
	case c == 0xF4:
		need, hi = 3, 0x8F
	default:
		return 1
	}
	n := 1
	for k := 0; k < need && n < len(b); k++ {
		d := b[n]
		if d < lo || d > hi {
			break
		}
		lo, hi = 0x80, 0xBF
		n++
	}
	return n
}

// parsePeriod parses an unsigned decimal as the reference does: an
// optional '+', at least one digit, no overflow.
func parsePeriod(b []byte) (uint64, bool) {
	if len(b) > 0 && b[0] == '+' {
		b = b[1:]
	}
	if len(b) == 0 {
		return 0, false
	}
	var v uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		d := uint64(c - '0')
		if v > (^uint64(0)-d)/10 {
			return 0, false
		}
		v = v*10 + d
	}
	return v, true
}

func hasPrefix(b []byte, p string) bool {
	return len(b) >= len(p) && string(b[:len(p)]) == p
}

func hasSuffix(b []byte, s string) bool {
	return len(b) >= len(s) && string(b[len(b)-len(s):]) == s
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}
