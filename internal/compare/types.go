package compare

import (
	"github.com/perflab/perflab/internal/effect"
	"github.com/perflab/perflab/internal/run"
	"github.com/perflab/perflab/internal/snapshot"
	"github.com/perflab/perflab/internal/stats"
)

// Side is one column of a comparison: the runs a user named with one
// argument (a run id, a label, a file) and the snapshots they refer to.
type Side struct {
	Name      string                        // as the user wrote it
	Runs      []*run.Run                    // at least one
	Snapshots map[string]*snapshot.Snapshot // by snapshot id; may be empty
}

// Options tunes a comparison. The zero value means the defaults.
type Options struct {
	Alpha      float64 // family-wise significance level; default 0.05
	Margin     float64 // equivalence margin, relative; default 0.02 (±2%)
	Confidence float64 // interval level; default 0.95
	// History holds earlier runs of the same probes, typically from the
	// store, used only to measure the A/A noise floor: the run-to-run
	// spread of repeated runs of one probe on one host.
	History []*run.Run
	// RowRank, when set, orders a suite's metrics by the suite's reference
	// table (bench.RowRank: seed 004's row order for baseline); metrics it
	// does not rank follow in the default order.
	RowRank func(suite, probe, metric string) (int, bool)
}

func (o Options) withDefaults() Options {
	if o.Alpha <= 0 || o.Alpha >= 1 {
		o.Alpha = 0.05
	}
	if o.Margin <= 0 {
		o.Margin = 0.02
	}
	if o.Confidence <= 0 || o.Confidence >= 1 {
		o.Confidence = stats.DefaultConfidence
	}
	return o
}

// Verdict is the outcome for one metric: package effect's.
type Verdict = effect.Verdict

const (
	Better       = effect.Better       // significant change in the good direction
	Worse        = effect.Worse        // significant change in the bad direction
	Same         = effect.Same         // no significant difference, equivalence not shown
	Equivalent   = effect.Equivalent   // shown to be within ±margin (TOST)
	Inconclusive = effect.Inconclusive // too few samples to tell
)

func (o Options) effectOptions() effect.Options {
	return effect.Options{Alpha: o.Alpha, Margin: o.Margin, Confidence: o.Confidence}
}

// Effect is the delta's effect (package effect), with its Holm-adjusted p:
// the value every caller that needs a verdict on compare's numbers uses.
func (d Delta) Effect() effect.Effect { return d.eff }

// Comparison is the result of comparing sides; with a single side it is a
// plain report of that side's metrics.
type Comparison struct {
	Alpha      float64     `json:"alpha"`
	Margin     float64     `json:"margin"`
	Confidence float64     `json:"confidence"`
	Sides      []SideInfo  `json:"sides"`
	Metrics    []MetricRow `json:"metrics"` // in suite, probe, metric order
	// Pairs compare each side after the first with the first.
	Pairs []Pair `json:"pairs"`
	// Notes are things the reader should know: metrics only one side
	// has, runs that did not complete.
	Notes []string `json:"notes,omitempty"`
}

// SideInfo describes a side.
type SideInfo struct {
	Name       string   `json:"name"`
	RunIDs     []string `json:"run_ids"`
	Hosts      []string `json:"hosts"`
	Probes     []string `json:"probes"`
	SnapshotID string   `json:"snapshot_id,omitempty"` // the snapshot used for explaining
	Incomplete []string `json:"incomplete,omitempty"`  // ids of runs that stopped early
}

// Key identifies a metric across sides.
type Key struct {
	Suite  string `json:"suite"`
	Probe  string `json:"probe"`
	Metric string `json:"metric"`
	// Params is set only where the runs being compared ran the probe with
	// different parameters or placement ("msg_size=1"): those are different
	// measurements, kept in rows of their own instead of pooled.
	Params string `json:"params,omitempty"`
}

// MetricRow is one metric with its summary on every side.
type MetricRow struct {
	Key
	Unit   string     `json:"unit"`
	Better run.Better `json:"better"`
	Series string     `json:"series,omitempty"`
	X      float64    `json:"x,omitempty"`
	XUnit  string     `json:"x_unit,omitempty"`
	// Sides holds one summary per side, nil where the side lacks it.
	Sides []*SideStats `json:"sides"`
}

// SideStats is one metric on one side.
type SideStats struct {
	Summary stats.Summary `json:"-"`
	Samples []float64     `json:"samples"`
	// RunMedians holds one median per run: the unit of replication that
	// verdicts are decided on (docs/statistics.md, "Runs, not samples").
	RunMedians []float64 `json:"run_medians"`
	// samplesAreRuns is set for Go benchmark files (see runMedians).
	samplesAreRuns bool
	// blocks maps the block of an interleaved session to that run's
	// median; unblocked is set when any run has no state and block.
	blocks    map[int]float64
	unblocked bool
	// Noise is the run-to-run spread of this metric on this side's host,
	// when repeated runs exist (A/A noise floor).
	Noise *Noise `json:"noise,omitempty"`
}

// Noise is the observed run-to-run spread: the range of the per-run
// medians of repeated runs of one probe on one host, relative to their
// median.
type Noise struct {
	Runs      int     `json:"runs"`
	SpreadPct float64 `json:"spread_pct"`
}

// Pair compares side Other with the baseline side 0.
type Pair struct {
	Other  int         `json:"other"`
	Deltas []Delta     `json:"deltas"` // one per MetricRow both sides have
	Suites []SuiteMean `json:"suites"`
	Causes []Cause     `json:"likely_causes"`
	Config []Diff      `json:"config_diff"`
	// Conditions are differences in what the host was doing during the
	// runs (free memory, runtime mounts, dirty pages): shown, never causes.
	Conditions []Diff     `json:"conditions"`
	Monitor    []MonDelta `json:"monitor_diff"`
	// Counts of verdicts, for a one-line summary and exit codes.
	Counts map[Verdict]int `json:"counts"`
	// HostDrift is how fast the host itself ran on the other side, by
	// reference workload (hostdrift.go); empty for runs without readings.
	HostDrift []HostDrift `json:"host_drift,omitempty"`
	// Changed counts the better and worse verdicts that host drift does
	// not explain: the changes of the system under test.
	Changed int `json:"changed"`
}

// Delta is one metric compared between the baseline and another side.
type Delta struct {
	Row int `json:"row"` // index into Comparison.Metrics
	// U and P are the Mann–Whitney statistic and raw two-sided p-value;
	// PAdj is P after Holm–Bonferroni across all metrics of the pair.
	U    float64 `json:"u"`
	P    float64 `json:"p"`
	PAdj float64 `json:"p_adj"`
	// Shift is the Hodges–Lehmann estimate of other − base, in the
	// metric's unit, with its confidence interval.
	Shift   float64 `json:"shift"`
	ShiftLo float64 `json:"shift_lo"`
	ShiftHi float64 `json:"shift_hi"`
	// DeltaPct is Shift relative to the baseline median, in percent;
	// NaN (null in JSON) when that median is zero.
	DeltaPct   float64 `json:"delta_pct"`
	DeltaLoPct float64 `json:"delta_lo_pct"`
	DeltaHiPct float64 `json:"delta_hi_pct"`
	// Ratio is median(other)/median(base).
	Ratio      float64 `json:"ratio"`
	Verdict    Verdict `json:"verdict"`
	Equivalent bool    `json:"equivalent"` // within ±Margin by TOST, whatever the verdict
	// Need is the number of samples per side needed before a difference
	// could be significant; set when Verdict is Inconclusive.
	Need int `json:"need,omitempty"`
	// WithinNoise is true when |DeltaPct| is below the larger A/A spread
	// observed on either side's host.
	WithinNoise bool `json:"within_noise,omitempty"`
	// Drift says how between-run variation entered the verdict: from the
	// sides' repeated runs, from the host's history (A/A calibration), or
	// not at all (one run per side, no history).
	Drift RunDrift `json:"drift"`
	// Gross is set when a change was called without a drift estimate
	// because it is beyond any plausible drift (stats.GrossFactor).
	Gross bool `json:"gross,omitempty"`
	// HostDrift is set on a better or worse verdict that the host-drift
	// reference of the metric's kind explains: the host, not the system
	// under test, changed.
	HostDrift bool `json:"host_drift,omitempty"`
	// Reason says why a verdict is inconclusive, in words a user can act on.
	Reason string `json:"reason,omitempty"`

	eff effect.Effect // the effect behind the fields above; its Verdict decides
}

// RunDrift is the between-run variation behind one delta.
type RunDrift struct {
	Source    stats.DriftSource `json:"source"`
	RunsBase  int               `json:"runs_base"`
	RunsOther int               `json:"runs_other"`
	// CalibrationRuns counts the earlier runs (same host, probe and
	// parameters) that calibrated the drift.
	CalibrationRuns int `json:"calibration_runs,omitempty"`
	// DF and Pct are the degrees of freedom and size (typical run-to-run
	// move, percent) of the drift estimate; absent without one.
	DF  int     `json:"df,omitempty"`
	Pct float64 `json:"pct,omitempty"`
	// RunsNeeded is the number of runs per side that would resolve a
	// change of the equivalence margin at this drift.
	RunsNeeded int `json:"runs_needed,omitempty"`
}

// SuiteMean is the geometric-mean summary of one suite.
type SuiteMean struct {
	Suite string `json:"suite"`
	// Ratio is the geometric mean of median(other)/median(base) over the
	// suite's metrics, as benchstat prints it.
	Ratio float64 `json:"ratio"`
	// Gain is the geometric mean of the oriented ratios (>1 is better:
	// base/other for lower-is-better metrics), minus one, in percent.
	GainPct float64 `json:"gain_pct"`
	Metrics int     `json:"metrics"`
}

// Delta finds pair i's delta of one probe's metric (the first row of that
// probe and metric, whatever its suite and parameters).
func (c *Comparison) Delta(pair int, probe, metric string) (Delta, bool) {
	if pair < 0 || pair >= len(c.Pairs) {
		return Delta{}, false
	}
	for _, d := range c.Pairs[pair].Deltas {
		if r := c.Metrics[d.Row]; r.Probe == probe && r.Metric == metric {
			return d, true
		}
	}
	return Delta{}, false
}
