package bench

import (
	"fmt"
	"io"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/perflab/perflab/internal/run"
)

// Phase is what the harness is doing with the current probe.
type Phase string

const (
	PhaseSetup   Phase = "setup"
	PhaseWarmup  Phase = "warm-up"
	PhaseMeasure Phase = "measure"
)

// Status is the state of the current probe, for progress display.
type Status struct {
	Index, Total int // position in the session (0-based) and its length
	Probe        string
	Phase        Phase
	Warmup       int // warm-up iteration in progress (1-based)
	N            int // measured iterations so far
	MaxRuns      int
	Worst        string  // the metric with the widest CI
	CIRel        float64 // its relative CI half-width (+Inf: no CI yet)
	Elapsed      time.Duration
	Budget       time.Duration
	LastIter     time.Duration // typical (median) iteration time
	ETA          time.Duration // estimated time until this probe stops
}

// Progress receives the harness's events.
type Progress interface {
	Start(Status)
	Update(Status)
	Done(*run.Run)
}

type nopProgress struct{}

func (nopProgress) Start(Status)  {}
func (nopProgress) Update(Status) {}
func (nopProgress) Done(*run.Run) {}

// eta estimates the time left for the current probe: the iterations the
// precision target still needs — the CI half-width shrinks about as 1/√n, so
// n·(w/target)² samples should reach it — capped by the repetition cap and
// the budget.
func eta(st Status, opt Options) time.Duration {
	left := st.Budget - st.Elapsed
	if left < 0 {
		left = 0
	}
	if st.LastIter <= 0 {
		return left
	}
	runs := st.MaxRuns - st.N
	if opt.Precision > 0 {
		need := opt.MinRuns - st.N
		if !math.IsInf(st.CIRel, 1) && st.CIRel > opt.Precision {
			r := st.CIRel / opt.Precision
			need = max(need, int(math.Ceil(float64(st.N)*r*r))-st.N)
		} else if math.IsInf(st.CIRel, 1) {
			need = max(need, 1)
		}
		runs = min(runs, need)
	}
	if runs < 0 {
		runs = 0
	}
	return min(time.Duration(runs)*st.LastIter, left)
}

// NewProgress renders progress to w (stderr): on a TTY one line rewritten in
// place at most ten times a second; otherwise plain lines, one when a probe
// starts, one when it ends and one every ten seconds in between, so logs of
// CI jobs stay readable.
func NewProgress(w io.Writer, tty bool) Progress {
	return &lineProgress{w: w, tty: tty, now: time.Now}
}

type lineProgress struct {
	mu    sync.Mutex
	w     io.Writer
	tty   bool
	now   func() time.Time
	last  time.Time
	dirty bool
}

func (p *lineProgress) Start(st Status) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.tty {
		p.draw(st)
		return
	}
	fmt.Fprintf(p.w, "[%d/%d] %s: starting (budget %s, at most %d runs)\n", st.Index+1, st.Total, st.Probe, fmtDur(st.Budget), st.MaxRuns)
	p.last = p.now()
}

func (p *lineProgress) Update(st Status) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	if p.tty {
		if now.Sub(p.last) >= 100*time.Millisecond {
			p.draw(st)
			p.last = now
		}
		return
	}
	if now.Sub(p.last) >= 10*time.Second {
		fmt.Fprintf(p.w, "[%d/%d] %s\n", st.Index+1, st.Total, statusText(st))
		p.last = now
	}
}

func (p *lineProgress) draw(st Status) {
	fmt.Fprintf(p.w, "\r\x1b[K[%d/%d] %s", st.Index+1, st.Total, statusText(st))
	p.dirty = true
}

func (p *lineProgress) Done(r *run.Run) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.tty && p.dirty {
		fmt.Fprint(p.w, "\r\x1b[K")
		p.dirty = false
	}
	n := 0
	if len(r.Metrics) > 0 {
		n = len(r.Values(r.Metrics[0].Name))
	}
	msg := fmt.Sprintf("%s: %d samples in %s, stopped by %s", r.Probe, n, fmtDur(r.Ended.Sub(r.Started)), r.Stop)
	if r.Error != "" {
		msg += ": " + r.Error
	}
	fmt.Fprintln(p.w, msg)
}

func statusText(st Status) string {
	var b strings.Builder
	b.WriteString(st.Probe)
	switch st.Phase {
	case PhaseSetup:
		b.WriteString("  setting up")
	case PhaseWarmup:
		fmt.Fprintf(&b, "  warm-up %d", st.Warmup)
	default:
		fmt.Fprintf(&b, "  n=%d", st.N)
		if math.IsInf(st.CIRel, 1) {
			b.WriteString("  CI: needs more samples")
		} else {
			fmt.Fprintf(&b, "  CI ±%.2f%% (%s)", 100*st.CIRel, st.Worst)
		}
		fmt.Fprintf(&b, "  ETA %s", fmtDur(st.ETA))
	}
	return b.String()
}

func fmtDur(d time.Duration) string {
	switch {
	case d >= time.Minute:
		return d.Round(time.Second).String()
	case d >= time.Second:
		return fmt.Sprintf("%.1fs", d.Seconds())
	default:
		return d.Round(time.Millisecond).String()
	}
}
