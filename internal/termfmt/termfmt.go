// Package termfmt decides how terminal output looks: whether a writer is a
// TTY, whether colour is allowed (https://no-color.org), and the few ANSI
// styles perflab uses. Every command goes through it so that NO_COLOR and
// pipes behave the same everywhere.
package termfmt

import (
	"io"
	"os"

	"golang.org/x/term"
)

// IsTTY reports whether w is a terminal.
func IsTTY(w io.Writer) bool {
	f, ok := isFile(w)
	return ok && term.IsTerminal(int(f.Fd()))
}

// ColorEnabled reports whether ANSI colour may be written to w: only to a TTY,
// never when NO_COLOR is set to anything non-empty, and never for TERM=dumb.
func ColorEnabled(w io.Writer) bool {
	if os.Getenv("NO_COLOR") != "" || os.Getenv("TERM") == "dumb" {
		return false
	}
	if os.Getenv("PERFLAB_FORCE_COLOR") != "" {
		return true
	}
	return IsTTY(w)
}

// Style wraps text in ANSI codes when enabled.
type Style struct{ On bool }

func (s Style) wrap(code, text string) string {
	if !s.On {
		return text
	}
	return "\x1b[" + code + "m" + text + "\x1b[0m"
}

func (s Style) Red(t string) string    { return s.wrap("31", t) }
func (s Style) Green(t string) string  { return s.wrap("32", t) }
func (s Style) Yellow(t string) string { return s.wrap("33", t) }
func (s Style) Blue(t string) string   { return s.wrap("34", t) }
func (s Style) Bold(t string) string   { return s.wrap("1", t) }
func (s Style) Dim(t string) string    { return s.wrap("2", t) }
