package probe

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/perflab/perflab/internal/clierr"
)

// Validation shared by builtin probes and tool adapters: every bad
// parameter is a usage error naming the probe and the parameter, so the CLI
// prints one line and exits 2 before anything runs.

// ParamError is a bad parameter of a probe.
func ParamError(probeName, key, format string, args ...any) error {
	return clierr.Usagef("see `perflab bench list` for "+probeName+"'s parameters",
		"%s: parameter %s: %s", probeName, key, fmt.Sprintf(format, args...))
}

// CheckKnown rejects keys the probe does not have: a typo must not be
// silently ignored and recorded as if it had been applied.
func CheckKnown(probeName string, p, defaults Params) error {
	for k := range p {
		if _, ok := defaults[k]; !ok {
			known := make([]string, 0, len(defaults))
			for d := range defaults {
				known = append(known, d)
			}
			sort.Strings(known)
			return ParamError(probeName, k, "unknown (known: %s)", strings.Join(known, ", "))
		}
	}
	return nil
}

// IntIn reads an integer parameter in [lo, hi].
func (p Params) IntIn(probeName, key string, def, lo, hi int) (int, error) {
	v, err := p.Int(key, def)
	if err != nil {
		return 0, ParamError(probeName, key, "%q is not an integer", p[key])
	}
	if v < lo || v > hi {
		return 0, ParamError(probeName, key, "%d is out of range [%d, %d]", v, lo, hi)
	}
	return v, nil
}

// IntsIn reads a list of distinct integers in [lo, hi], sorted.
func (p Params) IntsIn(probeName, key string, def []int, lo, hi int) ([]int, error) {
	v, err := p.Ints(key, def)
	if err != nil {
		return nil, ParamError(probeName, key, "%q is not a comma-separated list of integers", p[key])
	}
	if len(v) == 0 {
		return nil, ParamError(probeName, key, "empty list")
	}
	out := slices.Clone(v)
	slices.Sort(out)
	for i, n := range out {
		if n < lo || n > hi {
			return nil, ParamError(probeName, key, "%d is out of range [%d, %d]", n, lo, hi)
		}
		if i > 0 && out[i-1] == n {
			return nil, ParamError(probeName, key, "%d is listed twice", n)
		}
	}
	return out, nil
}

// DurationIn reads a Go duration ("300ms", "2s") in [lo, hi].
func (p Params) DurationIn(probeName, key string, def, lo, hi time.Duration) (time.Duration, error) {
	s, ok := p[key]
	if !ok || s == "" {
		return def, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, ParamError(probeName, key, "%q is not a duration (use e.g. 300ms, 2s)", s)
	}
	if d < lo || d > hi {
		return 0, ParamError(probeName, key, "%v is out of range [%v, %v]", d, lo, hi)
	}
	return d, nil
}
