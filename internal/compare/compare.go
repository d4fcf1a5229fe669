package compare

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/perflab/perflab/internal/run"
	"github.com/perflab/perflab/internal/stats"
)

// ErrNothingInCommon is returned when the sides share no metric, typically
// because they ran different probes.
var ErrNothingInCommon = errors.New("the sides have no metric in common")

// Compare joins the runs of every side by (suite, probe, metric), compares
// each later side with the first and explains the differences. A single
// side yields a report of that side alone.
func Compare(sides []Side, opt Options) (*Comparison, error) {
	opt = opt.withDefaults()
	if len(sides) == 0 {
		return nil, errors.New("nothing to compare: no sides given")
	}
	c := &Comparison{Alpha: opt.Alpha, Margin: opt.Margin, Confidence: opt.Confidence}
	for i, s := range sides {
		if len(s.Runs) == 0 {
			return nil, fmt.Errorf("side %d (%s) has no runs", i+1, s.Name)
		}
		c.Sides = append(c.Sides, sideInfo(s))
	}
	if err := c.join(sides, opt); err != nil {
		return nil, err
	}
	for i := 1; i < len(sides); i++ {
		p := c.pair(i, opt)
		explain(c, &p, sides[0], sides[i])
		c.Pairs = append(c.Pairs, p)
	}
	return c, nil
}

func sideInfo(s Side) SideInfo {
	si := SideInfo{Name: s.Name}
	hosts, probes := map[string]bool{}, map[string]bool{}
	for _, r := range s.Runs {
		si.RunIDs = append(si.RunIDs, r.ID)
		hosts[r.Host] = true
		probes[r.Probe] = true
		if !r.Complete || r.Stop == run.StopInterrupted || r.Stop == run.StopFailed {
			si.Incomplete = append(si.Incomplete, r.ID)
		}
		if si.SnapshotID == "" && r.SnapshotID != "" && s.Snapshots[r.SnapshotID] != nil {
			si.SnapshotID = r.SnapshotID
		}
	}
	si.Hosts, si.Probes = sortedKeys(hosts), sortedKeys(probes)
	return si
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// join builds one MetricRow per key any side has, pooling the samples of
// all runs of a side (repeated runs are more repetitions of the same
// measurement), and refuses keys whose unit or direction differs between
// sides.
func (c *Comparison) join(sides []Side, opt Options) error {
	index := map[Key]int{}
	mixed := mixedParams(sides)
	for si, s := range sides {
		for _, r := range s.Runs {
			for _, m := range r.Metrics {
				k := Key{Suite: suiteOf(r), Probe: r.Probe, Metric: m.Name}
				if mixed[k.Suite+"\x00"+k.Probe] {
					k.Params = paramString(r)
				}
				i, ok := index[k]
				if !ok {
					i = len(c.Metrics)
					index[k] = i
					c.Metrics = append(c.Metrics, MetricRow{Key: k, Unit: m.Unit, Better: m.Better,
						Series: m.Series, X: m.X, XUnit: m.XUnit, Sides: make([]*SideStats, len(sides))})
				}
				row := &c.Metrics[i]
				if row.Unit != m.Unit {
					return fmt.Errorf("metric %s of %s is in %q on one side and %q on another: these are not the same measurement", m.Name, r.Probe, row.Unit, m.Unit)
				}
				if row.Better != m.Better {
					return fmt.Errorf("metric %s of %s is %s-is-better on one side and %s-is-better on another", m.Name, r.Probe, row.Better, m.Better)
				}
				if row.Sides[si] == nil {
					row.Sides[si] = &SideStats{}
				}
				row.Sides[si].Samples = append(row.Sides[si].Samples, r.Values(m.Name)...)
			}
		}
	}
	if len(sides) > 1 {
		shared := 0
		for _, row := range c.Metrics {
			if row.Sides[0] != nil && slices.ContainsFunc(row.Sides[1:], func(s *SideStats) bool { return s != nil }) {
				shared++
			}
		}
		if shared == 0 {
			var desc []string
			for _, si := range c.Sides {
				desc = append(desc, fmt.Sprintf("%s ran %s", si.Name, strings.Join(si.Probes, ", ")))
			}
			return fmt.Errorf("%w: %s", ErrNothingInCommon, strings.Join(desc, "; "))
		}
	}
	sort.SliceStable(c.Metrics, func(i, j int) bool { return lessRanked(c.Metrics[i], c.Metrics[j], opt.RowRank) })
	// A side's noise floor must not be measured with the other sides'
	// runs: the history from the store holds them too, and their spread
	// is the very difference under test.
	others := make([]map[string]bool, len(sides))
	for si := range sides {
		others[si] = map[string]bool{}
		for sj, s := range sides {
			if sj == si {
				continue
			}
			for _, r := range s.Runs {
				others[si][r.ID] = true
			}
		}
	}
	for i := range c.Metrics {
		row := &c.Metrics[i]
		for si, s := range row.Sides {
			if s == nil {
				continue
			}
			s.Summary = stats.SummarizeConf(s.Samples, opt.Confidence)
			s.Noise = noiseFloor(row.Key, sides[si].Runs, opt.History, others[si])
			if len(s.Samples) == 0 {
				c.Notes = append(c.Notes, fmt.Sprintf("%s: %s/%s has no samples", c.Sides[si].Name, row.Probe, row.Metric))
			}
		}
		if len(sides) > 1 {
			var missing []string
			for si, s := range row.Sides {
				if s == nil {
					missing = append(missing, c.Sides[si].Name)
				}
			}
			if len(missing) > 0 {
				c.Notes = append(c.Notes, fmt.Sprintf("%s/%s is missing on %s", row.Probe, row.Metric, strings.Join(missing, ", ")))
			}
		}
	}
	for _, si := range c.Sides {
		if len(si.Incomplete) > 0 {
			c.Notes = append(c.Notes, fmt.Sprintf("%s: run(s) %s stopped early; their samples are included", si.Name, strings.Join(si.Incomplete, ", ")))
		}
	}
	return nil
}

// lessRanked is lessRow within a suite except that metrics rank(suite,
// probe, metric) places come first, in rank order.
func lessRanked(a, b MetricRow, rank func(suite, probe, metric string) (int, bool)) bool {
	if rank != nil && a.Suite == b.Suite {
		ra, oka := rank(a.Suite, a.Probe, a.Metric)
		rb, okb := rank(b.Suite, b.Probe, b.Metric)
		switch {
		case oka && okb && ra != rb:
			return ra < rb
		case oka != okb:
			return oka
		}
	}
	return lessRow(a, b)
}

// lessRow orders by suite, probe, series position, then name, so that a
// curve's points come out in X order.
func lessRow(a, b MetricRow) bool {
	if a.Suite != b.Suite {
		return a.Suite < b.Suite
	}
	if a.Probe != b.Probe {
		return a.Probe < b.Probe
	}
	if a.Series != b.Series {
		return a.Series < b.Series
	}
	if a.Series != "" && a.X != b.X {
		return a.X < b.X
	}
	return a.Metric < b.Metric
}

// mixedParams finds the suite/probe pairs that some runs, on any side, ran
// with other parameters or placement than the rest.
func mixedParams(sides []Side) map[string]bool {
	seen := map[string]string{}
	mixed := map[string]bool{}
	for _, s := range sides {
		for _, r := range s.Runs {
			id, ps := suiteOf(r)+"\x00"+r.Probe, paramString(r)
			if prev, ok := seen[id]; ok && prev != ps {
				mixed[id] = true
			}
			seen[id] = ps
		}
	}
	return mixed
}

// paramString is a run's parameters and placement in a canonical order.
func paramString(r *run.Run) string {
	var kv []string
	for k, v := range r.Params {
		kv = append(kv, k+"="+v)
	}
	sort.Strings(kv)
	if r.CPUs != "" {
		kv = append(kv, "cpus="+r.CPUs)
	}
	return strings.Join(kv, " ")
}

func suiteOf(r *run.Run) string {
	if r.Suite != "" {
		return r.Suite
	}
	return r.Probe
}

// pair compares side o with side 0 on every metric both have.
func (c *Comparison) pair(o int, opt Options) Pair {
	p := Pair{Other: o, Counts: map[Verdict]int{}}
	var ps []float64
	for i, row := range c.Metrics {
		a, b := row.Sides[0], row.Sides[o]
		if a == nil || b == nil {
			continue
		}
		d := delta(i, row, a, b, opt)
		p.Deltas = append(p.Deltas, d)
		ps = append(ps, d.P)
	}
	adj := stats.Holm(ps)
	for i := range p.Deltas {
		d := &p.Deltas[i]
		d.PAdj = adj[i]
		row := c.Metrics[d.Row]
		d.Verdict, d.Need = verdict(*d, row, row.Sides[0], row.Sides[o], opt)
		p.Counts[d.Verdict]++
	}
	p.Suites = suiteMeans(c.Metrics, p.Deltas)
	return p
}

func delta(row int, m MetricRow, a, b *SideStats, opt Options) Delta {
	d := Delta{Row: row}
	mw := stats.MannWhitneyTest(a.Samples, b.Samples)
	d.U, d.P = mw.U, mw.P
	hl := stats.HodgesLehmannTest(a.Samples, b.Samples, opt.Confidence)
	d.Shift, d.ShiftLo, d.ShiftHi = hl.Shift, hl.Lo, hl.Hi
	base := a.Summary.Median
	d.DeltaPct, d.DeltaLoPct, d.DeltaHiPct = math.NaN(), math.NaN(), math.NaN()
	if base != 0 && !math.IsNaN(base) {
		d.DeltaPct = 100 * d.Shift / math.Abs(base)
		d.DeltaLoPct = 100 * d.ShiftLo / math.Abs(base)
		d.DeltaHiPct = 100 * d.ShiftHi / math.Abs(base)
	}
	d.Ratio = math.NaN()
	if base != 0 {
		d.Ratio = b.Summary.Median / base
	}
	d.Equivalent, _, _ = stats.Equivalent(a.Samples, b.Samples, opt.Margin, opt.Alpha)
	var spread float64
	for _, s := range []*SideStats{a, b} {
		if s.Noise != nil {
			spread = math.Max(spread, s.Noise.SpreadPct)
		}
	}
	d.WithinNoise = spread > 0 && !math.IsNaN(d.DeltaPct) && math.Abs(d.DeltaPct) < spread
	return d
}

// verdict applies the rules of docs/compare.md. Samples too small for the
// test ever to reach α are inconclusive, with the per-side count that
// would make it testable. Otherwise a significant difference (Holm-adjusted
// p < α) is better or worse by the metric's direction; an insignificant one
// is equivalent when TOST shows it within ±margin, else same.
func verdict(d Delta, m MetricRow, a, b *SideStats, opt Options) (Verdict, int) {
	na, nb := len(a.Samples), len(b.Samples)
	if na == 0 || nb == 0 || math.IsNaN(d.P) || stats.MinPValue(na, nb) >= opt.Alpha {
		return Inconclusive, stats.SamplesNeeded(opt.Alpha)
	}
	// A significant shift smaller than the run-to-run spread measured on
	// these hosts is not evidence of a change: the next run of the same
	// thing could land as far away (docs/statistics.md, A/A noise floor).
	if d.PAdj < opt.Alpha && !d.WithinNoise {
		dir := d.Shift
		if dir == 0 {
			dir = b.Summary.Median - a.Summary.Median
		}
		switch {
		case dir > 0 && m.Better == run.Higher, dir < 0 && m.Better == run.Lower:
			return Better, 0
		case dir != 0:
			return Worse, 0
		}
		return Same, 0
	}
	if d.Equivalent {
		return Equivalent, 0
	}
	return Same, 0
}
