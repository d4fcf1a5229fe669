package tools

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/perflab/perflab/internal/deps"
	"github.com/perflab/perflab/internal/hostfs"
)

// sbinDirs are searched after $PATH: servers (nginx, mariadbd) live in
// sbin directories that a non-root user's PATH often lacks.
var sbinDirs = []string{"/usr/sbin", "/sbin", "/usr/local/sbin"}

// lookPath finds the first of bins on $PATH or in an sbin directory.
func lookPath(bins ...string) (string, bool) {
	for _, b := range bins {
		if p, err := exec.LookPath(b); err == nil {
			return p, true
		}
	}
	for _, b := range bins {
		for _, d := range sbinDirs {
			p := filepath.Join(d, b)
			if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
				return p, true
			}
		}
	}
	return "", false
}

// installHint is deps' advice for this host, e.g. "install it: apt-get
// install -y --no-install-recommends sysbench (or: perflab deps install)".
func installHint(tool string) string {
	fs, err := hostfs.New("/")
	if err != nil {
		return "install " + tool
	}
	return deps.InstallHint(fs, tool)
}

// missingError says which tool is missing and how to install it.
func missingError(tool string, bins ...string) error {
	if len(bins) == 0 {
		bins = []string{tool}
	}
	return fmt.Errorf("%s not installed (no %s on PATH or in /usr/sbin; %s)", tool, strings.Join(bins, " or "), installHint(tool))
}

// need finds a tool's binary or says how to install it.
func need(tool string, bins ...string) (string, error) {
	if len(bins) == 0 {
		bins = []string{tool}
	}
	if p, ok := lookPath(bins...); ok {
		return p, nil
	}
	return "", missingError(tool, bins...)
}

// versionCache remembers versions by binary path: Available is asked for
// every suite entry, and spawning a tool per question would be slow.
var versionCache sync.Map

// toolVersion runs the tool's version flag (as the deps catalogue knows it)
// and returns the dotted version.
func toolVersion(ctx context.Context, tool, path string) (string, error) {
	if v, ok := versionCache.Load(path); ok {
		return v.(string), nil
	}
	args := []string{"--version"}
	if t, ok := deps.Lookup(tool); ok && len(t.VersionArgs) > 0 {
		args = t.VersionArgs
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	// Several tools print the version on stderr or exit non-zero (wrk).
	out, _ := exec.CommandContext(ctx, path, args...).CombinedOutput()
	v, err := deps.ParseVersion(string(out))
	if err != nil {
		return "", fmt.Errorf("%s: cannot tell its version from `%s %s`: %v", tool, path, strings.Join(args, " "), err)
	}
	versionCache.Store(path, v)
	return v, nil
}

// versionAtLeast compares dotted versions numerically ("1.0.20" ≥ "1.0").
func versionAtLeast(v, min string) bool {
	a, b := strings.Split(v, "."), strings.Split(min, ".")
	for i := 0; i < len(b); i++ {
		var x, y int
		if i < len(a) {
			x, _ = strconv.Atoi(a[i])
		}
		y, _ = strconv.Atoi(b[i])
		if x != y {
			return x > y
		}
	}
	return true
}

// tooOld is the error for a tool below the version an adapter needs.
// findTool finds tool on PATH and asks its version; a release older than
// min ("" for any) is refused with why (what older ones lack). The path and
// version are returned even then, for the caller to report.
func findTool(ctx context.Context, tool, min, why string) (path, version string, err error) {
	if path, err = need(tool); err != nil {
		return "", "", err
	}
	if version, err = toolVersion(ctx, tool, path); err != nil {
		return path, "", err
	}
	if min != "" && !versionAtLeast(version, min) {
		return path, version, tooOld(tool, version, min, why)
	}
	return path, version, nil
}

func tooOld(tool, have, want, why string) error {
	return fmt.Errorf("%s %s is too old: perflab needs %s or newer (%s; %s)", tool, have, want, why, installHint(tool))
}

// ToolError is a tool that ran and failed: which tool, its exit status,
// the end of what it printed, and how to get a working one.
type ToolError struct {
	Tool     string
	Command  []string
	ExitCode int    // -1 when it was killed or timed out
	Tail     string // last lines of stderr (or stdout when stderr was empty)
	Reason   string // "timed out after 30s", "killed by signal", "output not understood: …"
}

func (e *ToolError) Error() string {
	var b strings.Builder
	b.WriteString(e.Tool)
	switch {
	case e.Reason != "" && e.ExitCode >= 0:
		fmt.Fprintf(&b, " (exit status %d): %s", e.ExitCode, e.Reason)
	case e.Reason != "":
		b.WriteString(": " + e.Reason)
	default:
		fmt.Fprintf(&b, " failed with exit status %d", e.ExitCode)
	}
	if e.Tail != "" {
		b.WriteString(": " + e.Tail)
	}
	fmt.Fprintf(&b, " [command: %s; to install or upgrade %s: %s]", shellJoin(e.Command), e.Tool, strings.TrimPrefix(installHint(e.Tool), "install it: "))
	return b.String()
}

// tail returns the last n non-empty lines of out, joined with " | " and
// cut to a length that fits one line of a report.
func tail(out []byte, n int) string {
	lines := strings.Split(strings.ReplaceAll(string(out), "\r", "\n"), "\n")
	var keep []string
	for i := len(lines) - 1; i >= 0 && len(keep) < n; i-- {
		l := strings.TrimSpace(stripANSI(lines[i]))
		if l != "" {
			keep = append(keep, l)
		}
	}
	for i, j := 0, len(keep)-1; i < j; i, j = i+1, j-1 {
		keep[i], keep[j] = keep[j], keep[i]
	}
	s := strings.Join(keep, " | ")
	if len(s) > 400 {
		s = "…" + s[len(s)-400:]
	}
	return s
}

// shellJoin renders argv so that it can be pasted into a shell.
func shellJoin(argv []string) string {
	out := make([]string, len(argv))
	for i, a := range argv {
		if a == "" || strings.ContainsAny(a, " \t\n'\"\\$`*?[]{}()<>|&;#~") {
			out[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		} else {
			out[i] = a
		}
	}
	return strings.Join(out, " ")
}

// stripANSI removes terminal colour sequences (sockperf prints them even
// into a pipe).
func stripANSI(s string) string {
	if !strings.Contains(s, "\x1b[") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == 0x1b && i+1 < len(s) && s[i+1] == '[' {
			j := i + 2
			for j < len(s) && (s[j] < 0x40 || s[j] > 0x7e) {
				j++
			}
			i = j
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// errParse marks output a parser did not understand.
var errParse = errors.New("output not understood")

func parseErrorf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", errParse, fmt.Sprintf(format, args...))
}
