package remote

import (
	"context"
	"io"
	"time"
)

// Session keeps perflab ready on one host for several runs (a suite
// alternating between hosts): one connection, one copy of the binary,
// held by a holder agent that removes it when the session ends or its
// heartbeat stops.
type Session struct {
	Name   string // the target as written, without the user
	Target string

	c        *Client
	r        *Runner
	cancel   context.CancelFunc
	holdDone chan struct{}
}

// OpenSession connects to target and makes perflab runnable there.
func OpenSession(ctx context.Context, target string, o ExecOptions) (*Session, error) {
	if o.Conn.Notes == nil {
		o.Conn.Notes = o.Stderr
	}
	if o.Binary.Notes == nil {
		o.Binary.Notes = o.Stderr
	}
	c, err := Connect(ctx, target, o.Conn)
	if err != nil {
		return nil, err
	}
	r, err := Prepare(ctx, c, o.Binary)
	if err != nil {
		c.Close()
		return nil, err
	}
	s := &Session{Name: Name(target), Target: target, c: c, r: r, holdDone: make(chan struct{})}
	hctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	s.cancel = cancel
	if r.dir == "" {
		close(s.holdDone) // an installed perflab: each run makes its own directory
		return s, nil
	}
	holder := *r
	holder.mode = "--hold"
	ready := &firstLine{ready: make(chan struct{})}
	go func() {
		defer close(s.holdDone)
		holder.Run(hctx, nil, false, ready, io.Discard) //nolint:errcheck // its end is the session's end
	}()
	select {
	case <-ready.ready:
	case <-s.holdDone:
		s.Close()
		return nil, &Error{Kind: KindFailed, Target: target, Msg: "the remote holder agent did not start"}
	case <-time.After(30 * time.Second):
		s.Close()
		return nil, &Error{Kind: KindFailed, Target: target, Msg: "the remote holder agent did not start within 30 s"}
	}
	s.r.mode = "--keep"
	return s, nil
}

// Run runs perflab args on the host (see Runner.Run).
func (s *Session) Run(ctx context.Context, args []string, export bool, stdout, stderr io.Writer) (*Result, error) {
	return s.r.Run(ctx, args, export, stdout, stderr)
}

// Close ends the holder (which removes the copied binary) and the
// connection.
func (s *Session) Close() error {
	s.cancel()
	select {
	case <-s.holdDone:
	case <-time.After(25 * time.Second):
	}
	cctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s.r.Close(cctx) //nolint:errcheck // best effort, see Exec
	return s.c.Close()
}
