package factpath

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/perflab/perflab/internal/monitor"
)

// Facts compare's explanation names besides the snapshot's, each under its
// own root: how each run was made (run[PROBE].…, compare.DiffRuns), the
// host-activity series during the runs (monitor.FIELD, monitor.Fields) and
// the host-noise reading (hostnoise.…, compare's hostNoiseDiffs).

// RunFacts are the facts of how a run was made that compare.DiffRuns
// compares, at run[PROBE].<field>.
type RunFacts struct {
	Params      map[string]string `json:"params"`       // probe parameters
	CPUs        string            `json:"cpus"`         // CPU placement
	Tool        string            `json:"tool"`         // external tool, "" for builtin probes
	ToolVersion string            `json:"tool_version"` // its version
}

// HostDriftFacts are the host-drift reference readings compared between
// runs (compare.HostDrift): how fast the host itself ran, per workload.
type HostDriftFacts struct {
	CPU     float64 `json:"cpu"`     // dependent integer chain, speed change in percent
	Memory  float64 `json:"memory"`  // 64 MiB sequential read, speed change in percent
	Syscall float64 `json:"syscall"` // getppid, speed change in percent
}

// HostNoiseFacts is the host-noise reading compared between runs.
type HostNoiseFacts struct {
	LostPct float64 `json:"lost_pct"` // share of a spinning thread's time taken in gaps
}

// extraRoots are the non-snapshot roots: name → how to check below it.
var extraRoots = map[string]func(segs []string) error{
	"run": func(segs []string) error {
		if len(segs) == 0 {
			return nil
		}
		if segs[0] != "[*]" {
			return fmt.Errorf("run is a list of probes: name one as run[PROBE] or run[*], not .%s", segs[0])
		}
		return check(reflect.TypeOf(RunFacts{}), segs[1:], "run[*]")
	},
	"hostnoise": func(segs []string) error {
		return check(reflect.TypeOf(HostNoiseFacts{}), segs, "hostnoise")
	},
	"hostdrift": func(segs []string) error {
		return check(reflect.TypeOf(HostDriftFacts{}), segs, "hostdrift")
	},
	"monitor": func(segs []string) error {
		if len(segs) == 0 {
			return nil
		}
		if _, ok := monitor.FieldByName(segs[0]); !ok && segs[0] != "*" {
			var names []string
			for _, f := range monitor.Fields {
				names = append(names, f.Name)
			}
			return fmt.Errorf("monitor has no field %q (fields: %s)", segs[0], strings.Join(names, ", "))
		}
		if len(segs) > 1 {
			return fmt.Errorf("monitor.%s is a value: nothing below it", segs[0])
		}
		return nil
	},
}

// extraPaths lists the non-snapshot catalogue paths.
func extraPaths() []string {
	out := []string{"run", "run[*].params", "run[*].params.*", "run[*].cpus", "run[*].tool", "run[*].tool_version", "hostnoise", "hostnoise.lost_pct", "hostdrift", "hostdrift.cpu", "hostdrift.memory", "hostdrift.syscall", "monitor"}
	for _, f := range monitor.Fields {
		out = append(out, "monitor."+f.Name)
	}
	return out
}
