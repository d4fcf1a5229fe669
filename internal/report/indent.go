package report

import (
	"bytes"
	"encoding/json"
	"io"
)

// writeIndented writes v as json.Encoder with SetIndent("", "  ") does —
// byte for byte, final newline included — but indents the compact
// document with indentTo instead of json.Indent.
//
// Why not the Encoder: indenting is a second pass over the whole
// document through encoding/json's scanner, a state machine called per
// byte, into a second buffer as large as the document. On the fleet
// report of 10,000 hosts (84 MB of JSON) that pass took 1.1 of the
// command's 4.6 CPU seconds, and the two buffers' garbage another share
// of its collector's (docs/performance.md, "Fleet store"). indentTo reads
// json.Marshal's output only, which is valid and has no space outside
// strings, so it needs no scanner: it copies strings through and breaks
// lines at the six punctuation bytes, writing as it goes.
// FuzzIndentTo holds it to json.Indent.
func writeIndented(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return indentTo(w, b, "  ")
}

// punct marks the bytes indentTo acts on outside strings.
var punct = [256]bool{'"': true, '{': true, '}': true, '[': true, ']': true, ',': true, ':': true}

// closingQuote is the index of the quote that ends the string whose
// contents start at i in src (the last index when src ends first).
func closingQuote(src []byte, i int) int {
	for {
		k := bytes.IndexByte(src[i:], '"')
		if k < 0 {
			return len(src) - 1
		}
		q := i + k
		n := 0 // backslashes before it: an odd number escapes it
		for p := q - 1; p >= i && src[p] == '\\'; p-- {
			n++
		}
		if n%2 == 0 {
			return q
		}
		i = q + 1
	}
}

// indentBuf is how much indented output indentTo gathers per write.
const indentBuf = 64 << 10

// indentTo writes src, the compact JSON json.Marshal writes, indented as
// json.Indent(dst, src, "", indent) indents it, then a newline.
func indentTo(w io.Writer, src []byte, indent string) error {
	out := make([]byte, 0, indentBuf+1024)
	depth := 0
	open := false         // after '{' or '[': the newline waits, so that {} and [] stay on one line
	lines := []byte("\n") // a newline and the indent of every depth so far
	newline := func() {
		for len(lines) < 1+depth*len(indent) {
			lines = append(lines, indent...)
		}
		out = append(out, lines[:1+depth*len(indent)]...)
	}
	for i := 0; i < len(src); i++ {
		c := src[i]
		if open && c != '}' && c != ']' {
			open = false
			depth++
			newline()
		}
		switch c {
		case '"':
			j := closingQuote(src, i+1)
			out = append(out, src[i:j+1]...)
			i = j
		case '{', '[':
			open = true
			out = append(out, c)
		case ',':
			out = append(out, c)
			newline()
		case ':':
			out = append(out, c, ' ')
		case '}', ']':
			if open {
				open = false
			} else {
				depth--
				newline()
			}
			out = append(out, c)
		default: // a number or literal: up to the next punctuation
			j := i + 1
			for j < len(src) && !punct[src[j]] {
				j++
			}
			out = append(out, src[i:j]...)
			i = j - 1
		}
		if len(out) >= indentBuf {
			if _, err := w.Write(out); err != nil {
				return err
			}
			out = out[:0]
		}
	}
	out = append(out, '\n')
	_, err := w.Write(out)
	return err
}
