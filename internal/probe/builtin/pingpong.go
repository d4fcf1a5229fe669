package builtin

import (
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// pipePair is the two pipes of one ping-pong pair, like perf bench sched
// pipe: the pinger writes a 4-byte token into ab and blocks reading ba; the
// ponger blocks reading ab and answers into ba. Every round trip is two
// wake-ups and, with both threads on one CPU, two context switches.
type pipePair struct {
	ab, ba [2]int
}

func newPipePair() (*pipePair, error) {
	p := &pipePair{ab: [2]int{-1, -1}, ba: [2]int{-1, -1}}
	if err := unix.Pipe2(p.ab[:], unix.O_CLOEXEC); err != nil {
		return nil, fmt.Errorf("pipe2: %w", err)
	}
	if err := unix.Pipe2(p.ba[:], unix.O_CLOEXEC); err != nil {
		p.close()
		return nil, fmt.Errorf("pipe2: %w", err)
	}
	return p, nil
}

func (p *pipePair) close() {
	for _, fd := range []*int{&p.ab[0], &p.ab[1], &p.ba[0], &p.ba[1]} {
		if *fd >= 0 {
			unix.Close(*fd)
			*fd = -1
		}
	}
}

// pingResult is one pair's measurement.
type pingResult struct {
	roundTrips int
	elapsed    time.Duration
	rtts       []float64 // per round trip, ns (only when recording)
	err        error
}

var (
	tokenPing = []byte{'p', 'i', 'n', 'g'}
	tokenQuit = []byte{'q', 'u', 'i', 't'}
)

// readFull reads exactly len(b) bytes, retrying EINTR.
func readFull(fd int, b []byte) error {
	for got := 0; got < len(b); {
		n, err := unix.Read(fd, b[got:])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return err
		}
		if n == 0 {
			return errors.New("unexpected EOF")
		}
		got += n
	}
	return nil
}

// writeFull writes all of b, retrying EINTR.
func writeFull(fd int, b []byte) error {
	for len(b) > 0 {
		n, err := unix.Write(fd, b)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return err
		}
		b = b[n:]
	}
	return nil
}

// pingPong runs one round-trip loop per pair concurrently for d (or until
// stop), pair i's pinger pinned to pingCPU[i] and ponger to pongCPU[i]
// (-1: kernel's choice). With rec[i] non-nil each round trip is timed and
// stored there (up to its capacity).
func pingPong(pairs []*pipePair, pingCPU, pongCPU []int, rec [][]float64, d time.Duration, stop *atomic.Bool) []pingResult {
	n := len(pairs)
	res := make([]pingResult, n)
	var ready, done sync.WaitGroup
	start := make(chan struct{})
	ready.Add(2 * n)
	done.Add(2 * n)
	for i, pp := range pairs {
		go func() { // ponger
			defer done.Done()
			err := lockAndPin(pongCPU[i])
			ready.Done()
			<-start
			if err != nil {
				// The pinger sees no answer; unblock it with a quit.
				_ = writeFull(pp.ba[1], tokenQuit)
				return
			}
			var b [4]byte
			for {
				if err := readFull(pp.ab[0], b[:]); err != nil {
					return
				}
				if b[0] == 'q' {
					return
				}
				if err := writeFull(pp.ba[1], b[:]); err != nil {
					return
				}
			}
		}()
		go func() { // pinger
			defer done.Done()
			err := lockAndPin(pingCPU[i])
			ready.Done()
			<-start
			if err != nil {
				res[i].err = err
				_ = writeFull(pp.ab[1], tokenQuit)
				return
			}
			res[i] = pingLoop(pp, rec[i], d, stop)
			_ = writeFull(pp.ab[1], tokenQuit)
		}()
	}
	ready.Wait()
	close(start)
	done.Wait()
	return res
}

func pingLoop(pp *pipePair, rec []float64, d time.Duration, stop *atomic.Bool) pingResult {
	var b [4]byte
	r := pingResult{rtts: rec[:0]}
	start := time.Now()
	last := time.Duration(0)
	for {
		if err := writeFull(pp.ab[1], tokenPing); err != nil {
			r.err = fmt.Errorf("pipe write: %w", err)
			return r
		}
		if err := readFull(pp.ba[0], b[:]); err != nil {
			r.err = fmt.Errorf("pipe read: %w", err)
			return r
		}
		if b[0] == 'q' {
			r.err = errors.New("partner thread failed to start")
			return r
		}
		r.roundTrips++
		now := time.Since(start)
		if len(r.rtts) < cap(r.rtts) {
			r.rtts = append(r.rtts, float64(now-last))
		}
		last = now
		if now >= d || stop.Load() {
			r.elapsed = now
			return r
		}
	}
}

// percentile returns the q-quantile (0 < q <= 1) of sorted by the nearest
// rank method: the smallest value with at least q of the samples at or
// below it.
func percentile(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(math.Ceil(q * float64(len(sorted))))
	return sorted[max(0, min(rank-1, len(sorted)-1))]
}
