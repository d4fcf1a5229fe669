package builtin

import (
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/perflab/perflab/internal/probe"
)

// paramError is probe.ParamError, named for brevity at the many call sites.
func paramError(probeName, key, format string, args ...any) error {
	return probe.ParamError(probeName, key, format, args...)
}

func checkKnown(probeName string, p, defaults probe.Params) error {
	return probe.CheckKnown(probeName, p, defaults)
}

func intParam(probeName string, p probe.Params, key string, def, lo, hi int) (int, error) {
	return p.IntIn(probeName, key, def, lo, hi)
}

// sizeParam reads a byte size in [lo, hi] that is a multiple of align.
func sizeParam(probeName string, p probe.Params, key string, def, lo, hi, align int64) (int64, error) {
	v, err := p.Size(key, def)
	if err != nil {
		return 0, paramError(probeName, key, "%q is not a size (use e.g. 4096, 64KiB, 256MiB)", p[key])
	}
	if v < lo || v > hi {
		return 0, paramError(probeName, key, "%s is out of range [%s, %s]", fmtBytes(v), fmtBytes(lo), fmtBytes(hi))
	}
	if align > 1 && v%align != 0 {
		return 0, paramError(probeName, key, "%s is not a multiple of %s", fmtBytes(v), fmtBytes(align))
	}
	return v, nil
}

func durationParam(probeName string, p probe.Params, key string, def, lo, hi time.Duration) (time.Duration, error) {
	return p.DurationIn(probeName, key, def, lo, hi)
}

func intsParam(probeName string, p probe.Params, key string, def []int, lo, hi int) ([]int, error) {
	return p.IntsIn(probeName, key, def, lo, hi)
}

// choicesParam reads a comma-separated subset of allowed, keeping allowed's order.
func choicesParam(probeName string, p probe.Params, key string, def []string, allowed []string) ([]string, error) {
	s, ok := p[key]
	if !ok || s == "" {
		return def, nil
	}
	seen := map[string]bool{}
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if !slices.Contains(allowed, f) {
			return nil, paramError(probeName, key, "%q is not one of %s", f, strings.Join(allowed, ", "))
		}
		seen[f] = true
	}
	var out []string
	for _, a := range allowed {
		if seen[a] {
			out = append(out, a)
		}
	}
	return out, nil
}

// choiceParam reads one of allowed.
func choiceParam(probeName string, p probe.Params, key, def string, allowed []string) (string, error) {
	s, ok := p[key]
	if !ok || s == "" {
		return def, nil
	}
	if !slices.Contains(allowed, s) {
		return "", paramError(probeName, key, "%q is not one of %s", s, strings.Join(allowed, ", "))
	}
	return s, nil
}

// boolParam reads true/false (also on/off, yes/no, 1/0).
func boolParam(probeName string, p probe.Params, key string, def bool) (bool, error) {
	s, ok := p[key]
	if !ok || s == "" {
		return def, nil
	}
	switch strings.ToLower(s) {
	case "1", "true", "on", "yes":
		return true, nil
	case "0", "false", "off", "no":
		return false, nil
	}
	return false, paramError(probeName, key, "%q is not a boolean (use true or false)", s)
}

// defaultThreads is 1, 2, 4 … up to the CPUs this process may run on, plus
// that count itself when it is not a power of two.
func defaultThreads() []int {
	n := runtime.NumCPU()
	var out []int
	for t := 1; t <= n; t *= 2 {
		out = append(out, t)
	}
	if out[len(out)-1] != n {
		out = append(out, n)
	}
	return out
}

// oneAndAll is {1, NumCPU} (just {1} on a single CPU).
func oneAndAll() []int {
	if n := runtime.NumCPU(); n > 1 {
		return []int{1, n}
	}
	return []int{1}
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, n := range v {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ",")
}

// fmtBytes prints a size with the largest binary unit that divides it.
func fmtBytes(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%dGiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%dMiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%dKiB", n>>10)
	}
	return fmt.Sprintf("%dB", n)
}
