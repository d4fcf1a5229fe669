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
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"unsafe"
)

// Stack is one unique stack and its count (samples, or the sum of their
// periods), in units of 10^-Scale of its Profile.
type Stack struct {
	Frames string // "comm;root;…;leaf"
	Count  uint64
	Before uint64 // differential profiles only: the count before
}

// MaxScale is the most decimal places of a fractional count that are kept;
// further digits are dropped.
const MaxScale = 6

// Profile is a set of unique stacks sorted by Frames (byte order).
//
// A differential profile ("frames before after" lines, as FlameGraph's
// difffolded.pl writes) has Diff set; Count is then the after count.
type Profile struct {
	Stacks []Stack
	Diff   bool
	// Scale is the number of decimal places of the counts: a count c
	// stands for c / 10^Scale. Folded files with fractional counts
	// ("main;f 0.25", which flamegraph.pl and difffolded.pl accept) are
	// read exactly this way, as integers of their finest decimal place;
	// folders write integer counts, and then Scale is 0.
	Scale int
	// Skipped describes the lines that were not folded stacks and were
	// left out, as flamegraph.pl and inferno leave them out.
	Skipped Skipped
}

// Skipped counts the lines of an input that were not folded stacks.
type Skipped struct {
	Lines int    // how many
	First int    // the first one's line number (1-based)
	Text  string // the first one, cut to 80 bytes
}

// MaxCount is where counts and their sums saturate: two counts whose sum
// passes int64 must not render as a negative frame.
const MaxCount = math.MaxInt64

// Add is a + b saturated at MaxCount.
func Add(a, b uint64) uint64 {
	if a > MaxCount-min(b, MaxCount) {
		return MaxCount
	}
	return a + b
}

// TotalBefore is the sum of the before counts of a differential profile.
func (p *Profile) TotalBefore() uint64 {
	var t uint64
	for _, s := range p.Stacks {
		t = Add(t, s.Before)
	}
	return t
}

// Total is the sum of all counts.
func (p *Profile) Total() uint64 {
	var t uint64
	for _, s := range p.Stacks {
		t = Add(t, s.Count)
	}
	return t
}

// Sort orders the stacks by Frames, merging duplicates.
func (p *Profile) Sort() {
	slices.SortFunc(p.Stacks, func(a, b Stack) int { return strings.Compare(a.Frames, b.Frames) })
	out := p.Stacks[:0]
	for _, s := range p.Stacks {
		if n := len(out); n > 0 && out[n-1].Frames == s.Frames {
			out[n-1].Count = Add(out[n-1].Count, s.Count)
			out[n-1].Before = Add(out[n-1].Before, s.Before)
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
			num = AppendCount(num, s.Before, p.Scale)
			num = append(num, ' ')
		}
		num = AppendCount(num, s.Count, p.Scale)
		bw.Write(num)
		if err := bw.WriteByte('\n'); err != nil {
			return n, err
		}
		n += int64(k + len(num) + 2)
	}
	return n, bw.Flush()
}

// AppendCount appends count c of a profile of the given scale in decimal:
// 12345 at scale 2 is "123.45", trailing zeros of the fraction omitted.
func AppendCount(b []byte, c uint64, scale int) []byte {
	if scale <= 0 {
		return strconv.AppendUint(b, c, 10)
	}
	div := pow10[scale]
	b = strconv.AppendUint(b, c/div, 10)
	frac := c % div
	if frac == 0 {
		return b
	}
	b = append(b, '.')
	for d := div / 10; d > 0 && frac > 0; d /= 10 {
		b = append(b, byte('0'+frac/d))
		frac %= d
	}
	return b
}

// Value is count c of a profile of the given scale as a number.
func Value(c uint64, scale int) float64 {
	if scale <= 0 {
		return float64(c)
	}
	return float64(c) / float64(pow10[scale])
}

var pow10 = [...]uint64{1, 10, 100, 1000, 10000, 100000, 1000000}

// Pow10 is 10^n for 0 <= n <= MaxScale: the count that stands for 1 at
// scale n.
func Pow10(n int) uint64 { return pow10[n] }

// Rescale changes p's scale to s (>= p.Scale, <= MaxScale), multiplying
// every count; it reports false, changing nothing, if a count would
// overflow.
func (p *Profile) Rescale(s int) bool {
	if s <= p.Scale {
		return s == p.Scale
	}
	if s > MaxScale {
		return false
	}
	m := pow10[s-p.Scale]
	limit := ^uint64(0) / m
	for _, st := range p.Stacks {
		if st.Count > limit || st.Before > limit {
			return false
		}
	}
	for i := range p.Stacks {
		p.Stacks[i].Count *= m
		p.Stacks[i].Before *= m
	}
	p.Scale = s
	return true
}

// FormatError is an input in which no line is folded stacks.
type FormatError struct {
	Line  int // the first line that is not
	Text  string
	Lines int // how many lines are not
}

func (e *FormatError) Error() string {
	t := e.Text
	if len(t) > 80 {
		t = t[:80] + "…"
	}
	return fmt.Sprintf("input is not folded stacks (\"frames count\" lines): none of its %d non-blank lines is; the first, line %d: %q", e.Lines, e.Line, t)
}

// Read parses folded stacks. Blank lines are skipped, and so are lines
// that do not end in a space and a count (or two, before and after, for a
// differential profile), as flamegraph.pl and inferno skip them: they are
// counted in Profile.Skipped for the caller to warn about. A count is a
// decimal number, integer or fractional ("3", "0.25"; see Profile.Scale).
// An input with no stack at all is an error (a *FormatError if it had
// lines that are not stacks), so that an empty profile never renders as a
// blank graph.
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
		if strings.TrimSpace(b) == "" {
			continue
		}
		frames, after, ok := splitNumber(b)
		if !ok || strings.TrimSpace(frames) == "" {
			p.skip(line, b)
			continue
		}
		var before number
		if f2, c2, ok := splitNumber(frames); ok && strings.TrimSpace(f2) != "" {
			// "frames before after": a differential profile.
			frames, before, p.Diff = f2, c2, true
		}
		if s := max(after.places(), before.places()); s > p.Scale {
			p.Rescale(min(s, MaxScale)) // on overflow the extra places are dropped
		}
		count, ok1 := after.at(p.Scale)
		bc, ok2 := before.at(p.Scale)
		if !ok1 || !ok2 {
			p.skip(line, b) // too large for 64 bits, as inferno skips it
			continue
		}
		if idx == nil && len(p.Stacks) > 0 && frames <= p.Stacks[len(p.Stacks)-1].Frames {
			idx = make(map[string]int, 2*len(p.Stacks))
			for i, s := range p.Stacks {
				idx[s.Frames] = i
			}
		}
		if idx != nil {
			if i, ok := idx[frames]; ok {
				p.Stacks[i].Count = Add(p.Stacks[i].Count, count)
				p.Stacks[i].Before = Add(p.Stacks[i].Before, bc)
				continue
			}
			idx[frames] = len(p.Stacks)
		}
		p.Stacks = append(p.Stacks, Stack{Frames: frames, Count: count, Before: bc})
	}
	if len(p.Stacks) == 0 {
		if p.Skipped.Lines > 0 {
			return nil, &FormatError{Line: p.Skipped.First, Text: p.Skipped.Text, Lines: p.Skipped.Lines}
		}
		return nil, fmt.Errorf("no stacks in input (expected lines like \"comm;main;work 42\")")
	}
	if idx != nil {
		p.Sort()
	}
	p.reduceScale()
	return p, nil
}

func (p *Profile) skip(line int, text string) {
	if p.Skipped.Lines == 0 {
		if len(text) > 80 {
			text = text[:80]
		}
		p.Skipped.First, p.Skipped.Text = line, strings.Clone(text)
	}
	p.Skipped.Lines++
}

// reduceScale drops decimal places that every count has as zeros (two
// halves merged into a whole), so that a profile written and read again
// has the same scale.
func (p *Profile) reduceScale() {
	for p.Scale > 0 {
		for _, s := range p.Stacks {
			if s.Count%10 != 0 || s.Before%10 != 0 {
				return
			}
		}
		for i := range p.Stacks {
			p.Stacks[i].Count /= 10
			p.Stacks[i].Before /= 10
		}
		p.Scale--
	}
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

// number is a parsed count: its integer part and the significant digits
// of its fraction (trailing zeros removed).
type number struct {
	whole uint64
	frac  string
}

func (n number) places() int { return len(n.frac) }

// at is n in units of 10^-scale, extra fraction digits dropped; false on
// overflow.
func (n number) at(scale int) (uint64, bool) {
	m := pow10[scale]
	if n.whole > ^uint64(0)/m {
		return 0, false
	}
	v := n.whole * m
	var f uint64
	for i := 0; i < scale; i++ {
		f *= 10
		if i < len(n.frac) {
			f += uint64(n.frac[i] - '0')
		}
	}
	if v > ^uint64(0)-f {
		return 0, false
	}
	return v + f, true
}

// splitNumber splits "frames count" at the last space; frames keep any
// other spaces, including trailing ones, as flamegraph.pl keeps them.
// The count is digits with an optional fraction ("12", "12.", "0.25"),
// as flamegraph.pl's and inferno's parsers accept.
func splitNumber(b string) (string, number, bool) {
	sp := strings.LastIndexByte(b, ' ')
	if sp <= 0 {
		return "", number{}, false
	}
	n, ok := parseNumber(b[sp+1:])
	return b[:sp], n, ok
}

func parseNumber(s string) (number, bool) {
	w, f, dot := strings.Cut(s, ".")
	whole, ok := parseCount(w)
	if !ok {
		return number{}, false
	}
	if !dot {
		return number{whole: whole}, true
	}
	for i := 0; i < len(f); i++ {
		if f[i] < '0' || f[i] > '9' {
			return number{}, false
		}
	}
	return number{whole: whole, frac: strings.TrimRight(f, "0")}, true
}

// parseCount parses an unsigned decimal integer.
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

// SplitLine splits an integer-count line "frames count" at the last
// space; frames keep any other spaces, including trailing ones.
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
