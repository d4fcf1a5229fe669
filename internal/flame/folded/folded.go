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
	"slices"
	"strconv"
	"strings"
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
	p := &Profile{}
	idx := map[string]int{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	line := 0
	for sc.Scan() {
		line++
		b := bytes.TrimRight(sc.Bytes(), "\r")
		if len(b) == 0 {
			continue
		}
		frames, count, ok := SplitLine(b)
		if !ok {
			return nil, &FormatError{Line: line, Text: string(b)}
		}
		var before uint64
		if f2, c2, ok := SplitLine(frames); ok && len(f2) > 0 {
			// "frames before after": a differential profile.
			frames, before, p.Diff = f2, c2, true
		}
		if i, ok := idx[string(frames)]; ok {
			p.Stacks[i].Count += count
			p.Stacks[i].Before += before
			continue
		}
		idx[string(frames)] = len(p.Stacks)
		p.Stacks = append(p.Stacks, Stack{Frames: string(frames), Count: count, Before: before})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading folded stacks: %w", err)
	}
	if len(p.Stacks) == 0 {
		return nil, fmt.Errorf("no stacks in input (expected lines like \"comm;main;work 42\")")
	}
	p.Sort()
	return p, nil
}

// SplitLine splits "frames count" at the last space; frames keep any
// other spaces, including trailing ones, as flamegraph.pl keeps them.
func SplitLine(b []byte) (frames []byte, count uint64, ok bool) {
	sp := bytes.LastIndexByte(b, ' ')
	if sp <= 0 {
		return nil, 0, false
	}
	c, err := strconv.ParseUint(string(b[sp+1:]), 10, 64)
	if err != nil {
		return nil, 0, false
	}
	return b[:sp], c, true
}
