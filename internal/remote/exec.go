package remote

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/perflab/perflab/internal/run"
)

// ExecOptions configure one remote command.
type ExecOptions struct {
	Conn   Options
	Binary BinaryOptions
	Args   []string // perflab arguments, without --on and local-only flags
	Export bool     // bring back the runs the command stored
	Stdout io.Writer
	Stderr io.Writer
}

// Exec connects to target, makes perflab runnable there, runs Args and
// cleans up. The result's Export, when asked for, holds the stored runs
// attributed to the target (see Attribute).
func Exec(ctx context.Context, target string, o ExecOptions) (*Result, error) {
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
	defer c.Close()
	r, err := Prepare(ctx, c, o.Binary)
	if err != nil {
		return nil, err
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		r.Close(cctx) //nolint:errcheck // best effort: the agent already removed it, or the connection is gone and the agent's sweep will
	}()
	return r.Run(ctx, o.Args, o.Export, o.Stdout, o.Stderr)
}

// Attribute reads a run export from a remote host and attributes every
// run to name (the target as the user wrote it, or its inventory name), so
// clones that share a hostname or machine-id stay apart; the snapshots
// keep the host's own hostname and machine-id as facts.
func Attribute(export []byte, name string) (*run.Export, error) {
	ex, err := run.ReadExport(bytes.NewReader(export))
	if err != nil {
		return nil, fmt.Errorf("runs from %s: %w", name, err)
	}
	for _, r := range ex.Runs {
		r.Host = name
	}
	return ex, nil
}

// Name is the name runs on target are attributed to: the target as
// written, without the user.
func Name(target string) string {
	if i := strings.LastIndex(target, "@"); i >= 0 {
		return target[i+1:]
	}
	return target
}

// ForwardArgs removes the flags that only mean something here (the
// targets, host-key and binary options, the local store and output file)
// from a perflab command line, so the rest runs unchanged there. value
// flags take their value as the next argument or after '='.
func ForwardArgs(args []string, valueFlags, boolFlags []string) []string {
	isIn := func(a string, set []string) bool {
		for _, s := range set {
			if a == s {
				return true
			}
		}
		return false
	}
	var out []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			out = append(out, args[i:]...)
			break
		}
		name, _, hasVal := strings.Cut(a, "=")
		switch {
		case isIn(name, boolFlags):
			continue
		case isIn(name, valueFlags):
			if !hasVal {
				i++
			}
			continue
		case len(a) > 2 && a[0] == '-' && a[1] != '-' && isIn(a[:2], valueFlags):
			continue // -ofile
		}
		out = append(out, a)
	}
	return out
}
