package tools

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/perflab/perflab/internal/probe"
	"github.com/perflab/perflab/internal/run"
)

// Concurrency sweeps. Seed 000's MySQL peaked at 45k TPS with 20
// connections and fell to 30k with 100: one thread count hides that. The
// server adapters (sysbench.oltp_point_select, redis-benchmark, wrk.nginx,
// etcd) take a "concurrency" parameter (`perflab bench … --concurrency
// 1,20,100`); when it is set, each iteration measures every level in turn
// against the same server, and each metric is reported once per level as
// "<metric>.c<level>", with the metric as its Series and the level as its
// X. So the run stores the whole curve, compare matches the two curves
// level by level (one verdict per level), and bench.CurveNotes reports the
// peak and where throughput falls after it.

// sweepKey is the parameter every server adapter has ("" = no sweep).
const sweepKey = "concurrency"

// maxLevel bounds a level: beyond it the client's own limits, not the
// server, decide.
const maxLevel = 100000

// ParseLevels reads concurrency levels: a list ("1,20,100"), a doubling
// range ("1-128": 1, 2, 4 … 128, the end included even when not a power
// of two), or a stepped range ("20-100/20": 20, 40 … 100). Levels come out
// ascending and distinct.
func ParseLevels(s string) ([]int, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, fmt.Errorf("no levels")
	}
	var out []int
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		lo, hi, isRange := strings.Cut(part, "-")
		if !isRange {
			n, err := level(part)
			if err != nil {
				return nil, err
			}
			out = append(out, n)
			continue
		}
		step := 0
		if h, st, ok := strings.Cut(hi, "/"); ok {
			var err error
			if step, err = strconv.Atoi(strings.TrimSpace(st)); err != nil || step < 1 {
				return nil, fmt.Errorf("%q: the step after / must be a positive integer", part)
			}
			hi = h
		}
		a, err := level(lo)
		if err != nil {
			return nil, err
		}
		b, err := level(hi)
		if err != nil {
			return nil, err
		}
		if a > b {
			return nil, fmt.Errorf("%q: the range runs backwards", part)
		}
		for x := a; x <= b; {
			out = append(out, x)
			if len(out) > 64 {
				return nil, fmt.Errorf("%q: more than 64 levels", s)
			}
			if step > 0 {
				x += step
			} else {
				x *= 2
			}
		}
		if out[len(out)-1] != b {
			out = append(out, b)
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

func level(s string) (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || n < 1 || n > maxLevel {
		return 0, fmt.Errorf("%q is not a concurrency level (an integer from 1 to %d)", s, maxLevel)
	}
	return n, nil
}

// sweepParam reads the concurrency parameter; nil means no sweep.
func sweepParam(probeName string, p probe.Params) ([]int, error) {
	v := strings.TrimSpace(p[sweepKey])
	if v == "" {
		return nil, nil
	}
	levels, err := ParseLevels(v)
	if err != nil {
		return nil, paramError(probeName, sweepKey, "%v (use e.g. 1,20,100 or 1-128 or 20-100/20)", err)
	}
	return levels, nil
}

// sweepName is a metric's name at one level.
func sweepName(metric string, level int) string { return metric + ".c" + strconv.Itoa(level) }

// sweepMetrics expands each metric into one per level, in level order
// within each metric, each on the curve named after the metric.
func sweepMetrics(ms []run.Metric, levels []int, xunit string) []run.Metric {
	if len(levels) == 0 {
		return ms
	}
	var out []run.Metric
	for _, m := range ms {
		for _, l := range levels {
			c := m
			c.Name, c.Series, c.X, c.XUnit = sweepName(m.Name, l), m.Name, float64(l), xunit
			out = append(out, c)
		}
	}
	return out
}

// sweepIterate measures once per level: set applies the level, once
// measures. Without levels it is once.
func sweepIterate(ctx context.Context, levels []int, set func(int), once func(context.Context) (map[string]float64, error)) (map[string]float64, error) {
	if len(levels) == 0 {
		return once(ctx)
	}
	out := map[string]float64{}
	for _, l := range levels {
		set(l)
		v, err := once(ctx)
		if err != nil {
			return nil, fmt.Errorf("at concurrency %d: %w", l, err)
		}
		for k, x := range v {
			out[sweepName(k, l)] = x
		}
	}
	return out, nil
}
