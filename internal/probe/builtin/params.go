package builtin

import (
	"fmt"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/perflab/perflab/internal/clierr"
	"github.com/perflab/perflab/internal/probe"
)

// paramError is a bad parameter: a usage error naming the parameter, so the
// CLI prints one line and exits 2.
func paramError(probeName, key, format string, args ...any) error {
	return clierr.Usagef("see `perflab bench list` for "+probeName+"'s parameters",
		"%s: parameter %s: %s", probeName, key, fmt.Sprintf(format, args...))
}

// checkKnown rejects keys the probe does not have, so a typo is not silently
// ignored and the run recorded with parameters that did nothing.
func checkKnown(probeName string, p probe.Params, defaults probe.Params) error {
	for k := range p {
		if _, ok := defaults[k]; !ok {
			known := make([]string, 0, len(defaults))
			for d := range defaults {
				known = append(known, d)
			}
			sort.Strings(known)
			return paramError(probeName, k, "unknown (known: %s)", strings.Join(known, ", "))
		}
	}
	return nil
}

// intParam reads an integer in [lo, hi].
func intParam(probeName string, p probe.Params, key string, def, lo, hi int) (int, error) {
	v, err := p.Int(key, def)
	if err != nil {
		return 0, paramError(probeName, key, "%q is not an integer", p[key])
	}
	if v < lo || v > hi {
		return 0, paramError(probeName, key, "%d is out of range [%d, %d]", v, lo, hi)
	}
	return v, nil
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

// durationParam reads a Go duration ("300ms", "1s") in [lo, hi].
func durationParam(probeName string, p probe.Params, key string, def, lo, hi time.Duration) (time.Duration, error) {
	s, ok := p[key]
	if !ok || s == "" {
		return def, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, paramError(probeName, key, "%q is not a duration (use e.g. 300ms, 2s)", s)
	}
	if d < lo || d > hi {
		return 0, paramError(probeName, key, "%v is out of range [%v, %v]", d, lo, hi)
	}
	return d, nil
}

// intsParam reads a list of distinct integers in [lo, hi], sorted.
func intsParam(probeName string, p probe.Params, key string, def []int, lo, hi int) ([]int, error) {
	v, err := p.Ints(key, def)
	if err != nil {
		return nil, paramError(probeName, key, "%q is not a comma-separated list of integers", p[key])
	}
	if len(v) == 0 {
		return nil, paramError(probeName, key, "empty list")
	}
	out := slices.Clone(v)
	slices.Sort(out)
	for i, n := range out {
		if n < lo || n > hi {
			return nil, paramError(probeName, key, "%d is out of range [%d, %d]", n, lo, hi)
		}
		if i > 0 && out[i-1] == n {
			return nil, paramError(probeName, key, "%d is listed twice", n)
		}
	}
	return out, nil
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
