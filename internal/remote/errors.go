package remote

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"syscall"
)

// Kind classifies why a host could not be used, for one-line messages here
// and per-host outcome tables in fleets.
type Kind string

const (
	KindBadTarget      Kind = "bad target"        // the target cannot be parsed or resolved from ~/.ssh/config
	KindUnreachable    Kind = "unreachable"       // DNS, refused, timeout, no route
	KindHostKeyUnknown Kind = "host key unknown"  // not in known_hosts and no --accept-new-host-key
	KindHostKeyChanged Kind = "host key changed"  // known_hosts has another key
	KindAuth           Kind = "permission denied" // no key accepted for this user
	KindLost           Kind = "connection lost"   // dropped while running
	KindNoBinary       Kind = "no perflab binary" // no build for the remote architecture
	KindFailed         Kind = "failed"            // anything else on the remote side
)

// Error is a failure to reach or use a remote host. Error() is one line
// with what to do; Kind is for tables and tests.
type Error struct {
	Kind   Kind
	Target string // as written
	Msg    string
	Hint   string
	Err    error
}

func (e *Error) Error() string {
	s := e.Target + ": " + e.Msg
	if e.Hint != "" {
		s += " (" + e.Hint + ")"
	}
	return s
}

func (e *Error) Unwrap() error { return e.Err }

// KindOf returns err's Kind, or "" when it is not a remote error.
func KindOf(err error) Kind {
	var re *Error
	if errors.As(err, &re) {
		return re.Kind
	}
	return ""
}

// dialError explains a failed TCP connection in one line.
func dialError(name, addr string, err error) error {
	var dns *net.DNSError
	switch {
	case errors.As(err, &dns):
		return &Error{Kind: KindUnreachable, Target: name, Err: err,
			Msg:  fmt.Sprintf("cannot resolve host %q", dns.Name),
			Hint: "check the name, or give HostName in ~/.ssh/config"}
	case errors.Is(err, syscall.ECONNREFUSED):
		return &Error{Kind: KindUnreachable, Target: name, Err: err,
			Msg:  "connection to " + addr + " refused",
			Hint: "is sshd running there and listening on that port? give the port as host:port or Port in ~/.ssh/config"}
	case errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
		return &Error{Kind: KindUnreachable, Target: name, Err: err,
			Msg: "no route to " + addr, Hint: "check the address and the network path"}
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, os.ErrDeadlineExceeded), isTimeout(err):
		return &Error{Kind: KindUnreachable, Target: name, Err: err,
			Msg: "no answer from " + addr + " within the connect timeout", Hint: "host down or a firewall dropping SSH?"}
	}
	return &Error{Kind: KindUnreachable, Target: name, Err: err, Msg: "cannot connect to " + addr + ": " + lastPart(err)}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// lastPart trims Go's nested "dial tcp 1.2.3.4:22: connect: " prefixes.
func lastPart(err error) string {
	s := err.Error()
	if i := strings.LastIndex(s, ": "); i >= 0 && i+2 < len(s) {
		return s[i+2:]
	}
	return s
}
