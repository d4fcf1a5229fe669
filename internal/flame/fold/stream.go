package fold

import (
	"bytes"
	"errors"
	"io"
	"os"
	"runtime/debug"
	"sync"

	"github.com/perflab/perflab/internal/flame/folded"
)

// Stats describe what the folder saw, for the notes the CLI prints.
type Stats struct {
	Lines       uint64            // input lines
	Samples     uint64            // samples folded (stacks counted)
	Event       string            // the event type folded
	Skipped     map[string]uint64 // samples of other event types, by event
	WeirdEvents uint64            // lines that looked like neither event nor blank
	WeirdStacks uint64            // frame lines without "ip symbol (module)"
	FirstWeird  string            // the first such line, for the message
	// Unterminated: the input's last line has no newline, which perf
	// script never writes: the input was probably cut short.
	Unterminated bool
}

// Result is a folded profile and how it was obtained.
type Result struct {
	Profile *folded.Profile
	Stats   Stats
}

// blockSize is how much input one worker folds at a time: large enough
// that handing blocks over costs nothing, small enough that memory stays
// a few blocks per thread whatever the input size.
const blockSize = 2 << 20

// Fold reads `perf script` output from r and folds it. A regular file
// is mapped into memory rather than read (see mapFile).
func Fold(r io.Reader, opt Options) (*Result, error) {
	if f, ok := r.(*os.File); ok {
		if data, unmap, ok := mapFile(f); ok {
			defer unmap()
			return foldSource(&source{mem: data, mapped: true, eof: len(data) == 0, block: blockSize}, opt)
		}
	}
	return fold(r, opt, blockSize)
}

// fold is Fold with the block size as a parameter, so tests can cut tiny
// inputs into many blocks.
func fold(r io.Reader, opt Options, block int) (*Result, error) {
	return foldSource(&source{r: r, block: block}, opt)
}

// foldMem folds input held in memory, as Fold does a mapped file.
func foldMem(data []byte, opt Options, block int) (*Result, error) {
	if data == nil {
		data = []byte{}
	}
	return foldSource(&source{mem: data, eof: len(data) == 0, block: block}, opt)
}

func foldSource(src *source, opt Options) (res *Result, err error) {
	if opt.TID {
		opt.PID = true
	}
	defer holdGC()()
	main := newFolder(opt, len(src.mem))
	all := main // the folder that ends up with every stack
	switch {
	case opt.Threads > 1:
		var workers []*folder
		workers, err = streamParallel(src, main, opt.Threads)
		for _, w := range workers {
			main.mergeStats(w)
		}
		all = absorbAll(main, workers)
	case src.mem != nil:
		err = guardFaults(func() {
			data := src.mem
			for len(data) > src.block {
				cut := bytes.LastIndexByte(data[:src.block], '\n') + 1
				if cut == 0 {
					break // a line longer than a block: fold the rest at once
				}
				main.feed(data[:cut])
				src.release(data[:cut])
				data = data[cut:]
			}
			main.feed(data)
			main.finish()
		})
	default:
		err = streamSerial(src.r, main)
	}
	if err != nil {
		return nil, err
	}
	return main.result(all.stacks(opt.Threads > 1)), nil
}

// absorbAll merges the stacks of the serial start (main) and of all
// workers into the worker that has the most, whose tables are kept as
// they are: only the others' segments and stacks are looked up again.
func absorbAll(main *folder, workers []*folder) *folder {
	if len(workers) == 0 {
		return main
	}
	all := workers[0]
	for _, w := range workers[1:] {
		if len(w.counts) > len(all.counts) {
			all = w
		}
	}
	all.absorb(main)
	for _, w := range workers {
		if w != all {
			all.absorb(w)
		}
	}
	return all
}

func (f *folder) mergeStats(w *folder) {
	f.stats.Lines += w.stats.Lines
	f.stats.Samples += w.stats.Samples
	f.stats.WeirdEvents += w.stats.WeirdEvents
	f.stats.WeirdStacks += w.stats.WeirdStacks
	if f.stats.FirstWeird == "" {
		f.stats.FirstWeird = w.stats.FirstWeird
	}
	f.stats.Unterminated = f.stats.Unterminated || w.stats.Unterminated
	for k, n := range w.skipCount {
		if p, ok := f.skipCount[k]; ok {
			*p += *n
			continue
		}
		if f.skipCount == nil {
			f.skipCount = map[string]*uint64{}
		}
		f.skipCount[k] = n
	}
}

func (f *folder) result(stacks []folded.Stack) *Result {
	if stacks == nil {
		stacks = []folded.Stack{}
	}
	p := &folded.Profile{Stacks: stacks}
	st := f.stats
	st.Event = string(f.filter)
	if len(f.skipCount) > 0 {
		st.Skipped = make(map[string]uint64, len(f.skipCount))
		for k, n := range f.skipCount {
			st.Skipped[k] = *n
		}
	}
	return &Result{Profile: p, Stats: st}
}

// streamSerial folds r line by line in this goroutine.
func streamSerial(r io.Reader, f *folder) error {
	buf := make([]byte, 1<<20)
	carry := 0
	for {
		n, err := io.ReadFull(r, buf[carry:])
		data := buf[:carry+n]
		eof := errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
		if err != nil && !eof {
			return err
		}
		if eof {
			f.feed(data)
			f.finish()
			return nil
		}
		last := bytes.LastIndexByte(data, '\n')
		if last < 0 { // one line longer than the buffer
			buf = append(buf, make([]byte, len(buf))...)
			carry = len(data)
			continue
		}
		f.feed(data[:last+1])
		carry = copy(buf, data[last+1:])
	}
}

// streamParallel cuts the input into blocks that end just after a blank
// line (where the folder's state is known to be reset) and folds them on
// worker goroutines, each reading its own next block under a lock, so
// there is no reader goroutine to hand blocks over. The start of the
// input, until the event type to fold is known, is folded serially.
func streamParallel(src *source, main *folder, threads int) (workers []*folder, err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer recoverFault(&err)
	block := src.block
	var buf []byte
	if src.mem == nil {
		buf = make([]byte, block)
	}
	for !main.filterSet {
		data, err := src.fill(&buf)
		if err != nil {
			return nil, err
		}
		if len(data) == 0 {
			main.finish()
			return nil, nil
		}
		i := bytes.Index(data, blankLine)
		if i < 0 || src.eof {
			// no boundary yet: fold the complete lines, keep the rest
			cut := len(data)
			if !src.eof {
				cut = bytes.LastIndexByte(data, '\n') + 1
			}
			main.feed(data[:cut])
			src.keep(data[cut:])
			continue
		}
		main.feed(data[:i+2])
		src.keep(data[i+2:])
		if !main.clean {
			continue
		}
	}
	if !main.clean {
		// finish the current sample serially before cutting blocks
		if err := src.serialUntilBlank(main, &buf); err != nil {
			return nil, err
		}
	}
	workers = make([]*folder, threads)
	errs := make([]error, threads)
	var wg sync.WaitGroup
	for i := range workers {
		w := main.fork(len(src.mem) / threads)
		workers[i] = w
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
			defer recoverFault(&errs[i])
			b := buf
			if i > 0 && src.mem == nil {
				b = make([]byte, block)
			}
			for {
				data, more, err := src.take(w, &b)
				if err != nil {
					errs[i] = err
					return
				}
				if len(data) > 0 {
					w.reset()
					w.feed(data)
					w.finish()
					src.release(data)
				}
				if !more {
					return
				}
			}
		}(i)
	}
	wg.Wait()
	return workers, errors.Join(errs...)
}

var blankLine = []byte("\n\n")

// source hands out blocks of the input that end at a blank line: read
// from r into the worker's buffer, or sliced from mem, the whole input in
// memory, with no copy.
type source struct {
	mu     sync.Mutex
	r      io.Reader
	mem    []byte
	mapped bool // mem is a file mapping (release may drop its pages)
	pos    int  // mem[:pos] has been handed out
	block  int
	carry  []byte // unfolded tail of the last block
	eof    bool
}

// fill returns the carried tail followed by up to a block of new input,
// in *buf (grown when the tail alone fills it), or in mem.
func (s *source) fill(buf *[]byte) ([]byte, error) {
	if s.mem != nil {
		// The carried tail is the end of the last block: mem[pos-len(carry):pos].
		start := s.pos - len(s.carry)
		s.pos = min(s.pos+s.block, len(s.mem))
		s.carry, s.eof = nil, s.pos == len(s.mem)
		return s.mem[start:s.pos], nil
	}
	b := *buf
	// Room for at least one new byte, else a carried line as long as the
	// buffer would be handed back unchanged for ever (a block of 1 byte).
	if len(b) < len(s.carry)+max(s.block/2, 1) {
		b = make([]byte, len(s.carry)+s.block)
		*buf = b
	}
	n := copy(b, s.carry)
	s.carry = s.carry[:0]
	if s.eof {
		return b[:n], nil
	}
	m, err := io.ReadFull(s.r, b[n:])
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		s.eof, err = true, nil
	}
	return b[:n+m], err
}

// release tells the kernel that a folded block of a mapped input is not
// needed any more, so the mapping's resident size stays a few blocks
// rather than growing to the file's (the page cache keeps the file; a
// page touched again is mapped again, with the same bytes).
func (s *source) release(b []byte) {
	if s.mapped {
		releasePages(s.mem, b)
	}
}

// keep carries rest, the end of the last block, over to the next fill.
func (s *source) keep(rest []byte) {
	if s.mem != nil {
		s.carry = rest
		return
	}
	s.carry = append(s.carry[:0], rest...)
}

// take returns the next block to fold (more is false at the end). When a
// whole block holds no blank line it cannot be cut, so w folds it here,
// under the lock, up to the next blank line.
func (s *source) take(w *folder, buf *[]byte) (data []byte, more bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.eof && len(s.carry) == 0 {
		return nil, false, nil
	}
	data, err = s.fill(buf)
	if err != nil {
		return nil, false, err
	}
	if s.eof {
		return data, false, nil
	}
	if b := bytes.LastIndex(data, blankLine); b >= 0 {
		s.keep(data[b+2:])
		return data[:b+2], true, nil
	}
	s.keep(data)
	w.reset()
	if err := s.serialUntilBlank(w, buf); err != nil {
		return nil, false, err
	}
	return nil, !s.eof || len(s.carry) > 0, nil
}

// serialUntilBlank folds with f until just after a blank line (or the
// end), leaving f's state reset and the rest of the input carried.
func (s *source) serialUntilBlank(f *folder, buf *[]byte) error {
	for {
		data, err := s.fill(buf)
		if err != nil {
			return err
		}
		if i := bytes.Index(data, blankLine); i >= 0 {
			f.feed(data[:i+2])
			s.keep(data[i+2:])
			return nil
		}
		if s.eof {
			f.feed(data)
			f.finish()
			return nil
		}
		cut := bytes.LastIndexByte(data, '\n') + 1
		f.feed(data[:cut])
		s.keep(data[cut:])
	}
}
