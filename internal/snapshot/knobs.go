package snapshot

import (
	"path"

	"github.com/perflab/perflab/internal/knob"
)

// knobFile is the host file behind a setting, from the knob catalogue
// (internal/knob), its template keys bound in order: the collectors read
// the settings where tune writes them.
func knobFile(fact string, keys ...string) string {
	return knob.MustLookup(fact).With(keys...).Files()[0]
}

// knobBase is the file name of a per-CPU setting, which the collectors
// read in the cpufreq policy directory that holds it for several CPUs.
func knobBase(fact string) string { return path.Base(knob.MustLookup(fact).Sources[0].File) }
