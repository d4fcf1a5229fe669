package report

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/perflab/perflab/internal/termfmt"
)

// Formats of output. Not every result has every one: Formats says which.
const (
	FormatText = "text"
	FormatMD   = "md"
	FormatJSON = "json"
	FormatHTML = "html"
)

// Options are what a renderer needs besides the result.
type Options struct {
	// Style colours terminal text (off for files, pipes and NO_COLOR).
	Style termfmt.Style
}

// FormatError is Write's answer for a format the result has no renderer
// for (or a result report cannot render at all: Supported is empty).
type FormatError struct {
	Format    string
	Result    string // what was to be written, e.g. "a fleet report"
	Supported []string
}

func (e *FormatError) Error() string {
	if len(e.Supported) == 0 {
		return fmt.Sprintf("report: no renderer for %s", e.Result)
	}
	return fmt.Sprintf("%s cannot be written as %q (formats: %s)", e.Result, e.Format, strings.Join(e.Supported, ", "))
}

// renderer is one result's writers by format, and its name for errors.
type renderer struct {
	what string
	by   map[string]func(io.Writer) error
}

// Write renders result in format: the one dispatcher every command's
// output goes through. A format the result does not support is a
// *FormatError.
func Write(w io.Writer, result any, format string, o Options) error {
	r := rendererOf(result, o)
	if r.by == nil {
		return &FormatError{Format: format, Result: fmt.Sprintf("%T", result)}
	}
	fn, ok := r.by[format]
	if !ok {
		return &FormatError{Format: format, Result: r.what, Supported: formatsOf(r)}
	}
	return fn(w)
}

// Formats lists the formats result can be written in, text first.
func Formats(result any) []string {
	return formatsOf(rendererOf(result, Options{}))
}

func formatsOf(r renderer) []string {
	order := []string{FormatText, FormatMD, FormatJSON, FormatHTML}
	var fs []string
	for _, f := range order {
		if _, ok := r.by[f]; ok {
			fs = append(fs, f)
		}
	}
	for f := range r.by {
		if !slices.Contains(order, f) {
			fs = append(fs, f)
		}
	}
	slices.Sort(fs[min(len(fs), countIn(fs, order)):])
	return fs
}

func countIn(fs, order []string) int {
	n := 0
	for _, f := range fs {
		if slices.Contains(order, f) {
			n++
		}
	}
	return n
}

// jsonOf writes v as the indented JSON document every command prints.
func jsonOf(v any) func(io.Writer) error {
	return func(w io.Writer) error { return writeIndented(w, v) }
}

// textOf adapts a renderer that cannot fail.
func textOf(fn func(io.Writer)) func(io.Writer) error {
	return func(w io.Writer) error { fn(w); return nil }
}
