package monitor

import (
	"sync"
	"time"

	"github.com/perflab/perflab/internal/run"
)

// Recorder samples in the background at a fixed interval until stopped.
type Recorder struct {
	s        *Sampler
	interval time.Duration
	t0       time.Time
	now      func() time.Time
	stop     chan struct{}
	done     chan struct{}
	mu       sync.Mutex
	prev     Reading
	havePrev bool
	points   []run.MonitorPoint
	errs     int
}

// Start begins recording every interval, counting T from t0. now is the
// clock (time.Now when nil); tests pass their own to make T predictable.
func Start(s *Sampler, interval time.Duration, t0 time.Time, now func() time.Time) *Recorder {
	if now == nil {
		now = time.Now
	}
	r := &Recorder{s: s, interval: interval, t0: t0, now: now, stop: make(chan struct{}), done: make(chan struct{})}
	r.sample()
	go r.loop(interval)
	return r
}

func (r *Recorder) loop(interval time.Duration) {
	defer close(r.done)
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-r.stop:
			return
		case <-t.C:
			r.sample()
		}
	}
}

func (r *Recorder) sample() {
	cur, err := r.s.Read(r.now())
	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil {
		// A missed sample leaves a gap in the series (visible in T)
		// rather than ending the run's monitoring.
		r.errs++
		return
	}
	if r.havePrev {
		r.points = append(r.points, Point(r.prev, cur, r.t0))
	}
	r.prev, r.havePrev = cur, true
}

// Points returns the points so far (for live progress).
func (r *Recorder) Points() []run.MonitorPoint {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]run.MonitorPoint(nil), r.points...)
}

// Stop ends recording and returns the series. A last, shorter interval is
// sampled too, so that a run shorter than one interval still has a point,
// unless it would be so short that its rates were mostly noise.
func (r *Recorder) Stop() (points []run.MonitorPoint, failedReads int) {
	close(r.stop)
	<-r.done
	r.mu.Lock()
	short := r.havePrev && r.now().Sub(r.prev.At) < r.interval/10
	r.mu.Unlock()
	if !short {
		r.sample()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.points, r.errs
}
