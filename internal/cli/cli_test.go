package cli

import (
	"bytes"
	"context"
	"io"
	"strings"
	"sync"
	"testing"
)

// runCLI runs perflab in-process with args and an empty standard input and
// returns the exit code, standard output and standard error.
func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	return runCLIWith(t, nil, nil, nil, args...)
}

// runCLIWith is runCLI with a context (nil: background), a standard input
// (nil: empty) and a standard error the test can watch while the command
// runs (nil: a fresh buffer).
func runCLIWith(t *testing.T, ctx context.Context, stdin io.Reader, stderr *syncBuffer, args ...string) (int, string, string) {
	t.Helper()
	if ctx == nil {
		ctx = context.Background()
	}
	if stdin == nil {
		stdin = strings.NewReader("")
	}
	if stderr == nil {
		stderr = &syncBuffer{}
	}
	var out bytes.Buffer
	code := Execute(ctx, args, stdin, &out, stderr)
	return code, out.String(), stderr.String()
}

// syncBuffer is a stderr that a test can watch while the command runs.
type syncBuffer struct {
	mu      sync.Mutex
	b       bytes.Buffer
	onWrite func(string)
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	n, err := s.b.Write(p)
	f := s.onWrite
	s.mu.Unlock()
	if f != nil {
		f(string(p))
	}
	return n, err
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
