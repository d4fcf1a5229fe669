package compare

import (
	"fmt"
	"math"
	"slices"

	"github.com/perflab/perflab/internal/knowledge"
	"github.com/perflab/perflab/internal/run"
	"github.com/perflab/perflab/internal/stats"
)

// Host drift. Every run from 'perflab bench' carries readings of the
// host-drift reference (package hostnoise: a fixed CPU chain, a 64 MiB
// sequential read and getppid) before and after it. They measure the host,
// never the system under test, so a difference between the sides' readings
// is the host drifting: neighbours, frequency, memory bandwidth taken by
// other guests.
//
// For each reference kind the sides' readings are compared with the
// run-level model (stats.CompareRuns; every reading is one unit). A metric
// whose change is explained by the reference of its kind is marked
// HostDrift: dividing its speed ratio by the reference's leaves a change
// no larger than the minimum effect (stats.MinEffect × margin). The kind of
// a metric is that of its first area among memory, cpu, then
// syscall/timer/network (knowledge.AreasOf); disk metrics have none.

// RefKind names a reference workload.
type RefKind string

const (
	RefCPU     RefKind = "cpu"
	RefMemory  RefKind = "memory"
	RefSyscall RefKind = "syscall"
)

// HostDrift is how fast the host itself ran on the other side than on the
// baseline, by one reference workload.
type HostDrift struct {
	Kind RefKind `json:"kind"`
	// SpeedPct is the change in the reference's speed, other vs base
	// (negative: the host was slower), with its interval.
	SpeedPct   float64 `json:"speed_pct"`
	SpeedLoPct float64 `json:"speed_lo_pct"`
	SpeedHiPct float64 `json:"speed_hi_pct"`
	Readings   [2]int  `json:"readings"` // per side
	// Significant: the interval lies beyond the minimum effect.
	Significant bool `json:"significant"`
	// ConfoundedBy lists the differing settings (knowledge entry ids)
	// that move this reference workload (knowledge.ReferenceConfounders):
	// its movement is theirs, not the host's, and explains nothing.
	ConfoundedBy []string `json:"confounded_by,omitempty"`
}

// refSpeed extracts a reading's speed for one kind (higher is faster).
func refSpeed(k RefKind, r *run.Reference) float64 {
	switch k {
	case RefCPU:
		if r.CPUNsPerOp > 0 {
			return 1 / r.CPUNsPerOp
		}
	case RefMemory:
		return r.MemGBps
	case RefSyscall:
		if r.SyscallNs > 0 {
			return 1 / r.SyscallNs
		}
	}
	return math.NaN()
}

func refSpeeds(k RefKind, runs []*run.Run) []float64 {
	var out []float64
	for _, r := range runs {
		if r.Noise == nil {
			continue
		}
		for _, nr := range []*run.NoiseReading{r.Noise.Before, r.Noise.After} {
			if nr != nil && nr.Reference != nil {
				if v := refSpeed(k, nr.Reference); v > 0 {
					out = append(out, v)
				}
			}
		}
	}
	return out
}

// hostDrift compares the sides' reference readings, kind by kind. Kinds
// with fewer than two readings on a side are left out.
func hostDrift(base, other []*run.Run, opt Options) []HostDrift {
	var out []HostDrift
	for _, k := range []RefKind{RefCPU, RefMemory, RefSyscall} {
		a, b := refSpeeds(k, base), refSpeeds(k, other)
		if len(a) < 2 || len(b) < 2 {
			continue
		}
		rl := stats.CompareRuns(a, b, nil, opt.Confidence)
		if !rl.HasInterval() {
			continue
		}
		out = append(out, HostDrift{Kind: k, SpeedPct: 100 * (rl.Ratio - 1),
			SpeedLoPct: 100 * (rl.Lo - 1), SpeedHiPct: 100 * (rl.Hi - 1), Readings: [2]int{len(a), len(b)},
			Significant: rl.Direction(stats.MinEffect*opt.Margin) != 0})
	}
	return out
}

// refKindOf is the reference that follows a metric, or "" for none.
func refKindOf(probe, metric, unit string) RefKind {
	areas := knowledge.AreasOf(probe, metric, unit)
	switch {
	case slices.Contains(areas, knowledge.Disk):
		return ""
	case slices.Contains(areas, knowledge.Memory):
		return RefMemory
	case slices.Contains(areas, knowledge.CPU):
		return RefCPU
	case slices.Contains(areas, knowledge.Syscall), slices.Contains(areas, knowledge.Timer), slices.Contains(areas, knowledge.Network):
		return RefSyscall
	}
	return ""
}

// markHostDrift sets Delta.HostDrift on the changed metrics that the
// reference of their kind explains.
func markHostDrift(c *Comparison, p *Pair, opt Options) {
	byKind := map[RefKind]HostDrift{}
	for _, h := range p.HostDrift {
		byKind[h.Kind] = h
	}
	for i := range p.Deltas {
		d := &p.Deltas[i]
		if d.Verdict != Better && d.Verdict != Worse || math.IsNaN(d.Ratio) {
			continue
		}
		row := c.Metrics[d.Row]
		h, ok := byKind[refKindOf(row.Probe, row.Metric, row.Unit)]
		if !ok || !h.Significant || len(h.ConfoundedBy) > 0 {
			continue
		}
		ref := 1 + h.SpeedPct/100
		speed := func(r float64) float64 { // the metric's ratio, higher is better
			if row.Better == run.Lower {
				return 1 / r
			}
			return r
		}
		if d.Gross {
			// No interval, only the ×GrossFactor rule: the change is the
			// host's when, divided by the host's own change, it is no
			// longer gross.
			adj := speed(d.Ratio) / ref
			d.HostDrift = adj < stats.GrossFactor && adj > 1/stats.GrossFactor
			continue
		}
		if !d.eff.HasInterval() {
			continue
		}
		lo, hi := speed(d.eff.Lo), speed(d.eff.Hi)
		lo, hi = min(lo, hi), max(lo, hi)
		adj := stats.RunLevel{Ka: 1, Kb: 1, DF: 1, Ratio: 1, Lo: lo / ref, Hi: hi / ref}
		if adj.Direction(stats.MinEffect*opt.Margin) == 0 {
			d.HostDrift = true
		}
	}
}

// hostDriftDiffs turns significant reference changes into explainable
// differences of kind host-drift: a slower host explains metrics that got
// worse.
func hostDriftDiffs(hd []HostDrift) []sourced {
	var out []sourced
	for _, h := range hd {
		if !h.Significant || len(h.ConfoundedBy) > 0 {
			continue
		}
		v := Better
		if h.SpeedPct < 0 {
			v = Worse
		}
		out = append(out, sourced{Diff{Path: "hostdrift." + string(h.Kind),
			Before: "reference", After: fmt.Sprintf("%+.1f%% [%+.1f, %+.1f]", h.SpeedPct, h.SpeedLoPct, h.SpeedHiPct)}, "hostdrift", v})
	}
	return out
}
