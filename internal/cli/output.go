package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/perflab/perflab/internal/clierr"
	"github.com/perflab/perflab/internal/report"
	"github.com/perflab/perflab/internal/termfmt"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/sys/unix"
)

// outputFlags are --format and -o, shared by every reporting command.
type outputFlags struct {
	format  string
	output  string
	allowed []string
	flag    *pflag.Flag // --format, to tell a default from a choice
}

func (o *outputFlags) register(cmd *cobra.Command, def string, allowed ...string) {
	o.allowed = allowed
	cmd.Flags().StringVar(&o.format, "format", def, "output format: "+strings.Join(allowed, "|"))
	cmd.Flags().StringVarP(&o.output, "output", "o", "", "write to FILE instead of standard output (atomically; .json, .md, .html pick the format unless --format is given)")
	o.flag = cmd.Flags().Lookup("format")
	_ = cmd.RegisterFlagCompletionFunc("format", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return allowed, cobra.ShellCompDirectiveNoFileComp
	})
}

func (o *outputFlags) validate() error {
	// -o x.json with no --format writes JSON: a file named .json holding
	// a text report is a trap (snapshot -o good.json, then bisect --good).
	if o.flag != nil && !o.flag.Changed {
		if ext := strings.TrimPrefix(filepath.Ext(o.output), "."); ext != "" {
			for _, a := range o.allowed {
				if a == ext && a != "text" {
					o.format = a
				}
			}
		}
	}
	for _, a := range o.allowed {
		if o.format == a {
			return checkOutputPath(o.output)
		}
	}
	return clierr.Usagef("use one of "+strings.Join(o.allowed, ", "), "unknown --format %q", o.format)
}

// checkOutputPath fails early for an -o the report could never be written
// to, so a bench or profile does not measure for minutes and then lose its
// result at the final rename.
func checkOutputPath(path string) error {
	if path == "" || path == "-" {
		return nil
	}
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return clierr.Usagef("give a file name, e.g. -o "+filepath.Join(path, "report"), "-o %s is a directory", path)
	} else if err == nil && !fi.Mode().IsRegular() {
		// A device, FIFO or socket is written in place (see open), so what
		// matters is whether it is writable, not its directory (/dev).
		if unix.Access(path, unix.W_OK) != nil {
			return clierr.Runtimef("choose another -o", "cannot write %s: no permission", path)
		}
		return nil
	}
	dir := filepath.Dir(path)
	fi, err := os.Stat(dir)
	switch {
	case err != nil || !fi.IsDir():
		return clierr.Runtimef("create the directory or choose another -o", "cannot write %s: directory %s does not exist", path, dir)
	case unix.Access(dir, unix.W_OK) != nil:
		return clierr.Runtimef("choose a writable directory, or run as a user who may write there", "cannot write %s: directory %s is not writable", path, dir)
	}
	return nil
}

// open returns the writer for the report and a commit function. With -o the
// report goes to a temp file beside FILE and is renamed over it on commit,
// so a failed run never leaves a half-written report (or textfile metrics).
func (o *outputFlags) open(stdout io.Writer) (io.Writer, func() error, error) {
	if o.output == "" || o.output == "-" {
		return stdout, func() error { return nil }, nil
	}
	// A device, FIFO or socket (-o /dev/null, -o /dev/stderr, a pipe) is
	// written in place: renaming a temp file over it would replace the
	// device node with a regular file (as root, /dev/null itself).
	if fi, err := os.Stat(o.output); err == nil && !fi.Mode().IsRegular() && !fi.IsDir() {
		f, err := os.OpenFile(o.output, os.O_WRONLY, 0)
		if err != nil {
			return nil, nil, clierr.Runtimef("check the -o path", "cannot write %s: %v", o.output, err)
		}
		return f, f.Close, nil
	}
	return createAtomic(o.output)
}

// createAtomic creates path.tmp-* and returns a commit that renames it.
func createAtomic(path string) (io.Writer, func() error, error) {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return nil, nil, clierr.Runtimef("check that the directory exists and is writable", "cannot write %s: %v", path, err)
	}
	pending.Store(f.Name(), f)
	commit := func() error {
		defer pending.Delete(f.Name())
		if err := f.Sync(); err != nil {
			f.Close()
			os.Remove(f.Name())
			return err
		}
		if err := f.Close(); err != nil {
			os.Remove(f.Name())
			return err
		}
		_ = os.Chmod(f.Name(), 0o644)
		if err := os.Rename(f.Name(), path); err != nil {
			os.Remove(f.Name())
			return fmt.Errorf("write %s: %w", path, err)
		}
		return nil
	}
	return &cleanupWriter{f: f}, commit, nil
}

// pending holds temp files not yet committed; Execute removes them when a
// command fails half-way, so a failed run never leaves .tmp-* files behind.
var pending sync.Map

func removePending() {
	pending.Range(func(k, v any) bool {
		v.(*os.File).Close()
		os.Remove(k.(string))
		pending.Delete(k)
		return true
	})
}

type cleanupWriter struct{ f *os.File }

func (c *cleanupWriter) Write(p []byte) (int, error) { return c.f.Write(p) }

// writeOut runs fn on the output writer and commits it.
func writeOut(o *outputFlags, stdout io.Writer, fn func(io.Writer) error) error {
	w, commit, err := o.open(stdout)
	if err != nil {
		return err
	}
	if err := fn(w); err != nil {
		return err
	}
	return commit()
}

// writeResult renders result through report.Write, the one dispatcher,
// in --format to -o or standard output; colour only on a terminal.
func writeResult(o *outputFlags, stdout io.Writer, result any) error {
	toTTY := (o.output == "" || o.output == "-") && termfmt.ColorEnabled(stdout)
	opt := report.Options{Style: termfmt.Style{On: o.format == report.FormatText && toTTY}}
	return writeOut(o, stdout, func(w io.Writer) error { return report.Write(w, result, o.format, opt) })
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
