package fold

import (
	"bytes"
	"encoding/binary"
)

// folder is the per-line state machine of the reference folder, on bytes.
// Event lines ("comm pid[/tid] [cpu] time: [period] event:") open a sample;
// stack lines ("  ip symbol+off (module)") add a frame, leaf first; a blank
// line closes the sample and counts its stack. One folder runs per
// goroutine; its state is fully reset by every blank line, which is what
// makes cutting the input at blank lines safe.
type folder struct {
	// Workers' folders are allocated one after another; padding keeps one
	// worker's per-line writes off the cache lines another one reads.
	_ [128]byte

	opt Options

	filter    []byte // event type folded; set by the first event unless given
	filterSet bool

	// per-sample state
	inEvent   bool
	skip      bool // this sample is of another event type
	period    uint64
	hasPeriod bool
	pname     []byte
	frames    []byte // one segment per stack line: "f0;f1_[i]" for f0->f1
	segEnds   []int  // end offset of each stack line's segment in frames

	// the interned stacks
	index  map[string]int
	counts []uint64

	// scratch buffers, reused so that a line allocates nothing
	key, lossy, rust []byte

	// clean is true when the last line fed was blank (state known reset).
	clean bool

	stats     Stats
	skipCount map[string]*uint64 // samples of other event types, by event

	_ [128]byte
}

func newFolder(opt Options) *folder {
	f := &folder{opt: opt, index: make(map[string]int, 1024), clean: true}
	if opt.EventFilter != "" {
		f.filter, f.filterSet = []byte(opt.EventFilter), true
	}
	return f
}

// fork returns a folder for a worker: same options and event filter,
// fresh state and its own stack map.
func (f *folder) fork() *folder {
	w := &folder{opt: f.opt, index: make(map[string]int, 1024), clean: true}
	w.filter, w.filterSet = f.filter, f.filterSet
	return w
}

// feed folds whole lines; data ends with '\n' unless it is the input's end.
func (f *folder) feed(data []byte) {
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			f.stats.Unterminated = true // perf script ends every line: cut short?
			f.line(data)
			return
		}
		f.line(data[:i])
		data = data[i+1:]
	}
}

// line folds one line (without its '\n').
func (f *folder) line(raw []byte) {
	f.stats.Lines++
	if len(raw) > 0 && raw[0] == '#' {
		return
	}
	l := raw
	if !isASCII(raw) {
		l = validUTF8(raw, &f.lossy)
	}
	l = trimRight(l)
	if len(l) == 0 {
		f.afterEvent()
		f.clean = true
		return
	}
	f.clean = false
	if f.inEvent {
		f.stackLine(l)
		return
	}
	f.eventLine(l)
	if len(f.segEnds) > 0 { // an event line that carried its only frame
		f.afterEvent()
	}
}

// finish counts a last sample that was not followed by a blank line.
func (f *folder) finish() {
	if len(f.segEnds) > 0 {
		f.afterEvent()
	}
}

// reset forgets the per-sample state (not the stacks), for a new chunk.
func (f *folder) reset() {
	f.inEvent, f.skip, f.hasPeriod, f.clean = false, false, false, true
	f.frames, f.segEnds = f.frames[:0], f.segEnds[:0]
}

func (f *folder) afterEvent() {
	if len(f.segEnds) > 0 {
		k := append(f.key[:0], f.pname...)
		for i := len(f.segEnds) - 1; i >= 0; i-- {
			start := 0
			if i > 0 {
				start = f.segEnds[i-1]
			}
			k = append(k, ';')
			k = append(k, f.frames[start:f.segEnds[i]]...)
		}
		f.key = k
		n := uint64(1)
		if f.hasPeriod {
			n = f.period
		}
		f.add(k, n)
		f.stats.Samples++
	}
	f.inEvent, f.skip, f.hasPeriod = false, false, false
	f.frames, f.segEnds = f.frames[:0], f.segEnds[:0]
}

func (f *folder) add(key []byte, n uint64) {
	if i, ok := f.index[string(key)]; ok {
		f.counts[i] += n
		return
	}
	f.index[string(key)] = len(f.counts)
	f.counts = append(f.counts, n)
}

func (f *folder) addString(key string, n uint64) {
	if i, ok := f.index[key]; ok {
		f.counts[i] += n
		return
	}
	f.index[key] = len(f.counts)
	f.counts = append(f.counts, n)
}

// eventLine handles a sample header such as
//
//	java 12688/12764 [002] 6544038.708352:     250000 cpu-clock:ppp:
//	V8 WorkerThread 25607 4794564.109216: cycles:
//	false 64414 20110.539270: 34467 cycles:u:  ffffffff9aa3c8de [unknown] ([unknown])
func (f *folder) eventLine(line []byte) {
	f.inEvent = true
	comm, pid, tid, end, ok := eventLineParts(line)
	if !ok {
		f.weird(&f.stats.WeirdEvents, line)
		f.inEvent = false
		return
	}
	// The event is the last word before the second ':' after the pid;
	// the word before it, if numeric, is the sample period. Anything
	// after a third field is a one-frame stack printed on the same line.
	rest := line[end:]
	var third []byte
	hasThird := false
	if c1 := bytes.IndexByte(rest, ':'); c1 >= 0 {
		second := rest[c1+1:]
		if c2 := bytes.IndexByte(second, ':'); c2 >= 0 {
			third, hasThird = second[c2+1:], true
			second = second[:c2]
		}
		sp := bytes.LastIndexByte(second, ' ')
		event := second[sp+1:]
		f.hasPeriod = false
		if sp >= 0 {
			p := second[:sp]
			p = p[bytes.LastIndexByte(p, ' ')+1:]
			f.period, f.hasPeriod = parsePeriod(p)
		}
		if !f.filterSet {
			f.filter, f.filterSet = append([]byte(nil), event...), true
		} else if !bytes.Equal(event, f.filter) {
			f.skip = true
			f.skipped(event)
			return
		}
	}
	var single []byte
	if hasThird {
		start := bytes.IndexAny(third, ": ") + 1
		single = trim(third[start:])
	}

	p := f.pname[:0]
	for _, c := range comm {
		if c == ' ' {
			c = '_'
		}
		p = append(p, c)
	}
	if f.opt.TID {
		p = append(p, '-')
		p = append(p, pid...)
		p = append(p, '/')
		p = append(p, tid...)
	} else if f.opt.PID {
		p = append(p, '-')
		p = append(p, pid...)
	}
	f.pname = p

	if len(single) > 0 {
		f.stackLine(single)
		f.inEvent = false
	}
}

// eventLineParts finds the first all-digit word ("1234" or "1234/5678",
// not the first word) followed by a space: the comm is everything before
// it, trimmed, so comms may contain spaces. end is just past that space.
func eventLineParts(line []byte) (comm, pid, tid []byte, end int, ok bool) {
	wordStart, slash := 0, -1
	allDigits, lastSpace := false, false
	for i, c := range line {
		switch {
		case c == ' ':
			if allDigits && !lastSpace {
				if slash >= 0 {
					pid, tid = line[wordStart:slash], line[slash+1:i]
				} else {
					pid, tid = unknownPID, line[wordStart:i]
				}
				return trim(line[:wordStart-1]), pid, tid, i + 1, true
			}
			wordStart, allDigits = i+1, true
		case c == '/':
			if allDigits {
				slash = i
			}
		case c >= '0' && c <= '9':
		default:
			allDigits, slash = false, -1
		}
		lastSpace = c == ' '
	}
	return nil, nil, nil, 0, false
}

// unknownPID stands for the PID when perf printed only the TID.
var unknownPID = []byte("?")

// stackLine handles one frame line, e.g.
//
//	ffffffff8103ce3b native_safe_halt+0x1b ([kernel.kallsyms])
//	7f722d142778 Ljava/io/PrintStream;::print (/tmp/perf-19982.map)
//	7f1e2215d058  (/lib/x86_64-linux-gnu/libc-2.15.so)
func (f *folder) stackLine(line []byte) {
	if f.skip {
		return
	}
	pc, raw, module, ok := stackLineParts(line)
	if !ok {
		f.weird(&f.stats.WeirdStacks, line)
		return
	}
	// Strip a symbol offset: "+0x" followed only by hex digits (or nothing).
	j := len(raw)
	for j > 0 && isHex(raw[j-1]) {
		j--
	}
	if j >= 3 && string(raw[j-3:j]) == "+0x" {
		raw = raw[:j-3]
	}
	if len(raw) > 0 && raw[0] == '(' {
		return // a process name, not a frame
	}
	raw = fixRust(raw, &f.rust)

	java := hasPrefix(f.pname, "java")
	first := true
	for {
		// Inlined frames arrive as "outer->inner->…" in one line; the
		// first is the real frame, the rest are marked _[i].
		part := raw
		next := bytes.Index(raw, arrow)
		if next >= 0 {
			part, raw = raw[:next], raw[next+2:]
		}
		if !first {
			f.frames = append(f.frames, ';')
		}
		s := len(f.frames)
		f.frames = appendFrame(f.frames, part, module, pc, f.opt.Addrs, java)
		switch {
		case !first:
			if !bytes.Contains(f.frames[s:], suffixInline) {
				f.frames = append(f.frames, suffixInline...)
			}
		case f.opt.Kernel && isKernel(module):
			f.frames = append(f.frames, "_[k]"...)
		case f.opt.JIT && isJIT(module) && !bytes.Contains(f.frames[s:], suffixJIT):
			f.frames = append(f.frames, suffixJIT...)
		}
		first = false
		if next < 0 {
			break
		}
	}
	f.segEnds = append(f.segEnds, len(f.frames))
}

var (
	arrow        = []byte("->")
	suffixInline = []byte("_[i]")
	suffixJIT    = []byte("_[j]")
)

// stackLineParts splits "ip symbol (module)": ip is the first word, module
// the last (in parentheses), symbol what lies between (" " if nothing).
func stackLineParts(line []byte) (pc, sym, module []byte, ok bool) {
	l := trimLeft(line)
	sp := bytes.IndexByte(l, ' ')
	if sp < 0 {
		return nil, nil, nil, false
	}
	pc = trimRight(l[:sp])
	rest := l[sp+1:]
	ls := bytes.LastIndexByte(rest, ' ')
	module = rest[ls+1:]
	if len(module) < 2 || module[0] != '(' || module[len(module)-1] != ')' || ls < 0 {
		return nil, nil, nil, false
	}
	module = module[1 : len(module)-1]
	sym = trim(rest[:ls])
	if len(sym) == 0 {
		sym = space
	}
	return pc, sym, module, true
}

var space = []byte(" ")

// isASCII reports whether b has no byte >= 0x80, eight bytes at a time.
func isASCII(b []byte) bool {
	for len(b) >= 8 {
		if binary.LittleEndian.Uint64(b)&0x8080808080808080 != 0 {
			return false
		}
		b = b[8:]
	}
	for _, c := range b {
		if c >= 0x80 {
			return false
		}
	}
	return true
}

func (f *folder) skipped(event []byte) {
	if p, ok := f.skipCount[string(event)]; ok {
		*p++
		return
	}
	if f.skipCount == nil {
		f.skipCount = map[string]*uint64{}
	}
	n := uint64(1)
	f.skipCount[string(event)] = &n
}

func (f *folder) weird(n *uint64, line []byte) {
	*n++
	if f.stats.FirstWeird == "" {
		if len(line) > 120 {
			line = line[:120]
		}
		f.stats.FirstWeird = string(line)
	}
}
