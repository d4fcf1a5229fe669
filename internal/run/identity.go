package run

import (
	"sort"
	"strings"
)

// ParamKey is the run's parameters and placement in one canonical form:
// "k=v k=v" in key order, then "cpus=LIST" when the run was pinned. Two
// runs of one probe measure the same thing exactly when their ParamKeys
// are equal (see SameMeasurement); compare shows it beside a metric when a
// probe ran with more than one.
func (r *Run) ParamKey() string {
	kv := make([]string, 0, len(r.Params)+1)
	for k, v := range r.Params {
		kv = append(kv, k+"="+v)
	}
	sort.Strings(kv)
	if r.CPUs != "" {
		kv = append(kv, "cpus="+r.CPUs)
	}
	return strings.Join(kv, " ")
}

// MeasurementKey identifies what a run measured, independent of where and
// when: the probe, then its ParamKey. Runs with equal keys are repetitions
// of one measurement and may be compared, pooled or used as each other's
// A/A calibration.
func (r *Run) MeasurementKey() string {
	return r.Probe + "\x00" + r.ParamKey()
}

// SameMeasurement reports whether r and o measure the same thing: the same
// probe with the same parameters and placement. The suite a run was part
// of, its host, label and state are not part of it (comparing those is
// the point of a comparison). A probe whose definition lives outside
// perflab (exec:, http:, a named probe) records what it ran in Params, so
// the same rule holds for it.
func (r *Run) SameMeasurement(o *Run) bool {
	if r == nil || o == nil {
		return r == o
	}
	return r.MeasurementKey() == o.MeasurementKey()
}
