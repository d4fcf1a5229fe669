package audit

import (
	"strings"

	"github.com/perflab/perflab/internal/knob"
	"github.com/perflab/perflab/internal/snapshot"
)

// A rule's Change for a setting is built from the knob catalogue
// (internal/knob): the catalogue says which file backs the setting and how
// it is written, so the audit's fixes, tune's writes and bisect's flips
// name the same file the same way.

// knobChange is the Change that sets the bound knob k to value (a file
// value, as knob.Parse reads it) from current.
func knobChange(k knob.Knob, value, current string) Change {
	kind := KindFile
	switch k.Method {
	case knob.Sysctl:
		kind = KindSysctl
	case knob.Boot:
		kind = KindBoot
	}
	return Change{Kind: kind, Target: k.Name(), Value: value, Current: current}
}

// KnobChange is knobChange for other packages (bisect, tune's pin).
func KnobChange(k knob.Knob, value, current string) Change { return knobChange(k, value, current) }

// sysctlChange sets a sysctl.
func sysctlChange(name, value, current string) Change {
	return knobChange(knob.MustLookup("sysctl."+name), value, current)
}

// factChange sets the knob behind a catalogue fact path, its file keys
// bound in the catalogue's order: factChange("block[*].read_ahead_kib",
// "4096", "128", "sda").
func factChange(fact, value, current string, keys ...string) Change {
	return knobChange(knob.MustLookup(fact).With(keys...), value, current)
}

// Knob returns the catalogue knob a sysctl or file Change writes, bound
// to its target; ok is false for another kind or a file the catalogue
// does not know.
func (c Change) Knob() (knob.Knob, bool) {
	switch c.Kind {
	case KindSysctl:
		return knob.Lookup("sysctl." + c.Target)
	case KindFile:
		return knob.ForFile(c.Target)
	}
	return knob.Knob{}, false
}

// BoostKnob is the catalogue's cpu.boost with the file that backs it on
// the host s describes: intel_pstate's no_turbo (inverted) or
// cpufreq/boost.
func BoostKnob(s *snapshot.Snapshot) knob.Knob {
	k := knob.MustLookup("cpu.boost")
	if s.CPU.ScalingDriver == "intel_pstate" || s.CPU.PstateStatus != "" {
		return k.Prefer(1)
	}
	return k
}

// CgroupKnob is a cgroup knob of the catalogue (cgroup.cpu_quota_us,
// cgroup.cpus, cgroup.mems, cgroup.memory_max_bytes) bound to the cgroup
// s describes, in its version's file: for the CPU quota, the directory
// whose quota is in effect (which may be an ancestor's). ok is false when
// the snapshot does not say where the cgroup is.
func CgroupKnob(s *snapshot.Snapshot, fact string) (knob.Knob, bool) {
	k, ok := knob.Lookup(fact)
	if !ok || k.Scope != knob.Cgroup {
		return knob.Knob{}, false
	}
	cg := s.Cgroup
	if fact == "cgroup.cpu_quota_us" && cg.CPUQuotaDir != "" {
		for _, f := range []string{"/cpu.max", "/cpu.cfs_quota_us"} {
			if fk, ok := knob.ForFile(strings.TrimRight(cg.CPUQuotaDir, "/") + f); ok && fk.Path == fact {
				if (f == "/cpu.max") == (cg.Version == 2) {
					return fk, true
				}
			}
		}
	}
	if cg.Path == "" || cg.Version == 0 {
		return knob.Knob{}, false
	}
	if cg.Version == 1 {
		k = k.Prefer(1)
	}
	return k.With(strings.TrimRight(cg.Path, "/")), true
}
