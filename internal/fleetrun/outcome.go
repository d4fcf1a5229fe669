package fleetrun

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"sync"

	"github.com/perflab/perflab/internal/remote"
)

func asRemote(err error, re **remote.Error) bool { return errors.As(err, re) }

// Counts returns how many hosts ended in each status.
func (r *Report) Counts() map[Status]int {
	n := map[Status]int{}
	for _, h := range r.Hosts {
		n[h.Status]++
	}
	return n
}

// Failed is the number of hosts that did not run the command.
func (r *Report) Failed() int {
	n := 0
	for _, h := range r.Hosts {
		if h.Status.Failure() {
			n++
		}
	}
	return n
}

// syncWriter serialises the progress lines of parallel hosts.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

// lineWriter prefixes every complete line with "[host] ", so the
// interleaved stderr of parallel hosts stays attributable.
type lineWriter struct {
	mu     sync.Mutex
	w      io.Writer
	prefix string
	buf    []byte
}

func prefixWriter(w io.Writer, host string) io.Writer {
	return &lineWriter{w: w, prefix: "[" + host + "] "}
}

func (l *lineWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = append(l.buf, p...)
	for {
		i := bytes.IndexAny(l.buf, "\n\r")
		if i < 0 {
			break
		}
		line := strings.TrimSpace(string(l.buf[:i]))
		l.buf = l.buf[i+1:]
		if line != "" {
			if _, err := io.WriteString(l.w, l.prefix+line+"\n"); err != nil {
				return len(p), err
			}
		}
	}
	return len(p), nil
}
