package report

import (
	"encoding/json"
	"io"
	"math"
	"strconv"

	"github.com/perflab/perflab/internal/compare"
)

// JSONSchema is the version of the JSON report (docs/compare.md).
const JSONSchema = 1

// JSONKind marks a document as a perflab comparison.
const JSONKind = "perflab-compare"

// num is a float that encodes NaN and ±Inf as null: JSON has no spelling
// for them, and "no interval" or "no ratio" is exactly what null means.
type num float64

func (n num) MarshalJSON() ([]byte, error) {
	f := float64(n)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return []byte("null"), nil
	}
	return strconv.AppendFloat(nil, f, 'g', -1, 64), nil
}

type jsonDoc struct {
	Kind       string             `json:"kind"`
	Schema     int                `json:"schema"`
	Alpha      float64            `json:"alpha"`
	Margin     float64            `json:"margin"`
	Confidence float64            `json:"confidence"`
	Sides      []compare.SideInfo `json:"sides"`
	Metrics    []jsonMetric       `json:"metrics"`
	Pairs      []jsonPair         `json:"pairs"`
	Notes      []string           `json:"notes"`
}

type jsonMetric struct {
	Suite  string      `json:"suite"`
	Probe  string      `json:"probe"`
	Metric string      `json:"metric"`
	Params string      `json:"params,omitempty"` // set where runs ran the probe with different parameters
	Unit   string      `json:"unit"`
	Better string      `json:"better"`
	Series string      `json:"series,omitempty"`
	X      float64     `json:"x,omitempty"`
	XUnit  string      `json:"x_unit,omitempty"`
	Sides  []*jsonSide `json:"sides"`
}

type jsonSide struct {
	N          int            `json:"n"`
	Median     num            `json:"median"`
	Lo         num            `json:"ci_lo"`
	Hi         num            `json:"ci_hi"`
	Confidence num            `json:"ci_confidence"`
	Min        num            `json:"min"`
	Max        num            `json:"max"`
	Mean       num            `json:"mean"`
	CV         num            `json:"cv"`
	Samples    []num          `json:"samples"`
	Noise      *compare.Noise `json:"noise,omitempty"`
}

type jsonPair struct {
	Base   int            `json:"base"`
	Other  int            `json:"other"`
	Counts map[string]int `json:"counts"`
	Deltas []jsonDelta    `json:"deltas"`
	Suites []jsonSuite    `json:"suites"`
	// Headline is the comparison's first line (compare.Headline).
	Headline string              `json:"headline"`
	Changed  int                 `json:"changed"` // better or worse beyond host drift
	Drift    []compare.HostDrift `json:"host_drift"`
	Causes   []compare.Cause     `json:"likely_causes"` // each with kind: setting, identity or host-drift
	// Conditions are state differences during the runs: never causes.
	Conditions []compare.Diff `json:"conditions"`
	Config     []compare.Diff `json:"config_diff"`
	Monitor    []jsonMon      `json:"monitor_diff"`
}

type jsonDelta struct {
	Metric int `json:"metric"` // index into metrics
	// Probe, Name, Params and Unit repeat the metric's, so a delta reads
	// on its own (jq needs no join with metrics).
	Probe       string `json:"probe"`
	Name        string `json:"name"`
	Params      string `json:"params,omitempty"`
	Unit        string `json:"unit"`
	U           num    `json:"u"`
	P           num    `json:"p"`
	PAdj        num    `json:"p_adj"`
	Shift       num    `json:"shift"`
	ShiftLo     num    `json:"shift_lo"`
	ShiftHi     num    `json:"shift_hi"`
	DeltaPct    num    `json:"delta_pct"`
	DeltaLoPct  num    `json:"delta_lo_pct"`
	DeltaHiPct  num    `json:"delta_hi_pct"`
	Ratio       num    `json:"ratio"`
	Verdict     string `json:"verdict"`
	Significant bool   `json:"significant"`
	Equivalent  bool   `json:"equivalent"`
	Need        int    `json:"need,omitempty"`
	WithinNoise bool   `json:"within_noise"`
	// Drift says how between-run variation entered the verdict (the run
	// is the unit); HostDrift marks a change the host's reference
	// explains; Gross a change called without a drift estimate; Reason
	// why a verdict is inconclusive.
	Drift     compare.RunDrift `json:"drift"`
	HostDrift bool             `json:"host_drift"`
	Gross     bool             `json:"gross,omitempty"`
	Reason    string           `json:"reason,omitempty"`
}

type jsonSuite struct {
	Suite   string `json:"suite"`
	Ratio   num    `json:"ratio"`
	GainPct num    `json:"gain_pct"`
	Metrics int    `json:"metrics"`
}

type jsonMon struct {
	Field   string `json:"field"`
	Unit    string `json:"unit"`
	Base    num    `json:"base"`
	Other   num    `json:"other"`
	Points  [2]int `json:"points"`
	P       num    `json:"p"`
	Notable bool   `json:"notable"`
}

// JSON writes the comparison in the schema of docs/compare.md.
func JSON(w io.Writer, c *compare.Comparison) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(jsonView(c))
}

func jsonView(c *compare.Comparison) jsonDoc {
	doc := jsonDoc{Kind: JSONKind, Schema: JSONSchema, Alpha: c.Alpha, Margin: c.Margin, Confidence: c.Confidence,
		Sides: c.Sides, Metrics: []jsonMetric{}, Pairs: []jsonPair{}, Notes: c.Notes}
	if doc.Notes == nil {
		doc.Notes = []string{}
	}
	for _, m := range c.Metrics {
		jm := jsonMetric{Suite: m.Suite, Probe: m.Probe, Metric: m.Metric, Params: m.Params, Unit: m.Unit, Better: string(m.Better),
			Series: m.Series, X: m.X, XUnit: m.XUnit}
		for _, s := range m.Sides {
			if s == nil {
				jm.Sides = append(jm.Sides, nil)
				continue
			}
			sm := s.Summary
			js := &jsonSide{N: sm.N, Median: num(sm.Median), Lo: num(sm.Lo), Hi: num(sm.Hi), Confidence: num(sm.Confidence),
				Min: num(sm.Min), Max: num(sm.Max), Mean: num(sm.Mean), CV: num(sm.CV), Samples: []num{}, Noise: s.Noise}
			if !sm.HasCI {
				js.Lo, js.Hi = num(math.NaN()), num(math.NaN())
			}
			for _, v := range s.Samples {
				js.Samples = append(js.Samples, num(v))
			}
			jm.Sides = append(jm.Sides, js)
		}
		doc.Metrics = append(doc.Metrics, jm)
	}
	for _, p := range c.Pairs {
		jp := jsonPair{Base: 0, Other: p.Other, Counts: map[string]int{}, Deltas: []jsonDelta{}, Suites: []jsonSuite{},
			Headline: compare.Headline(c, p), Changed: p.Changed, Drift: p.HostDrift, Conditions: p.Conditions,
			Causes: p.Causes, Config: p.Config, Monitor: []jsonMon{}}
		if jp.Drift == nil {
			jp.Drift = []compare.HostDrift{}
		}
		if jp.Conditions == nil {
			jp.Conditions = []compare.Diff{}
		}
		for _, v := range []compare.Verdict{compare.Better, compare.Worse, compare.Same, compare.Equivalent, compare.Inconclusive} {
			jp.Counts[string(v)] = p.Counts[v]
		}
		jp.Causes = make([]compare.Cause, len(p.Causes))
		for i, cs := range p.Causes {
			if cs.Moved == nil {
				cs.Moved = []int{}
			}
			jp.Causes[i] = cs
		}
		if jp.Config == nil {
			jp.Config = []compare.Diff{}
		}
		for _, d := range p.Deltas {
			m := c.Metrics[d.Row]
			jp.Deltas = append(jp.Deltas, jsonDelta{Metric: d.Row, Probe: m.Probe, Name: m.Metric, Params: m.Params, Unit: m.Unit, U: num(d.U), P: num(d.P), PAdj: num(d.PAdj),
				Shift: num(d.Shift), ShiftLo: num(d.ShiftLo), ShiftHi: num(d.ShiftHi),
				DeltaPct: num(d.DeltaPct), DeltaLoPct: num(d.DeltaLoPct), DeltaHiPct: num(d.DeltaHiPct), Ratio: num(d.Ratio),
				Verdict: string(d.Verdict), Significant: d.PAdj < c.Alpha, Equivalent: d.Equivalent, Need: d.Need, WithinNoise: d.WithinNoise,
				Drift: d.Drift, HostDrift: d.HostDrift, Gross: d.Gross, Reason: d.Reason})
		}
		for _, s := range p.Suites {
			jp.Suites = append(jp.Suites, jsonSuite{Suite: s.Suite, Ratio: num(s.Ratio), GainPct: num(s.GainPct), Metrics: s.Metrics})
		}
		for _, m := range p.Monitor {
			jp.Monitor = append(jp.Monitor, jsonMon{Field: m.Field, Unit: m.Unit, Base: num(m.Base), Other: num(m.Other), Points: m.Points, P: num(m.P), Notable: m.Notable})
		}
		doc.Pairs = append(doc.Pairs, jp)
	}
	return doc
}
