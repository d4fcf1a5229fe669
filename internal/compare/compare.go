package compare

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/perflab/perflab/internal/effect"
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
		p := c.pair(sides, i, opt)
		explain(c, &p, sides[0], sides[i], opt)
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
	si.Hosts, si.Probes = slices.Sorted(maps.Keys(hosts)), slices.Sorted(maps.Keys(probes))
	return si
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
					k.Params = r.ParamKey()
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
				vals := r.Values(m.Name)
				row.Sides[si].Samples = append(row.Sides[si].Samples, vals...)
				row.Sides[si].RunMedians = append(row.Sides[si].RunMedians, runMedians(r, vals)...)
				ss := row.Sides[si]
				ss.samplesAreRuns = ss.samplesAreRuns || r.Tool == goBenchTool
				if _, dup := ss.blocks[r.Block]; r.State == "" || r.Block == 0 || dup || len(vals) == 0 {
					ss.unblocked = true
				} else {
					if ss.blocks == nil {
						ss.blocks = map[int]float64{}
					}
					ss.blocks[r.Block] = stats.Median(vals)
				}
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
			id, ps := suiteOf(r)+"\x00"+r.Probe, r.ParamKey()
			if prev, ok := seen[id]; ok && prev != ps {
				mixed[id] = true
			}
			seen[id] = ps
		}
	}
	return mixed
}

func suiteOf(r *run.Run) string {
	if r.Suite != "" {
		return r.Suite
	}
	return r.Probe
}

// pair compares side o with side 0 on every metric both have.
func (c *Comparison) pair(sides []Side, o int, opt Options) Pair {
	p := Pair{Other: o, Counts: map[Verdict]int{}}
	var ps []float64
	for i, row := range c.Metrics {
		a, b := row.Sides[0], row.Sides[o]
		if a == nil || b == nil {
			continue
		}
		cal, ncal := calibration(row.Key, sides[0], sides[o], opt.History, runIDs(sides))
		d := delta(i, row, a, b, cal, opt)
		d.Drift.CalibrationRuns = ncal
		p.Deltas = append(p.Deltas, d)
		ps = append(ps, d.P)
	}
	adj := stats.Holm(ps)
	for i := range p.Deltas {
		d := &p.Deltas[i]
		d.PAdj = adj[i]
		d.eff.SetP(d.PAdj, len(ps))
		row := c.Metrics[d.Row]
		d.Verdict, d.Need, d.Gross, d.Reason = verdict(*d, row.Sides[0], row.Sides[o])
		p.Counts[d.Verdict]++
	}
	p.HostDrift = hostDrift(sides[0].Runs, sides[o].Runs, opt)
	return p
}

// finish marks the changes the host's own drift explains (after explain
// has set which references a differing setting moved) and counts the
// changes that remain.
func (c *Comparison) finish(p *Pair, opt Options) {
	markHostDrift(c, p, opt)
	for _, d := range p.Deltas {
		if d.Verdict.Changed() && !d.HostDrift {
			p.Changed++
		}
	}
	p.Suites = suiteMeans(c.Metrics, p.Deltas)
}

func delta(row int, m MetricRow, a, b *SideStats, cal [][]float64, opt Options) Delta {
	d := Delta{Row: row}
	mw := stats.MannWhitneyTest(a.Samples, b.Samples)
	d.U = mw.U
	if a.samplesAreRuns && b.samplesAreRuns {
		return deltaGoBench(row, m, a, b, opt)
	}
	pa, pb := pairedBlocks(a, b)
	compareRuns := func(conf float64) stats.RunLevel {
		if len(pa) >= 2 {
			return stats.ComparePaired(pa, pb, conf)
		}
		return stats.CompareRuns(a.RunMedians, b.RunMedians, cal, conf)
	}
	rl := compareRuns(opt.Confidence)
	d.P = rl.P
	d.Drift = RunDrift{Source: rl.Source, RunsBase: rl.Ka, RunsOther: rl.Kb, DF: rl.DF}
	// A metric that is 0 in every run (an exec probe's system time) has
	// no relative drift: NaN would break the JSON report.
	if rl.DF > 0 && !math.IsNaN(rl.DriftPct) && !math.IsInf(rl.DriftPct, 0) {
		d.Drift.Pct = rl.DriftPct
		d.Drift.RunsNeeded = stats.RunsNeeded(rl.DriftPct, 100*opt.Margin, opt.Alpha)
	}
	base := a.Summary.Median
	d.Ratio = rl.Ratio
	d.DeltaPct, d.DeltaLoPct, d.DeltaHiPct = math.NaN(), math.NaN(), math.NaN()
	d.Shift, d.ShiftLo, d.ShiftHi = math.NaN(), math.NaN(), math.NaN()
	if !math.IsNaN(rl.Ratio) {
		d.DeltaPct = 100 * (rl.Ratio - 1)
		d.DeltaLoPct, d.DeltaHiPct = 100*(rl.Lo-1), 100*(rl.Hi-1)
		if base != 0 && !math.IsNaN(base) {
			d.Shift = math.Abs(base) * (rl.Ratio - 1)
			d.ShiftLo, d.ShiftHi = math.Abs(base)*(rl.Lo-1), math.Abs(base)*(rl.Hi-1)
		}
	}
	if rl.Linear {
		// Counts that can be zero: the model is on the values, the shift
		// is shown in the metric's unit.
		d.Shift, d.ShiftLo, d.ShiftHi = rl.Diff, rl.DiffLo, rl.DiffHi
		if base != 0 && !math.IsNaN(base) {
			d.DeltaPct, d.DeltaLoPct, d.DeltaHiPct = 100*rl.Diff/math.Abs(base), 100*rl.DiffLo/math.Abs(base), 100*rl.DiffHi/math.Abs(base)
		}
	}
	// Equivalence: the 1−2α interval of the ratio inside ±margin (TOST on
	// the run-level model), decided by the one effect rule.
	d.eff = effect.FromRunLevel(rl, compareRuns(1-2*opt.Alpha), m.Better, opt.effectOptions())
	if !d.eff.HasInterval() {
		d.eff.SetGross(a.Summary, b.Summary)
	}
	d.Equivalent = d.eff.Equivalent()
	var spread float64
	for _, s := range []*SideStats{a, b} {
		if s.Noise != nil {
			spread = math.Max(spread, s.Noise.SpreadPct)
		}
	}
	d.WithinNoise = spread > 0 && !math.IsNaN(d.DeltaPct) && math.Abs(d.DeltaPct) < spread
	return d
}

// pairedBlocks returns the run medians of the blocks both sides measured,
// in block order, when every run of both sides comes from an interleaved
// session ('bench --state'): those are compared pairwise.
func pairedBlocks(a, b *SideStats) ([]float64, []float64) {
	if a.unblocked || b.unblocked {
		return nil, nil
	}
	var blocks []int
	for blk := range a.blocks {
		if _, ok := b.blocks[blk]; ok {
			blocks = append(blocks, blk)
		}
	}
	slices.Sort(blocks)
	var pa, pb []float64
	for _, blk := range blocks {
		pa, pb = append(pa, a.blocks[blk]), append(pb, b.blocks[blk])
	}
	return pa, pb
}

// deltaGoBench compares Go benchmark results as benchstat does: every
// -count repetition is an independent run, so the samples are the runs and
// the test is Mann–Whitney U on them, the shift Hodges–Lehmann's, and
// equivalence TOST on that shift. p-values agree with benchstat's.
func deltaGoBench(row int, m MetricRow, a, b *SideStats, opt Options) Delta {
	d := Delta{Row: row}
	mw := stats.MannWhitneyTest(a.Samples, b.Samples)
	d.U, d.P = mw.U, mw.P
	hl := stats.HodgesLehmannTest(a.Samples, b.Samples, opt.Confidence)
	d.Shift, d.ShiftLo, d.ShiftHi = hl.Shift, hl.Lo, hl.Hi
	base := a.Summary.Median
	d.DeltaPct, d.DeltaLoPct, d.DeltaHiPct, d.Ratio = math.NaN(), math.NaN(), math.NaN(), math.NaN()
	if base != 0 && !math.IsNaN(base) {
		d.DeltaPct, d.DeltaLoPct, d.DeltaHiPct = 100*d.Shift/math.Abs(base), 100*d.ShiftLo/math.Abs(base), 100*d.ShiftHi/math.Abs(base)
		d.Ratio = b.Summary.Median / base
	}
	d.eff = effect.FromSamples(a.Samples, b.Samples, m.Better, opt.effectOptions())
	d.Equivalent = d.eff.Equivalent()
	d.Drift = RunDrift{Source: stats.DriftRuns, RunsBase: len(a.Samples), RunsOther: len(b.Samples)}
	return d
}

// verdict is the one rule (package effect) on the delta's run-level (or,
// for Go benchmark files, sample-level) effect with its Holm-adjusted p.
func verdict(d Delta, a, b *SideStats) (Verdict, int, bool, string) {
	if len(a.Samples) == 0 || len(b.Samples) == 0 {
		return Inconclusive, 0, false, "no samples on one side"
	}
	e := d.eff
	return e.Verdict(), e.Need(), e.IsGross(), e.Reason()
}

// runMedians is one run's contribution to the run-level statistics: its
// median. Go benchmark files are the exception: `go test -count N` reruns
// each benchmark N times and benchstat treats those as independent, so
// every sample counts as a run there.
func runMedians(r *run.Run, vals []float64) []float64 {
	if len(vals) == 0 {
		return nil
	}
	if r.Tool == goBenchTool {
		return vals
	}
	return []float64{stats.Median(vals)}
}

// calibration collects the A/A calibration groups for one metric: the
// per-run medians of earlier runs of the same suite, probe and parameters
// on each host the two sides ran on, one group per host, leaving out every
// run that is on any side.
func calibration(k Key, base, other Side, history []*run.Run, exclude map[string]bool) ([][]float64, int) {
	hosts := map[string]bool{}
	var ref *run.Run
	for _, r := range slices.Concat(base.Runs, other.Runs) {
		if r.Probe == k.Probe && suiteOf(r) == k.Suite && (k.Params == "" || r.ParamKey() == k.Params) {
			hosts[r.Host] = true
			if ref == nil {
				ref = r
			}
		}
	}
	if ref == nil {
		return nil, 0
	}
	groups := map[string][]float64{}
	seen := map[string]bool{}
	for _, r := range history {
		if seen[r.ID] || exclude[r.ID] || !hosts[r.Host] || r.Probe != k.Probe || suiteOf(r) != k.Suite || !sameParams(r, ref) {
			continue
		}
		seen[r.ID] = true
		if v := r.Values(k.Metric); len(v) > 0 {
			groups[r.Host] = append(groups[r.Host], stats.Median(v))
		}
	}
	var out [][]float64
	n := 0
	for _, h := range slices.Sorted(maps.Keys(hosts)) {
		if g := groups[h]; len(g) > 0 {
			out = append(out, g)
			n += len(g)
		}
	}
	return out, n
}

func runIDs(sides []Side) map[string]bool {
	ids := map[string]bool{}
	for _, s := range sides {
		for _, r := range s.Runs {
			ids[r.ID] = true
		}
	}
	return ids
}
