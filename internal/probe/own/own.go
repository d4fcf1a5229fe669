// Package own makes a user's own workload a probe: "exec:CMD" runs a
// command per sample (wall and CPU time, peak memory, and the numbers its
// output reports), "http:URL" and "https:URL" load an endpoint with a
// built-in HTTP/1.1 load generator (closed loop, or open loop at a fixed
// rate with latency from the intended send time), and a probes file
// (perflab.yaml) names such probes for a team. They are ordinary
// probe.Probes: the bench harness repeats, interleaves and stores them like
// the builtin ones, and each run records the command or URL (secrets
// redacted) so that only runs of the same thing compare.
//
// Written here rather than driving hyperfine or wrk2 because the harness
// needs one measurement per call with its raw numbers (wall, rusage, the
// command's output; per-request latencies), which neither exposes as a
// library, and because a load generator that shares a 2-core host with
// the server must spend little CPU per request (httpwire.go).
package own

import (
	"fmt"
	"strings"

	"github.com/perflab/perflab/internal/probe"
)

// IsAdHoc says whether a probe name is an exec:, http: or https: probe.
func IsAdHoc(name string) bool {
	return strings.HasPrefix(name, "exec:") || strings.HasPrefix(name, "http:") || strings.HasPrefix(name, "https:")
}

// AdHoc builds the probe a name stands for: "exec:CMD" or "http://…".
func AdHoc(name string) (probe.Probe, error) {
	switch {
	case strings.HasPrefix(name, "exec:"):
		cmd := strings.TrimSpace(strings.TrimPrefix(name, "exec:"))
		d := ExecDef{Cmd: cmd, Timeout: defaultTimeout}
		if cmd == "" {
			return nil, fmt.Errorf("exec: names no command (e.g. 'exec:sysbench cpu run')")
		}
		return NewExec("exec:"+cmd, "", d), nil
	case strings.HasPrefix(name, "http:"), strings.HasPrefix(name, "https:"):
		d := DefaultHTTP(name)
		if _, err := httpDefFrom(d.Params()); err != nil {
			return nil, err
		}
		// The name is stored and exported: a password in the URL is not.
		return NewHTTP(redactURL(name), "", d), nil
	}
	return nil, fmt.Errorf("%q is not an exec: or http: probe", name)
}
