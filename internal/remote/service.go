package remote

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"time"
)

// Service is a long-running perflab command on a remote host — a peer
// server for a two-host network benchmark — that announces itself with
// one line on stdout and runs until Close.
type Service struct {
	Name  string // the target as written, without the user
	Ready []byte // the first line the command printed

	cancel context.CancelFunc
	done   chan struct{}
	err    error
}

// StartServiceIn starts o.Args in an open session (sharing its copy of
// perflab); Close stops the command and leaves the session open.
func StartServiceIn(ctx context.Context, sess *Session, o ExecOptions) (*Service, error) {
	return startOn(ctx, sess.r, sess.Target, o)
}

func startOn(ctx context.Context, r *Runner, target string, o ExecOptions) (*Service, error) {
	sctx, cancel := context.WithCancel(ctx)
	s := &Service{Name: Name(target), cancel: cancel, done: make(chan struct{})}
	lw := &firstLine{ready: make(chan struct{})}
	go func() {
		defer close(s.done)
		res, err := r.Run(sctx, o.Args, false, lw, o.Stderr)
		if err == nil && res.Code != 0 {
			err = &Error{Kind: KindFailed, Target: target, Msg: fmt.Sprintf("remote %s exited with code %d", o.Args[0], res.Code)}
		}
		s.err = err
	}()
	select {
	case <-lw.ready:
		s.Ready = lw.line()
		return s, nil
	case <-s.done:
		s.stop()
		if s.err == nil {
			s.err = &Error{Kind: KindFailed, Target: target, Msg: "remote " + o.Args[0] + " ended before it was ready"}
		}
		return nil, s.err
	case <-time.After(60 * time.Second):
		s.stop()
		return nil, &Error{Kind: KindFailed, Target: target, Msg: "remote " + o.Args[0] + " not ready after 60 s"}
	}
}

// stop ends the command and waits for its agent.
func (s *Service) stop() {
	s.cancel()
	select {
	case <-s.done:
	case <-time.After(30 * time.Second):
	}
}

// Close stops the remote command (SIGTERM through the agent), waits for
// its agent to clean up; the session stays open.
func (s *Service) Close() error {
	s.stop()
	if s.err == context.Canceled {
		return nil
	}
	return s.err
}

// firstLine collects output until the first newline.
type firstLine struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	ready chan struct{}
	once  sync.Once
}

func (f *firstLine) Write(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.buf.Len() < 16<<20 {
		f.buf.Write(p)
	}
	if bytes.IndexByte(f.buf.Bytes(), '\n') >= 0 {
		f.once.Do(func() { close(f.ready) })
	}
	return len(p), nil
}

func (f *firstLine) line() []byte {
	f.mu.Lock()
	defer f.mu.Unlock()
	b := f.buf.Bytes()
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		b = b[:i]
	}
	return append([]byte(nil), b...)
}
