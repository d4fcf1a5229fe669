// Package folded is the folded-stack format that connects perflab's flame
// graph tools: one line per unique stack, frames root first separated by
// ';', then a space and a count ("nginx;main;ngx_process_events 42"). It is
// the format of FlameGraph's stackcollapse-*.pl and flamegraph.pl and of
// inferno, so folded files from any of them can be rendered, diffed and
// exported here, and ours there.
//
// The reader is written here (no Go library reads the format); it is
// strict about what a count is and lenient about order and repetition:
// lines may come in any order and a stack seen twice has its counts summed,
// as flamegraph.pl does.
package folded

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"unsafe"
)

// Stack is one unique stack and its count (samples, or the sum of their
// periods).
type Stack struct {
	Frames string // "comm;root;…;leaf"
	Count  uint64
	Before uint64 // differential profiles only: the count before
}

// Profile is a set of unique stacks sorted by Frames (byte order).
//
// A differential profile ("frames before after" lines, as FlameGraph's
// difffolded.pl writes) has Diff set; Count is then the after count.
type Profile struct {
	Stacks []Stack
	Diff   bool
}

// TotalBefore is the sum of the before counts of a differential profile.
func (p *Profile) TotalBefore() uint64 {
	var t uint64
	for _, s := range p.Stacks {
		t += s.Before
	}
	return t
}

// Total is the sum of all counts.
func (p *Profile) Total() uint64 {
	var t uint64
	for _, s := range p.Stacks {
		t += s.Count
	}
	return t
}

// Sort orders the stacks by Frames, merging duplicates.
func (p *Profile) Sort() {
	slices.SortFunc(p.Stacks, func(a, b Stack) int { return strings.Compare(a.Frames, b.Frames) })
	out := p.Stacks[:0]
	for _, s := range p.Stacks {
		if n := len(out); n > 0 && out[n-1].Frames == s.Frames {
			out[n-1].Count += s.Count
			out[n-1].Before += s.Before
			continue
		}
		out = append(out, s)
	}
	p.Stacks = out
}

// WriteTo writes "frames count" lines.
func (p *Profile) WriteTo(w io.Writer) (int64, error) {
	bw := bufio.NewWriterSize(w, 256<<10)
	var n int64
	var num []byte
	for _, s := range p.Stacks {
		k, _ := bw.WriteString(s.Frames)
		bw.WriteByte(' ')
		num = num[:0]
		if p.Diff {
			num = strconv.AppendUint(num, s.Before, 10)
			num = append(num, ' ')
		}
		num = strconv.AppendUint(num, s.Count, 10)
		bw.Write(num)
		if err := bw.WriteByte('\n'); err != nil {
			return n, err
		}
		n += int64(k + len(num) + 2)
	}
	return n, bw.Flush()
}

// FormatError is a line that is not "frames count".
type FormatError struct {
	Line int
	Text string
}

func (e *FormatError) Error() string {
	t := e.Text
	if len(t) > 80 {
		t = t[:80] + "…"
	}
	return fmt.Sprintf("line %d is not folded stacks (\"frames count\"): %q", e.Line, t)
}

// Read parses folded stacks. Blank lines are skipped; any other line must
// end in a space and an unsigned integer count, or two of them (before and
// after) for a differential profile. An input with no stack at
// all is an error, so that an empty profile never renders as a blank graph.
func Read(r io.Reader) (*Profile, error) {
	// One read and one string for the whole input: every stack's Frames is
	// a substring of it, so parsing allocates nothing per line.
	all, err := readAll(r)
	if err != nil {
		return nil, fmt.Errorf("reading folded stacks: %w", err)
	}
	if len(all) == 0 {
		return nil, fmt.Errorf("no stacks in input (expected lines like \"comm;main;work 42\")")
	}
	// all is never written again, so the string can share its memory
	// instead of copying what may be tens of megabytes.
	text := unsafe.String(&all[0], len(all))
	p := &Profile{Stacks: make([]Stack, 0, strings.Count(text, "\n")+1)}
	// Folded files are usually sorted and unique (every folder writes them
	// so); then no lookup is needed. The index is built only once a line
	// is out of order, to merge duplicates.
	var idx map[string]int
	for line := 1; len(text) > 0; line++ {
		b := text
		if i := strings.IndexByte(text, '\n'); i >= 0 {
			b, text = text[:i], text[i+1:]
		} else {
			text = ""
		}
		if n := len(b); n > 0 && b[n-1] == '\r' {
			b = b[:n-1]
		}
		if len(b) == 0 {
			continue
		}
		frames, count, ok := splitLine(b)
		if !ok {
			return nil, &FormatError{Line: line, Text: b}
		}
		var before uint64
		if f2, c2, ok := splitTrailingCount(frames); ok {
			// "frames before after": a differential profile.
			frames, before, p.Diff = f2, c2, true
		}
		if idx == nil && len(p.Stacks) > 0 && frames <= p.Stacks[len(p.Stacks)-1].Frames {
			idx = make(map[string]int, 2*len(p.Stacks))
			for i, s := range p.Stacks {
				idx[s.Frames] = i
			}
		}
		if idx != nil {
			if i, ok := idx[frames]; ok {
				p.Stacks[i].Count += count
				p.Stacks[i].Before += before
				continue
			}
			idx[frames] = len(p.Stacks)
		}
		p.Stacks = append(p.Stacks, Stack{Frames: frames, Count: count, Before: before})
	}
	if len(p.Stacks) == 0 {
		return nil, fmt.Errorf("no stacks in input (expected lines like \"comm;main;work 42\")")
	}
	if idx != nil {
		p.Sort()
	}
	return p, nil
}

// readAll reads r whole, sizing the buffer from the file size when r is a
// file, so a large input is not copied while the buffer grows.
func readAll(r io.Reader) ([]byte, error) {
	if f, ok := r.(interface{ Stat() (os.FileInfo, error) }); ok {
		if st, err := f.Stat(); err == nil && st.Mode().IsRegular() && st.Size() > 0 {
			buf := bytes.NewBuffer(make([]byte, 0, st.Size()+512))
			_, err := buf.ReadFrom(r)
			return buf.Bytes(), err
		}
	}
	return io.ReadAll(r)
}

// splitLine is SplitLine on a string.
func splitLine(b string) (string, uint64, bool) {
	sp := strings.LastIndexByte(b, ' ')
	if sp <= 0 {
		return "", 0, false
	}
	c, ok := parseCount(b[sp+1:])
	return b[:sp], c, ok
}

// parseCount parses an unsigned decimal count.
func parseCount(s string) (uint64, bool) {
	if len(s) == 0 || len(s) > 20 {
		return 0, false
	}
	var v uint64
	for i := 0; i < len(s); i++ {
		c := s[i]
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

// splitTrailingCount is splitLine for the before count of a differential
// line; it looks only at the end of frames, which usually ends in a name.
func splitTrailingCount(frames string) (string, uint64, bool) {
	j := len(frames)
	for j > 0 && frames[j-1] >= '0' && frames[j-1] <= '9' {
		j--
	}
	if j == len(frames) || j < 2 || frames[j-1] != ' ' {
		return "", 0, false
	}
	c, ok := parseCount(frames[j:])
	if !ok {
		return "", 0, false
	}
	return frames[:j-1], c, true
}

// SplitLine splits "frames count" at the last space; frames keep any
// other spaces, including trailing ones, as flamegraph.pl keeps them.
func SplitLine(b []byte) (frames []byte, count uint64, ok bool) {
	sp := bytes.LastIndexByte(b, ' ')
	if sp <= 0 {
		return nil, 0, false
	}
	c, ok := parseCount(string(b[sp+1:]))
	if !ok {
		return nil, 0, false
	}
	return b[:sp], c, true
}
