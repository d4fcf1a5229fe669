package bench

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/perflab/perflab/internal/numfmt"
	"github.com/perflab/perflab/internal/run"
	"github.com/perflab/perflab/internal/stats"
)

// MetricSummary is one metric of a run as the bench and runs commands show
// it: the median with the half-width of its 95% CI, and the spread.
type MetricSummary struct {
	Name   string     `json:"name"`
	Unit   string     `json:"unit"`
	Better run.Better `json:"better"`
	N      int        `json:"n"`
	Median float64    `json:"median"`
	// Lo and Hi bound the 95% CI of the median; HalfWidth is the larger of
	// Median−Lo and Hi−Median (the CI of a median is not symmetric), Rel
	// that relative to the median. All are absent with fewer samples than
	// a CI needs (6 at 95%).
	Lo        *float64 `json:"ci_lo,omitempty"`
	Hi        *float64 `json:"ci_hi,omitempty"`
	HalfWidth *float64 `json:"ci_half_width,omitempty"`
	Rel       *float64 `json:"ci_rel,omitempty"`
	Min       float64  `json:"min"`
	Max       float64  `json:"max"`
	CV        *float64 `json:"cv,omitempty"` // coefficient of variation, n ≥ 2
}

// MarshalJSON leaves out median, min and max of a metric with no samples
// (a run interrupted or failed before its first measurement): a 0 there
// would read as a measured zero.
func (m MetricSummary) MarshalJSON() ([]byte, error) {
	type plain MetricSummary
	if m.N > 0 {
		return json.Marshal(plain(m))
	}
	return json.Marshal(struct {
		Name   string     `json:"name"`
		Unit   string     `json:"unit"`
		Better run.Better `json:"better"`
		N      int        `json:"n"`
	}{m.Name, m.Unit, m.Better, 0})
}

// Summarize summarises every metric of a run in declaration order.
func Summarize(r *run.Run) []MetricSummary {
	out := make([]MetricSummary, 0, len(r.Metrics))
	for _, m := range r.Metrics {
		xs := r.Values(m.Name)
		s := stats.Summarize(xs)
		ms := MetricSummary{Name: m.Name, Unit: m.Unit, Better: m.Better, N: s.N, Median: s.Median, Min: s.Min, Max: s.Max}
		if s.N == 0 {
			ms.Median, ms.Min, ms.Max = 0, 0, 0
		}
		if s.HasCI {
			h := math.Max(s.Median-s.Lo, s.Hi-s.Median)
			ms.Lo, ms.Hi, ms.HalfWidth = ptr(s.Lo), ptr(s.Hi), ptr(h)
			if s.Median != 0 {
				ms.Rel = ptr(h / math.Abs(s.Median))
			}
		}
		if !math.IsNaN(s.CV) {
			ms.CV = ptr(s.CV)
		}
		out = append(out, ms)
	}
	return out
}

func ptr(f float64) *float64 { return &f }

// Measured formats "median ± half-width unit", rounding both to the
// half-width's second significant digit (so the digits shown are the ones
// the measurement supports), or "median unit (n=3, too few for a CI)".
func (m MetricSummary) Measured() string {
	if m.N == 0 {
		return "no samples"
	}
	if m.HalfWidth == nil {
		return fmt.Sprintf("%s %s (n=%d, too few for a CI)", numfmt.Sig(m.Median, 4), m.Unit, m.N)
	}
	return numfmt.PlusMinus(m.Median, *m.HalfWidth) + " " + m.Unit
}

// StopText explains a stop reason in words for the report.
func StopText(r *run.Run) string {
	switch r.Stop {
	case run.StopPrecision:
		return fmt.Sprintf("precision reached (every CI within ±%s)", pct(r.Precision))
	case run.StopMaxRuns:
		return "repetition cap reached before the precision target" + target(r)
	case run.StopTimeBudget:
		return "time budget ran out before the precision target" + target(r)
	case run.StopInterrupted:
		return "interrupted: partial run"
	case run.StopFailed:
		return "failed: " + r.Error
	case run.StopFixed:
		return "fixed repetition count"
	}
	return string(r.Stop)
}

func target(r *run.Run) string {
	if r.Precision > 0 {
		return " (±" + pct(r.Precision) + ")"
	}
	return ""
}

func pct(f float64) string { return strconv.FormatFloat(100*f, 'f', -1, 64) + "%" }

// RunReport is one run as 'perflab bench --format json' prints it: the
// per-metric summaries instead of the raw samples, and the host-noise
// readings as the run stores them (docs/formats.md), so that scripts read
// one shape of noise everywhere. Notes are all of the run's, unmerged.
type RunReport struct {
	ID       string            `json:"id"`
	Probe    string            `json:"probe"`
	Label    string            `json:"label,omitempty"`
	Suite    string            `json:"suite,omitempty"`
	Params   map[string]string `json:"params"`
	CPUs     string            `json:"cpus,omitempty"`
	Complete bool              `json:"complete"`
	Stop     run.Stop          `json:"stop"`
	Seconds  float64           `json:"seconds"`
	Metrics  []MetricSummary   `json:"metrics"`
	Noise    *run.Noise        `json:"noise,omitempty"` // absent when not measured (--no-noise-check)
	Notes    []string          `json:"notes,omitempty"`
	Error    string            `json:"error,omitempty"`
}

// Report summarises a run for the bench command's JSON output.
func Report(r *run.Run) RunReport {
	return RunReport{ID: r.ID, Probe: r.Probe, Label: r.Label, Suite: r.Suite, Params: r.Params, CPUs: r.CPUs,
		Complete: r.Complete, Stop: r.Stop, Seconds: r.Ended.Sub(r.Started).Seconds(), Metrics: Summarize(r),
		Noise: r.Noise, Notes: r.Notes, Error: r.Error}
}

// SessionNotes splits the notes of a session's runs for display. A note
// that every run carries — a fact about the host, such as "monitor:
// cpufreq is unavailable …" — is returned once in common, in the order the
// first run has it; own[i] holds the rest of run i's notes, in order. A
// single run keeps all its notes: "for every run" says nothing then. The
// runs are not changed; stored runs keep every note.
func SessionNotes(runs []*run.Run) (common []string, own [][]string) {
	own = make([][]string, len(runs))
	if len(runs) < 2 {
		for i, r := range runs {
			own[i] = r.Notes
		}
		return nil, own
	}
	shared := map[string]bool{}
	for _, n := range runs[0].Notes {
		if shared[n] {
			continue
		}
		everywhere := true
		for _, r := range runs[1:] {
			if !slices.Contains(r.Notes, n) {
				everywhere = false
				break
			}
		}
		if everywhere {
			shared[n] = true
			common = append(common, n)
		}
	}
	for i, r := range runs {
		for _, n := range r.Notes {
			if !shared[n] {
				own[i] = append(own[i], n)
			}
		}
	}
	return common, own
}

// NoiseText is a run's host-noise readings in one line for 'perflab runs
// show': "before 0.4% (longest gap 310 µs), after 2.1% (longest gap
// 4.2 ms)". A missing closing reading (a failed or interrupted run) is
// said so; nil (the check was off, or an older run) is "not recorded".
func NoiseText(n *run.Noise) string {
	if n == nil {
		return "not recorded"
	}
	one := func(name string, r *run.NoiseReading) string {
		if r == nil {
			return name + " not taken"
		}
		return fmt.Sprintf("%s %.1f%% (longest gap %s)", name, r.LostPct, gapText(r.MaxGapUs))
	}
	s := one("before", n.Before) + ", " + one("after", n.After)
	if n.CPUs != "" {
		s += " on cpus " + n.CPUs
	}
	return s
}
