// Package probe defines what a benchmark probe is, for the builtin pure-Go
// probes (package builtin) and the adapters around standard tools (package
// tools) alike, so the bench harness can repeat, time, monitor and store any
// of them the same way.
//
// A probe measures one or more metrics per iteration. The harness owns
// repetition, warm-up, adaptive stopping, CPU placement, monitors and
// cancellation; a probe only does one measurement when asked.
package probe

import (
	"context"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/perflab/perflab/internal/run"
)

// Params are a probe's parameters as strings (as given on the command line
// with --param key=value and as recorded in the run).
type Params map[string]string

// Int returns an integer parameter or def.
func (p Params) Int(key string, def int) (int, error) {
	v, ok := p[key]
	if !ok || v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, fmt.Errorf("parameter %s=%q: not an integer", key, v)
	}
	return n, nil
}

// Ints returns a comma-separated integer list parameter ("1,2,4") or def.
func (p Params) Ints(key string, def []int) ([]int, error) {
	v, ok := p[key]
	if !ok || v == "" {
		return def, nil
	}
	var out []int
	for _, f := range strings.Split(v, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return nil, fmt.Errorf("parameter %s=%q: not a list of integers", key, v)
		}
		out = append(out, n)
	}
	return out, nil
}

// Size returns a byte-size parameter ("64KiB", "512MiB", "1G", "4096").
func (p Params) Size(key string, def int64) (int64, error) {
	v, ok := p[key]
	if !ok || v == "" {
		return def, nil
	}
	n, err := ParseSize(v)
	if err != nil {
		return 0, fmt.Errorf("parameter %s: %w", key, err)
	}
	return n, nil
}

// ParseSize parses sizes with binary (KiB, MiB, GiB; K, M, G) suffixes.
func ParseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	mult := int64(1)
	for _, u := range []struct {
		suf string
		m   int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40}, {"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}, {"T", 1 << 40}, {"B", 1}} {
		if strings.HasSuffix(t, u.suf) {
			t, mult = strings.TrimSuffix(t, u.suf), u.m
			break
		}
	}
	n, err := strconv.ParseInt(strings.TrimSpace(t), 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("bad size %q (use e.g. 4096, 64KiB, 512MiB)", s)
	}
	if n > math.MaxInt64/mult {
		// Wrapped around, 17179869185G would read as 1 GiB.
		return 0, fmt.Errorf("size %q is too large", s)
	}
	return n * mult, nil
}

// Merge returns p overlaid with over.
func (p Params) Merge(over Params) Params {
	out := Params{}
	for k, v := range p {
		out[k] = v
	}
	for k, v := range over {
		out[k] = v
	}
	return out
}

// String is "k=v k=v" in key order.
func (p Params) String() string {
	keys := make([]string, 0, len(p))
	for k := range p {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(k + "=" + p[k])
	}
	return b.String()
}

// Env is what a probe gets from the harness.
type Env struct {
	Params Params
	Dir    string    // a private scratch directory (removed by the harness)
	CPUs   []int     // CPUs the probe is pinned to; nil means all
	NCPU   int       // CPUs available to the probe (len(CPUs) or runtime.NumCPU)
	Log    io.Writer // diagnostics (stderr or a discard writer)
	// Tool details that adapters report back for the run record.
	ToolVersion string
	Command     []string
	Notes       []string
}

// Probe is one benchmark.
type Probe interface {
	// Name is the stable id: "cpu", "memory.latency", "sysbench.cpu".
	Name() string
	// Doc is one paragraph: what it measures and how.
	Doc() string
	// Defaults are the default parameters; quick selects the quick suite's
	// smaller ones.
	Defaults(quick bool) Params
	// Metrics lists what Iterate returns for these parameters.
	Metrics(p Params) ([]run.Metric, error)
	// Setup prepares (allocates buffers, starts servers, checks tools).
	Setup(ctx context.Context, env *Env) error
	// Iterate performs one measurement and returns a value per metric name.
	Iterate(ctx context.Context, env *Env) (map[string]float64, error)
	// Teardown releases everything Setup took, also after a failure or
	// cancellation. It must be safe to call when Setup failed half-way.
	Teardown(env *Env) error
}
