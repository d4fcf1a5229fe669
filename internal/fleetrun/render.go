package fleetrun

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"text/tabwriter"

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

// WriteJSON writes the report with every host's output.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteText writes each host's output under a header, then the outcome
// table.
func (r *Report) WriteText(w io.Writer) error {
	for _, h := range r.Hosts {
		body := h.Text
		if len(h.Output) > 0 {
			var b bytes.Buffer
			if json.Indent(&b, h.Output, "", "  ") == nil {
				body = b.String() + "\n"
			}
		}
		if body == "" {
			continue
		}
		fmt.Fprintf(w, "==> %s (%s) <==\n%s", h.Host, h.Status, body)
		if !strings.HasSuffix(body, "\n") {
			fmt.Fprintln(w)
		}
		fmt.Fprintln(w)
	}
	return r.WriteTable(w)
}

// WriteTable writes the per-host outcome table and a summary line.
func (r *Report) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "HOST\tADDRESS\tOUTCOME\tTIME\tSTORED\tREASON")
	for _, h := range r.Hosts {
		stored := "-"
		if len(h.Stored) > 0 {
			stored = fmt.Sprint(len(h.Stored))
		}
		reason := h.Reason
		if reason == "" {
			reason = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%.1f s\t%s\t%s\n", h.Host, h.Address, h.Status, h.Seconds, stored, reason)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	n := r.Counts()
	var parts []string
	for _, s := range []Status{OK, Findings, Unreachable, HostKey, Failed} {
		if n[s] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n[s], s))
		}
	}
	_, err := fmt.Fprintf(w, "%d host(s), at most %d at once (--forks %d): %s\n", len(r.Hosts), r.MaxOpenSessions, r.Forks, strings.Join(parts, ", "))
	return err
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
