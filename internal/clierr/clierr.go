// Package clierr carries the user-facing failure of a command: one line that
// names the problem and the fix, and the documented exit code.
//
// Domain packages return ordinary wrapped errors; they use this package only
// where they know better than the CLI which class a failure belongs to (bad
// input vs a runtime failure), so that `perflab` can print a single clear line
// instead of a stack of wrapped messages or a panic trace.
package clierr

import (
	"errors"
	"fmt"
)

// Exit codes, documented in docs/cli.md.
const (
	OK      = 0 // success, nothing at or above the failure threshold
	Check   = 1 // the check failed: findings at or above --fail-on, a regression, drift
	Usage   = 2 // bad flags, arguments or input the user can correct
	Runtime = 3 // the host, a tool or a file failed at run time
)

// Error is a failure with an exit code and an optional hint on how to fix it.
type Error struct {
	Code int
	Msg  string
	Hint string
	Err  error
}

func (e *Error) Error() string {
	s := e.Msg
	if s == "" && e.Err != nil {
		s = e.Err.Error()
	}
	if e.Hint != "" {
		s += " (" + e.Hint + ")"
	}
	return s
}

func (e *Error) Unwrap() error { return e.Err }

// Usagef is bad input the user can fix; hint says how ("" for none).
func Usagef(hint, format string, args ...any) error {
	return &Error{Code: Usage, Msg: fmt.Sprintf(format, args...), Hint: hint}
}

// Runtimef is a failure of the host, a tool or a file.
func Runtimef(hint, format string, args ...any) error {
	return &Error{Code: Runtime, Msg: fmt.Sprintf(format, args...), Hint: hint}
}

// Wrap attaches a code and hint to err, keeping err's message.
func Wrap(code int, err error, hint string) error {
	if err == nil {
		return nil
	}
	return &Error{Code: code, Err: err, Hint: hint}
}

// CheckFailed signals exit code 1 after the command has printed its report;
// msg may be empty when the report already says everything.
func CheckFailed(msg string) error { return &Error{Code: Check, Msg: msg} }

// Code returns the exit code for err: the code of the outermost *Error in its
// chain, or Runtime for any other error.
func Code(err error) int {
	if err == nil {
		return OK
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return Runtime
}

// EditDistance is the Levenshtein distance between a and b (bytes): how
// far a mistyped name is from a known one, for "did you mean" hints.
func EditDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
