package audit

import "github.com/perflab/perflab/internal/knob"

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
