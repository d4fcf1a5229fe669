// Package diff compares two folded profiles: it joins them into the
// differential folded format ("stack before after", as FlameGraph's
// difffolded.pl writes, which render draws as a red/blue differential
// flame graph) and ranks the functions whose share of the profile changed
// most — the table that turns "the new JDK is 13x slower" into
// "ClientHandshaker.processMessage went from 1.15% to 23.98%".
//
// Shares, not raw counts, are compared: two profiles rarely have the same
// number of samples, and a function that doubled its samples in a profile
// twice as long did not change at all.
package diff

import (
	"math"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/perflab/perflab/internal/flame/folded"
)

// Options control how Join pairs the two profiles.
type Options struct {
	// Normalize scales the before counts so both profiles have the after
	// total, so that widths and colours show changes in share rather
	// than in profile length. Each scaled count is truncated toward zero,
	// as difffolded.pl -n (int(count * total2 / total1)) and
	// inferno-diff-folded --normalize do, so that the three agree.
	Normalize bool
	// StripHex replaces every "0x" followed by hex digits with "0x...",
	// as difffolded.pl -s and inferno-diff-folded --strip-hex do, so that
	// frames named by address (JIT code, stripped binaries) match across
	// runs whose code was loaded at different addresses.
	StripHex bool
}

// Join returns the differential profile of before and after: every stack
// of either, with Before and Count (after).
// Trailing blanks of a stack are not part of its identity (a frame named
// "[unknown] " and "[unknown]" are the same), as in inferno-diff-folded.
func Join(before, after *folded.Profile, opt Options) *folded.Profile {
	// Stacks are identified as the references identify them (trailing
	// blanks trimmed, addresses stripped) before anything is counted, so
	// stacks that become one are summed before they are normalized.
	before, after = rekey(before, opt.StripHex), rekey(after, opt.StripHex)
	// Both sides in the finer decimal scale (fractional counts).
	scale := max(before.Scale, after.Scale)
	before, after = atScale(before, scale), atScale(after, scale)
	tb, ta := before.Total(), after.Total()
	bc := func(c uint64) uint64 {
		if !opt.Normalize || tb == ta || tb == 0 {
			return c
		}
		// The references' formula, int(count * total2 / total1), in the
		// same floating-point order, on the counts' real values.
		if scale == 0 {
			return uint64(float64(c) * float64(ta) / float64(tb))
		}
		return uint64(folded.Value(c, scale)*float64(ta)/float64(tb)) * folded.Pow10(scale)
	}
	out := &folded.Profile{Diff: true, Scale: scale, Stacks: make([]folded.Stack, 0, len(after.Stacks)+len(before.Stacks)/4)}
	// Both sides are sorted (a Profile's invariant): merge them.
	a, b := after.Stacks, before.Stacks
	for len(a) > 0 || len(b) > 0 {
		var c int
		switch {
		case len(a) == 0:
			c = 1
		case len(b) == 0:
			c = -1
		default:
			c = strings.Compare(a[0].Frames, b[0].Frames)
		}
		var s folded.Stack
		switch {
		case c < 0:
			s = folded.Stack{Frames: a[0].Frames, Count: a[0].Count}
			a = a[1:]
		case c > 0:
			s = folded.Stack{Frames: b[0].Frames, Before: bc(b[0].Count)}
			b = b[1:]
		default:
			s = folded.Stack{Frames: a[0].Frames, Count: a[0].Count, Before: bc(b[0].Count)}
			a, b = a[1:], b[1:]
		}
		out.Stacks = append(out.Stacks, s)
	}
	return out
}

// Row is one function's share of the profile before and after, in
// percent: inclusive (stacks it is on, counted once per stack even when
// recursive) and self (stacks it is the leaf of).
type Row struct {
	Function                    string
	InclBefore, InclAfter       float64
	SelfBefore, SelfAfter       float64
	SamplesBefore, SamplesAfter float64 // inclusive counts (fractional if the input's were)
	TotalBefore, TotalAfter     float64
	Appeared, Disappeared       bool
}

// InclDelta and SelfDelta are the changes in percentage points.
func (r Row) InclDelta() float64 { return r.InclAfter - r.InclBefore }
func (r Row) SelfDelta() float64 { return r.SelfAfter - r.SelfBefore }

// score ranks rows by the larger of the two changes.
func (r Row) score() float64 { return math.Max(math.Abs(r.InclDelta()), math.Abs(r.SelfDelta())) }

// Table ranks the functions of a differential profile by how much their
// inclusive or self share changed, largest first, and returns the top n
// (all if n <= 0). Annotations (_[k], _[j], _[i]) are part of the name, so
// a kernel and a user function of the same name stay apart.
func Table(d *folded.Profile, n int) []Row {
	type acc struct{ inclB, inclA, selfB, selfA uint64 }
	fns := map[string]*acc{}
	get := func(f string) *acc {
		a := fns[f]
		if a == nil {
			a = &acc{}
			fns[f] = a
		}
		return a
	}
	// Walk the stacks as a flame graph is built: consecutive stacks share
	// a prefix of open frames, each open frame accumulates the counts of
	// the stacks below it, and when a function's outermost open frame
	// closes its accumulated counts are its inclusive counts. Recursion
	// is counted once, and the work is per frame opened, not per frame of
	// every stack.
	type open struct {
		name       string
		end        int
		accB, accA uint64
		outer      bool
	}
	var path []open
	onPath := map[string]int{}
	closeTo := func(depth int) {
		for len(path) > depth {
			o := path[len(path)-1]
			path = path[:len(path)-1]
			if len(path) > 0 {
				path[len(path)-1].accB += o.accB
				path[len(path)-1].accA += o.accA
			}
			onPath[o.name]--
			if o.outer {
				a := get(o.name)
				a.inclB += o.accB
				a.inclA += o.accA
			}
		}
	}
	prev := ""
	for _, s := range d.Stacks {
		f := s.Frames
		k := commonPrefix(f, prev)
		depth := 0
		for depth < len(path) {
			e := path[depth].end
			if e < k || (e == k && (k == len(f) || f[k] == ';')) {
				depth++
				continue
			}
			break
		}
		closeTo(depth)
		start := 0
		if depth > 0 {
			start = path[depth-1].end + 1
		}
		for start <= len(f) {
			end := len(f)
			if i := strings.IndexByte(f[start:], ';'); i >= 0 {
				end = start + i
			}
			name := f[start:end]
			c := onPath[name]
			onPath[name] = c + 1
			path = append(path, open{name: name, end: end, outer: c == 0})
			start = end + 1
		}
		leaf := &path[len(path)-1]
		leaf.accB += s.Before
		leaf.accA += s.Count
		a := get(leaf.name)
		a.selfB += s.Before
		a.selfA += s.Count
		prev = f
	}
	closeTo(0)
	tb, ta := d.TotalBefore(), d.Total()
	share := func(v, t uint64) float64 {
		if t == 0 {
			return 0
		}
		return 100 * float64(v) / float64(t)
	}
	rows := make([]Row, 0, len(fns))
	for f, a := range fns {
		rows = append(rows, Row{
			Function:   f,
			InclBefore: share(a.inclB, tb), InclAfter: share(a.inclA, ta),
			SelfBefore: share(a.selfB, tb), SelfAfter: share(a.selfA, ta),
			SamplesBefore: folded.Value(a.inclB, d.Scale), SamplesAfter: folded.Value(a.inclA, d.Scale),
			TotalBefore: folded.Value(tb, d.Scale), TotalAfter: folded.Value(ta, d.Scale),
			Appeared: a.inclB == 0 && a.inclA > 0, Disappeared: a.inclA == 0 && a.inclB > 0,
		})
	}
	// Rank by precomputed scores on small keys, not by sorting the rows.
	type ranked struct {
		score float64
		i     int
	}
	keys := make([]ranked, len(rows))
	for i := range rows {
		keys[i] = ranked{rows[i].score(), i}
	}
	slices.SortFunc(keys, func(x, y ranked) int {
		if c := -cmpFloat(x.score, y.score); c != 0 {
			return c
		}
		return strings.Compare(rows[x.i].Function, rows[y.i].Function)
	})
	if n <= 0 || n > len(keys) {
		n = len(keys)
	}
	out := make([]Row, n)
	for k := range out {
		out[k] = rows[keys[k].i]
	}
	return out
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// commonPrefix is the length of the longest common prefix of a and b,
// compared in blocks first: stacks share long prefixes.
func commonPrefix(a, b string) int {
	n := min(len(a), len(b))
	k := 0
	for k+64 <= n && a[k:k+64] == b[k:k+64] {
		k += 64
	}
	for k+8 <= n && a[k:k+8] == b[k:k+8] {
		k += 8
	}
	for k < n && a[k] == b[k] {
		k++
	}
	return k
}

// hexRun is what difffolded.pl -s replaces: "0x" and at least one hex digit.
// Compiled on first use: every perflab command links this package.
var hexRun = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`0x[0-9a-fA-F]+`) })

// rekey returns p with each stack named as the references key it: trailing
// blanks trimmed and, with strip, every hex number replaced by "0x...";
// stacks that became equal are merged. p is returned as is if no name
// changes.
func rekey(p *folded.Profile, strip bool) *folded.Profile {
	key := func(f string) string {
		f = strings.TrimRight(f, " \t")
		if strip && strings.Contains(f, "0x") {
			f = hexRun().ReplaceAllLiteralString(f, "0x...")
		}
		return f
	}
	var out *folded.Profile
	for i, s := range p.Stacks {
		k := key(s.Frames)
		if k == s.Frames && out == nil {
			continue
		}
		if out == nil {
			out = &folded.Profile{Diff: p.Diff, Scale: p.Scale, Stacks: slices.Clone(p.Stacks)}
		}
		out.Stacks[i].Frames = k
	}
	if out == nil {
		return p
	}
	out.Sort()
	return out
}

// atScale returns p with its counts at the given (not smaller) scale,
// copied if they change. A count too large to rescale is kept at its
// largest value rather than wrapped.
func atScale(p *folded.Profile, scale int) *folded.Profile {
	if p.Scale == scale {
		return p
	}
	q := &folded.Profile{Diff: p.Diff, Scale: p.Scale, Stacks: slices.Clone(p.Stacks)}
	if !q.Rescale(scale) {
		m := folded.Pow10(scale - p.Scale)
		for i := range q.Stacks {
			q.Stacks[i].Count = satMul(q.Stacks[i].Count, m)
			q.Stacks[i].Before = satMul(q.Stacks[i].Before, m)
		}
		q.Scale = scale
	}
	return q
}

func satMul(a, b uint64) uint64 {
	if b != 0 && a > ^uint64(0)/b {
		return ^uint64(0)
	}
	return a * b
}
