package fold

import (
	"bytes"
	"errors"
	"io"
	"slices"
	"strings"
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

// Fold reads `perf script` output from r and folds it.
func Fold(r io.Reader, opt Options) (*Result, error) {
	return fold(r, opt, blockSize)
}

// fold is Fold with the block size as a parameter, so tests can cut tiny
// inputs into many blocks.
func fold(r io.Reader, opt Options, block int) (*Result, error) {
	if opt.TID {
		opt.PID = true
	}
	main := newFolder(opt)
	var workers []*folder
	var err error
	if opt.Threads <= 1 {
		err = streamSerial(r, main)
	} else {
		workers, err = streamParallel(r, main, opt.Threads, block)
	}
	if err != nil {
		return nil, err
	}
	for _, w := range workers {
		for k, i := range w.index {
			main.addString(k, w.counts[i])
		}
		main.mergeStats(w)
	}
	return main.result(), nil
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

func (f *folder) result() *Result {
	p := &folded.Profile{Stacks: make([]folded.Stack, 0, len(f.index))}
	for k, i := range f.index {
		p.Stacks = append(p.Stacks, folded.Stack{Frames: k, Count: f.counts[i]})
	}
	slices.SortFunc(p.Stacks, func(a, b folded.Stack) int { return strings.Compare(a.Frames, b.Frames) })
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
// line and folds them on worker goroutines. The main folder handles what
// cannot be cut safely: the start of the input until the event type to
// fold is known, and any stretch with no blank line in a whole block.
func streamParallel(r io.Reader, main *folder, threads, block int) ([]*folder, error) {
	type job struct{ base, data []byte }
	free := make(chan []byte, 2*threads+2)
	getBuf := func() []byte {
		select {
		case b := <-free:
			return b[:cap(b)]
		default:
			return make([]byte, block)
		}
	}
	jobs := make(chan job, threads)
	var wg sync.WaitGroup
	var workers []*folder
	started := false
	start := func() {
		started = true
		for i := 0; i < threads; i++ {
			w := main.fork()
			workers = append(workers, w)
			wg.Add(1)
			go func() {
				defer wg.Done()
				for j := range jobs {
					w.reset()
					w.feed(j.data)
					w.finish()
					select {
					case free <- j.base:
					default:
					}
				}
			}()
		}
	}
	finish := func() []*folder {
		if started {
			close(jobs)
			wg.Wait()
		}
		return workers
	}

	sep := []byte("\n\n")
	buf := getBuf()
	carry := 0
	// moveOn starts the next block with rest, the unfolded tail of this one.
	moveOn := func(rest []byte) []byte {
		next := getBuf()
		if len(rest) >= len(next)/2 {
			next = make([]byte, 2*len(rest)+block)
		}
		carry = copy(next, rest)
		return next
	}
	for {
		n, err := io.ReadFull(r, buf[carry:])
		data := buf[:carry+n]
		eof := errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
		if err != nil && !eof {
			finish()
			return nil, err
		}
		// Serial part: until the event filter is known and the main
		// folder has just seen a blank line, fold up to each blank line.
		for len(data) > 0 && (!main.filterSet || !main.clean) {
			i := bytes.Index(data, sep)
			if i < 0 {
				break
			}
			main.feed(data[:i+2])
			data = data[i+2:]
		}
		if eof {
			if main.filterSet && main.clean && len(data) > 0 {
				if !started {
					start()
				}
				jobs <- job{buf, data}
			} else {
				main.feed(data)
			}
			main.finish()
			return finish(), nil
		}
		if main.filterSet && main.clean {
			if b := bytes.LastIndex(data, sep); b >= 0 {
				if !started {
					start()
				}
				next := moveOn(data[b+2:])
				jobs <- job{buf, data[:b+2]}
				buf = next
				continue
			}
		}
		// No blank line to cut at: fold the complete lines here.
		rest := data
		if last := bytes.LastIndexByte(data, '\n'); last >= 0 {
			main.feed(data[:last+1])
			rest = data[last+1:]
		}
		next := moveOn(rest)
		select {
		case free <- buf:
		default:
		}
		buf = next
	}
}
