package tools

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/perflab/perflab/internal/cpuset"
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

func intsParam(probeName string, p probe.Params, key string, def []int, lo, hi int) ([]int, error) {
	return p.IntsIn(probeName, key, def, lo, hi)
}

func sizeParam(probeName string, p probe.Params, key string, def, lo, hi int64) (int64, error) {
	v, err := p.Size(key, def)
	if err != nil {
		return 0, paramError(probeName, key, "%q is not a size (use e.g. 4096, 64KiB, 256MiB)", p[key])
	}
	if v < lo || v > hi {
		return 0, paramError(probeName, key, "%d bytes is out of range [%d, %d]", v, lo, hi)
	}
	return v, nil
}

// runDuration reads the "duration" parameter every time-bound adapter
// has: from 1s to 10 minutes, def when unset, and whole seconds, since
// the tools take integer seconds.
func runDuration(probeName string, p probe.Params, def time.Duration) (time.Duration, error) {
	d, err := p.DurationIn(probeName, "duration", def, time.Second, 10*time.Minute)
	if err != nil {
		return 0, err
	}
	if d%time.Second != 0 {
		return 0, paramError(probeName, "duration", "%v: this tool takes whole seconds", d)
	}
	return d, nil
}

// listParam reads a comma-separated list whose items must be in allowed,
// keeping the user's order (it is the order the tool runs them).
func listParam(probeName string, p probe.Params, key, def string, allowed []string) ([]string, error) {
	v, ok := p[key]
	if !ok || v == "" {
		v = def
	}
	var out []string
	for _, f := range strings.Split(v, ",") {
		f = strings.TrimSpace(f)
		if !slices.Contains(allowed, f) {
			return nil, paramError(probeName, key, "%q is not one of %s", f, strings.Join(allowed, ", "))
		}
		if slices.Contains(out, f) {
			return nil, paramError(probeName, key, "%q is listed twice", f)
		}
		out = append(out, f)
	}
	if len(out) == 0 {
		return nil, paramError(probeName, key, "empty list")
	}
	return out, nil
}

// cpusParam reads a CPU list ("0-1,4"); "" means no pinning.
func cpusParam(probeName string, p probe.Params, key string) ([]int, error) {
	v := strings.TrimSpace(p[key])
	if v == "" {
		return nil, nil
	}
	cpus, err := cpuset.ParseList(v)
	if err != nil || len(cpus) == 0 {
		return nil, paramError(probeName, key, "%q is not a CPU list (use e.g. 0-1,4)", v)
	}
	return cpus, nil
}

// placement is where a client/server probe runs its two sides.
type placement struct {
	server, client []int
}

func placementParams(probeName string, p probe.Params) (placement, error) {
	var pl placement
	var err error
	if pl.server, err = cpusParam(probeName, p, "server_cpus"); err != nil {
		return pl, err
	}
	if pl.client, err = cpusParam(probeName, p, "client_cpus"); err != nil {
		return pl, err
	}
	return pl, nil
}

// withPlacement adds the server_cpus and client_cpus parameters (empty:
// the processes inherit perflab's own placement).
func withPlacement(p probe.Params) probe.Params {
	p["server_cpus"] = ""
	p["client_cpus"] = ""
	return p
}

// placementNote says where the sides ran, for the run record.
func placementNote(pl placement) string {
	side := func(c []int) string {
		if len(c) == 0 {
			return "unpinned"
		}
		return "CPUs " + cpuset.FormatList(c)
	}
	return "placement: server " + side(pl.server) + ", client " + side(pl.client)
}

func secondsArg(d time.Duration) string {
	return fmt.Sprintf("%d", int(d/time.Second))
}
