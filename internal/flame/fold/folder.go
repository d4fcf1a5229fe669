package fold

import (
	"bytes"
	"encoding/binary"
	"math/bits"
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
	pname     []byte   // the root frame: comm, comm-PID or comm-PID/TID
	pnameID   uint32   // pname interned in pnames
	java      int      // 1 when pname starts with "java" (Java names are tidied)
	ids       []uint32 // the sample's frames so far, leaf first, as segment ids

	// Frame lines repeat: a few tens of thousands of distinct lines make up
	// millions. Each distinct line (after its address, which only --addrs
	// shows) is cleaned once; the result is a segment, "f0" or
	// "f0;f1_[i]" for f0->f1, interned in segs and named by its id; later
	// copies of the line cost one lookup. There is one cache per value
	// of java, the only per-sample state a line's segment depends on.
	//
	// Consecutive lines repeat too (a function is mostly called from the
	// same one or two places), so each entry remembers the two entries
	// that followed it last: a line equal to one of these predictions
	// skips the hashing and the lookup, and a line equal byte for byte to
	// the last line seen with one of them (the same call site in the same
	// process: the same address) is recognised in the input before its
	// end is looked for.
	caches [2]lineCache // by java
	lc     *lineCache   // the current sample's
	prev   uint32       // this sample's last entry, or noEntry

	segs *byteSet // segments, by id

	// Samples are interned by their root frame and segment ids: the key is
	// 4 bytes per id, much shorter than the folded text it stands for,
	// which is built once per unique stack, at the end.
	pnames   map[string]uint32
	pnameOf  [][]byte
	stackSet *byteSet // keys: pname id, then segment ids leaf first
	counts   []uint64 // by stack

	// scratch buffers, reused so that a line allocates nothing
	seg, key, lossy, rust []byte

	// clean is true when the last line fed was blank (state known reset).
	clean bool

	stats     Stats
	skipCount map[string]*uint64 // samples of other event types, by event

	_ [128]byte
}

// newFolder returns a folder for about size bytes of input (0: unknown).
// Its line cache and stack set are sized from it, so that they rarely
// double: with the collector held off, a doubled arena's old copy stays,
// and first touches of fresh memory are page faults (−18% of them for
// bench/flame.sh's input, and −11 MB of RSS).
func newFolder(opt Options, size int) *folder {
	lines, stacks := 1<<14, 1<<13
	if size > 0 { // ~1 distinct frame line per KB, ~1 unique stack per 2 KB
		lines = min(max(size/1024, 1<<8), 1<<16)
		stacks = min(max(size/2048, 1<<7), 1<<15)
	}
	f := &folder{
		opt:      opt,
		stackSet: newByteSet(stacks),
		pnames:   map[string]uint32{},
		segs:     newByteSet(lines / 4),
		prev:     noEntry,
		clean:    true,
	}
	f.caches[0], f.caches[1] = newLineCache(lines), newLineCache(16)
	f.lc = &f.caches[0]
	if opt.EventFilter != "" {
		f.filter, f.filterSet = []byte(opt.EventFilter), true
	}
	return f
}

// fork returns a folder for a worker that will fold about size bytes:
// same options and event filter, fresh state and its own maps.
func (f *folder) fork(size int) *folder {
	w := newFolder(f.opt, size)
	w.filter, w.filterSet = f.filter, f.filterSet
	return w
}

// feed folds whole lines; data ends with '\n' unless it is the input's end.
func (f *folder) feed(data []byte) {
	for len(data) > 0 {
		if f.prev != noEntry { // within a sample's frames
			if n := f.predicted(data); n > 0 {
				data = data[n:]
				continue
			}
		}
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			f.stats.Unterminated = true // perf script ends every line: cut short?
			f.line(data)
			break
		}
		f.line(data[:i])
		data = data[i+1:]
	}
}

// predicted folds the line at the start of data if it is, byte for byte
// and up to its '\n', the last line seen with one of the two entries
// predicted to follow f.prev; it returns the bytes taken (0 if none).
func (f *folder) predicted(data []byte) int {
	c := f.lc
	n0, n1 := c.next(f.prev)
	e := noEntry
	var l []byte
	if n0 != noEntry {
		if l = c.line(n0); len(l) > 0 && len(data) > len(l) && data[len(l)] == '\n' && string(data[:len(l)]) == string(l) {
			e = n0
		}
	}
	if e == noEntry && n1 != noEntry {
		if l = c.line(n1); len(l) > 0 && len(data) > len(l) && data[len(l)] == '\n' && string(data[:len(l)]) == string(l) {
			e = n1
			c.setNext(f.prev, n1, n0)
		}
	}
	if e == noEntry {
		return 0
	}
	f.stats.Lines++
	f.clean = false
	f.prev = e
	if s := c.seg(e); s != dropped {
		f.ids = append(f.ids, s)
	}
	return len(l) + 1
}

// line folds one line (without its '\n').
func (f *folder) line(raw []byte) {
	f.stats.Lines++
	if f.inEvent && !f.skip && len(raw) > 0 && (raw[0] == '\t' || raw[0] == ' ') {
		if off, ok := f.lineKey(raw); ok {
			f.clean = false
			if e := f.cachedLine(raw, raw[off:]); e != noEntry {
				f.lc.setPrefix(e, raw[:off])
			}
			return
		}
	}
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
	if len(f.ids) > 0 { // an event line that carried its only frame
		f.afterEvent()
	}
}

// dropped is the cached outcome of a frame line that adds no frame.
const dropped = ^uint32(0)

// lineKey returns what a frame line's segment depends on: the line after
// its leading blanks and address (with the address under --addrs). ok is
// false for lines not of the plain form "<blanks><hex> …", which take the
// uncached path.
func (f *folder) lineKey(raw []byte) (off int, ok bool) {
	if i, ok := paddedAddr(raw); ok {
		if f.opt.Addrs {
			return i, true
		}
		return addrEnd + 1, true
	}
	return f.lineKeySlow(raw)
}

// lineKeySlow is lineKey for any line, a byte at a time.
func (f *folder) lineKeySlow(raw []byte) (off int, ok bool) {
	i := 0
	for i < len(raw) && byteClass[raw[i]] == classBlank {
		i++
	}
	j := i
	for j < len(raw) && byteClass[raw[j]] == classHex {
		j++
	}
	if j == i || j == len(raw) || raw[j] != ' ' {
		return 0, false
	}
	if f.opt.Addrs {
		return i, true
	}
	return j + 1, true
}

// addrEnd is where perf script's usual frame-line prefix ends: a tab,
// the address right-aligned in 16 columns, then a space.
const addrEnd = 17

// paddedAddr recognises that usual prefix eight bytes at a time: raw[0]
// a tab, raw[1:17] spaces then at least one lowercase hex digit, raw[17]
// a space.
// i is where the address starts. It accepts only lines lineKeySlow
// reads the same way (TestPaddedAddrAgreesWithSlowScan).
func paddedAddr(raw []byte) (i int, ok bool) {
	if len(raw) <= addrEnd+1 || raw[0] != '\t' || raw[addrEnd] != ' ' {
		return 0, false
	}
	w0 := binary.LittleEndian.Uint64(raw[1:])
	w1 := binary.LittleEndian.Uint64(raw[9:])
	if (w0|w1)&highBits != 0 {
		return 0, false
	}
	sp0, sp1 := bytesIn(w0, ' ', ' '), bytesIn(w1, ' ', ' ')
	if hexBytes(w0)|sp0 != highBits || hexBytes(w1)|sp1 != highBits {
		return 0, false // a byte that is neither blank nor hex
	}
	// The spaces must come first (low bytes first, little-endian): a run
	// of set high bits from the lowest byte.
	switch {
	case sp0 == highBits: // the address is within w1
		if sp1 == highBits || !prefixRun(sp1) {
			return 0, false
		}
		return 9 + bits.TrailingZeros64(^sp1&highBits)/8, true
	case !prefixRun(sp0) || sp1 != 0:
		return 0, false
	}
	return 1 + bits.TrailingZeros64(^sp0&highBits)/8, true
}

const (
	lowBits  = 0x0101010101010101
	highBits = 0x8080808080808080
)

// bytesIn returns the high bit of each byte of w (all below 0x80) that
// lies in [lo, hi]: adding 0x80-lo sets it for bytes >= lo, adding
// 0x7f-hi for bytes > hi, and no sum carries into the next byte.
func bytesIn(w uint64, lo, hi byte) uint64 {
	return (w + lowBits*uint64(0x80-lo)) &^ (w + lowBits*uint64(0x7f-hi)) & highBits
}

// hexBytes marks w's lowercase hex digits, which is what perf prints;
// an address in capitals takes lineKeySlow.
func hexBytes(w uint64) uint64 {
	return bytesIn(w, '0', '9') | bytesIn(w, 'a', 'f')
}

// prefixRun reports whether the set high bits of m are those of its
// lowest bytes, none after a clear one (0 included).
func prefixRun(m uint64) bool {
	v := m >> 7 * 0xff // each set byte made 0xff
	return v&(v+1) == 0
}

// byteClass classifies the bytes lineKey scans: one table load a byte
// instead of a chain of comparisons (static data: no initialiser).
var byteClass = [256]uint8{'\t': classBlank, ' ': classBlank,
	'0': classHex, '1': classHex, '2': classHex, '3': classHex, '4': classHex, '5': classHex, '6': classHex, '7': classHex, '8': classHex, '9': classHex, 'a': classHex, 'b': classHex, 'c': classHex, 'd': classHex, 'e': classHex, 'f': classHex, 'A': classHex, 'B': classHex, 'C': classHex, 'D': classHex, 'E': classHex, 'F': classHex}

const (
	classBlank = 1
	classHex   = 2
)

// cachedLine adds the frame of a plain frame line: the predicted entry if
// its key is this line's, else the cached entry, else a new one.
func (f *folder) cachedLine(raw, key []byte) uint32 {
	c := f.lc
	e := noEntry
	if f.prev != noEntry {
		n0, n1 := c.next(f.prev)
		switch {
		case n0 != noEntry && string(c.key(n0)) == string(key):
			e = n0
		case n1 != noEntry && string(c.key(n1)) == string(key):
			e = n1
			c.setNext(f.prev, n1, n0)
		}
	}
	if e == noEntry {
		h := c.hash(key)
		var hit bool
		if e, hit = c.find(key, h); !hit {
			if e = f.newEntry(raw, key, h); e == noEntry {
				f.prev = noEntry
				return noEntry // weird, or the cache is full: not cached
			}
		}
		f.follows(e)
	}
	f.prev = e
	if s := c.seg(e); s != dropped {
		f.ids = append(f.ids, s)
	}
	return e
}

// follows records that entry e followed f.prev, as the first prediction.
func (f *folder) follows(e uint32) {
	if f.prev == noEntry {
		return
	}
	if n0, _ := f.lc.next(f.prev); n0 != e {
		f.lc.setNext(f.prev, e, n0)
	}
}

// noEntry marks the absence of a cache entry.
const noEntry = ^uint32(0)

// newEntry cleans a frame line not seen before and caches the outcome
// under key, whose hash is h. The outcome depends only on key (the blanks
// and the ASCII address before it are trimmed away by any path), f.java
// and the options. A weird line is counted and not cached (noEntry), as
// is, with its frame added here, a line the full cache has no room for.
func (f *folder) newEntry(raw, key []byte, h uint64) uint32 {
	l := raw
	if !isASCII(raw) {
		l = validUTF8(raw, &f.lossy)
	}
	seg, drop, ok := f.segment(trimRight(l))
	if !ok {
		f.weird(&f.stats.WeirdStacks, trimRight(l))
		return noEntry
	}
	id := dropped
	if !drop {
		id = f.intern(seg)
	}
	e, ok := f.lc.add(key, h, id)
	if !ok && id != dropped {
		f.ids = append(f.ids, id) // not cached: the caller adds nothing
	}
	return e
}

// intern returns the id of a segment, storing it if it is new. Equal
// segments share an id, so lines that differ only in what cleaning
// removes (offsets, addresses) make the same stack key.
func (f *folder) intern(seg []byte) uint32 {
	h := f.segs.hash(seg)
	if id, ok := f.segs.find(seg, h); ok {
		return id
	}
	return f.segs.add(seg, h)
}

// finish counts a last sample that was not followed by a blank line.
func (f *folder) finish() {
	if len(f.ids) > 0 {
		f.afterEvent()
	}
}

// reset forgets the per-sample state (not the stacks), for a new chunk.
func (f *folder) reset() {
	f.inEvent, f.skip, f.hasPeriod, f.clean = false, false, false, true
	f.ids, f.prev = f.ids[:0], noEntry
}

func (f *folder) afterEvent() {
	if len(f.ids) > 0 {
		k := binary.LittleEndian.AppendUint32(f.key[:0], f.pnameID)
		for _, id := range f.ids {
			k = binary.LittleEndian.AppendUint32(k, id)
		}
		f.key = k
		n := uint64(1)
		if f.hasPeriod {
			n = f.period
		}
		f.count(k, n)
		f.stats.Samples++
	}
	f.inEvent, f.skip, f.hasPeriod = false, false, false
	f.ids, f.prev = f.ids[:0], noEntry
}

// eventLine handles a sample header such as
//
//	java 12688/12764 [002] 6544038.708352:     250000 cpu-clock:ppp:
//	V8 WorkerThread 25607 4794564.109216: cycles:
//	false 64414 20110.539270: 34467 cycles:u:  ffffffff9aa3c8de [unknown] ([unknown])
func (f *folder) eventLine(line []byte) {
	f.inEvent, f.prev = true, noEntry
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
	id, ok := f.pnames[string(p)]
	if !ok {
		id = uint32(len(f.pnameOf))
		f.pnames[string(p)] = id
		f.pnameOf = append(f.pnameOf, append([]byte(nil), p...))
	}
	f.pnameID, f.java = id, 0
	if hasPrefix(p, "java") {
		f.java = 1
	}
	f.lc = &f.caches[f.java]

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
	f.prev = noEntry // the predictions are of cached lines only
	seg, drop, ok := f.segment(line)
	if !ok {
		f.weird(&f.stats.WeirdStacks, line)
		return
	}
	if !drop {
		f.ids = append(f.ids, f.intern(seg))
	}
}

// segment cleans one frame line (trimmed, valid UTF-8) into f.seg: ok is
// false when the line is not "ip symbol (module)", drop true when the
// symbol is a process name rather than a frame.
func (f *folder) segment(line []byte) (seg []byte, drop, ok bool) {
	pc, raw, module, ok := stackLineParts(line)
	if !ok {
		return nil, false, false
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
		return nil, true, true // a process name, not a frame
	}
	raw = fixRust(raw, &f.rust)

	java := f.java == 1
	first := true
	out := f.seg[:0]
	for {
		// Inlined frames arrive as "outer->inner->…" in one line; the
		// first is the real frame, the rest are marked _[i].
		part := raw
		next := bytes.Index(raw, arrow)
		if next >= 0 {
			part, raw = raw[:next], raw[next+2:]
		}
		if !first {
			out = append(out, ';')
		}
		s := len(out)
		out = appendFrame(out, part, module, pc, f.opt.Addrs, java)
		switch {
		case !first:
			if !bytes.Contains(out[s:], suffixInline) {
				out = append(out, suffixInline...)
			}
		case f.opt.Kernel && isKernel(module):
			out = append(out, "_[k]"...)
		case f.opt.JIT && isJIT(module) && !bytes.Contains(out[s:], suffixJIT):
			out = append(out, suffixJIT...)
		}
		first = false
		if next < 0 {
			break
		}
	}
	f.seg = out
	return out, false, true
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
