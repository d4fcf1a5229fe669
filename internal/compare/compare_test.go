package compare

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/run"
	"github.com/perflab/perflab/internal/snapshot"
)

type metricSpec struct {
	name, unit string
	better     run.Better
	values     []float64
}

func mkRun(id, probe, host string, ms ...metricSpec) *run.Run {
	r := &run.Run{Schema: run.Schema, ID: id, Probe: probe, Host: host, Params: map[string]string{}, Complete: true, Stop: run.StopFixed}
	for _, m := range ms {
		r.Metrics = append(r.Metrics, run.Metric{Name: m.name, Unit: m.unit, Better: m.better})
		for i, v := range m.values {
			r.Samples = append(r.Samples, run.Sample{Metric: m.name, Value: v, Iteration: i})
		}
	}
	return r
}

// noisy returns n values around centre with relative noise sd.
func noisy(rng *rand.Rand, n int, centre, sd float64) []float64 {
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = centre * (1 + sd*rng.NormFloat64())
	}
	return xs
}

func side(name string, runs ...*run.Run) Side { return Side{Name: name, Runs: runs} }

func findDelta(t *testing.T, c *Comparison, p Pair, metric string) Delta {
	t.Helper()
	for _, d := range p.Deltas {
		if c.Metrics[d.Row].Metric == metric {
			return d
		}
	}
	t.Fatalf("no delta for %s", metric)
	return Delta{}
}

func TestVerdicts(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	a := mkRun("a1", "cpu", "h1",
		metricSpec{"faster", "events/s", run.Higher, noisy(rng, 10, 1000, 0.005)},
		metricSpec{"slower", "events/s", run.Higher, noisy(rng, 10, 1000, 0.005)},
		metricSpec{"lat_up", "ns", run.Lower, noisy(rng, 10, 100, 0.005)},
		metricSpec{"equal", "events/s", run.Higher, noisy(rng, 10, 1000, 0.002)},
		metricSpec{"wide", "events/s", run.Higher, noisy(rng, 10, 1000, 0.2)},
	)
	b := mkRun("b1", "cpu", "h1",
		metricSpec{"faster", "events/s", run.Higher, noisy(rng, 10, 1100, 0.005)},
		metricSpec{"slower", "events/s", run.Higher, noisy(rng, 10, 900, 0.005)},
		metricSpec{"lat_up", "ns", run.Lower, noisy(rng, 10, 120, 0.005)},
		metricSpec{"equal", "events/s", run.Higher, noisy(rng, 10, 1000.5, 0.002)},
		metricSpec{"wide", "events/s", run.Higher, noisy(rng, 10, 1000, 0.2)},
	)
	// Three runs a side on a host that drifts 0.3% between runs; "wide"
	// moves 20% within each run, so its run medians scatter by several
	// percent on their own.
	as, bs := replicate(a, 3, 0.003, 1), replicate(b, 3, 0.003, 2)
	for i, r := range bs { // "wide": each run's samples drawn anew
		for j := range r.Samples {
			if r.Samples[j].Metric == "wide" {
				r.Samples[j].Value = 1000 * (1 + 0.2*rng.NormFloat64())
			}
		}
		_ = i
	}
	c, err := Compare([]Side{side("A", as...), side("B", bs...)}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	p := c.Pairs[0]
	want := map[string]Verdict{"faster": Better, "slower": Worse, "lat_up": Worse, "equal": Equivalent, "wide": Same}
	for m, v := range want {
		d := findDelta(t, c, p, m)
		if d.Verdict != v {
			t.Errorf("%s: verdict %s (p=%.4g adj=%.4g Δ=%.2f%% [%.2f,%.2f]), want %s", m, d.Verdict, d.P, d.PAdj, d.DeltaPct, d.DeltaLoPct, d.DeltaHiPct, v)
		}
	}
	for m := range want {
		if d := findDelta(t, c, p, m); d.Drift.Source != "runs" || d.Drift.RunsBase != 3 || d.Drift.DF != 4 {
			t.Errorf("%s: drift %+v, want 3 runs a side, df 4", m, d.Drift)
		}
	}
	d := findDelta(t, c, p, "faster")
	if math.Abs(d.DeltaPct-10) > 1 || !(d.DeltaLoPct < d.DeltaPct && d.DeltaPct < d.DeltaHiPct) {
		t.Errorf("faster: Δ %.2f%% [%.2f, %.2f], want about +10%%", d.DeltaPct, d.DeltaLoPct, d.DeltaHiPct)
	}
	if d.PAdj < d.P {
		t.Errorf("Holm must not lower p: %v < %v", d.PAdj, d.P)
	}
	if p.Counts[Better] != 1 || p.Counts[Worse] != 2 {
		t.Errorf("counts %v", p.Counts)
	}
}

// One run per side cannot tell a change from the host's drift: +10% is
// inconclusive with the runs that would settle it, unless the history of
// the host calibrates the drift, or the change is gross (×2 or more with
// disjoint intervals).
func TestOneRunPerSide(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	a := mkRun("a", "cpu", "h", metricSpec{"m", "events/s", run.Higher, noisy(rng, 10, 1000, 0.005)},
		metricSpec{"pf", "ns", run.Lower, noisy(rng, 10, 100, 0.01)})
	b := mkRun("b", "cpu", "h", metricSpec{"m", "events/s", run.Higher, noisy(rng, 10, 1100, 0.005)},
		metricSpec{"pf", "ns", run.Lower, noisy(rng, 10, 800, 0.01)})
	c, err := Compare([]Side{side("A", a), side("B", b)}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	d := findDelta(t, c, c.Pairs[0], "m")
	if d.Verdict != Inconclusive || d.Need != 3 || !strings.Contains(d.Reason, "--repeat") || d.Drift.Source != "none" {
		t.Errorf("+10%% from one run a side: %s need %d reason %q drift %+v, want inconclusive", d.Verdict, d.Need, d.Reason, d.Drift)
	}
	if math.Abs(d.DeltaPct-10) > 1 {
		t.Errorf("the estimate is still shown: Δ %.2f%%", d.DeltaPct)
	}
	if g := findDelta(t, c, c.Pairs[0], "pf"); g.Verdict != Worse || !g.Gross {
		t.Errorf("page-fault cost ×8 from one run a side: %s gross %v, want worse", g.Verdict, g.Gross)
	}
	// History of the same probe on the host: 6 runs within ±0.5%.
	var hist []*run.Run
	for i, f := range []float64{1, 1.004, 0.996, 1.002, 0.998, 1.001} {
		hist = append(hist, mkRun(fmt.Sprint("h", i), "cpu", "h", metricSpec{"m", "events/s", run.Higher, noisy(rng, 10, 1000*f, 0.005)}))
	}
	c, err = Compare([]Side{side("A", a), side("B", b)}, Options{History: hist})
	if err != nil {
		t.Fatal(err)
	}
	d = findDelta(t, c, c.Pairs[0], "m")
	if d.Verdict != Better || d.Drift.Source != "history" || d.Drift.CalibrationRuns != 6 {
		t.Errorf("+10%% against a calibrated 0.3%% drift: %s %+v, want better from history", d.Verdict, d.Drift)
	}
	// A history that drifts ±15% cannot support a 10% verdict.
	hist = hist[:0]
	for i, f := range []float64{1, 1.15, 0.86, 1.1, 0.9, 1.05} {
		hist = append(hist, mkRun(fmt.Sprint("h", i), "cpu", "h", metricSpec{"m", "events/s", run.Higher, noisy(rng, 10, 1000*f, 0.005)}))
	}
	c, _ = Compare([]Side{side("A", a), side("B", b)}, Options{History: hist})
	if d = findDelta(t, c, c.Pairs[0], "m"); d.Verdict == Better || d.Verdict == Worse {
		t.Errorf("+10%% against a 10%% drift: %s, want no change called", d.Verdict)
	}
}

// Holm across many metrics: one borderline-significant difference among
// many null metrics is no longer significant after adjustment.
func TestHolmAcrossMetrics(t *testing.T) {
	// Five runs a side, each contributing its median: m0's runs are 5%
	// apart with 3% drift, p ≈ 0.02. Alone it is significant; with 9 more
	// metrics Holm multiplies it by 10.
	a0 := []float64{100, 103, 97, 101, 99}
	b0 := []float64{105, 108, 102, 106, 104.5}
	mk := func(prefix string, cols map[string][]float64) []*run.Run {
		var out []*run.Run
		for i := 0; i < 5; i++ {
			var ms []metricSpec
			for _, name := range []string{"m0", "m1", "m2", "m3", "m4", "m5", "m6", "m7", "m8", "m9"} {
				if v, ok := cols[name]; ok {
					ms = append(ms, metricSpec{name, "x/s", run.Higher, []float64{v[i]}})
				}
			}
			out = append(out, mkRun(fmt.Sprint(prefix, i), "p", "h", ms...))
		}
		return out
	}
	ca, cb := map[string][]float64{"m0": a0}, map[string][]float64{"m0": b0}
	alone, err := Compare([]Side{side("A", mk("a", ca)...), side("B", mk("b", cb)...)}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if v := alone.Pairs[0].Deltas[0].Verdict; v != Better {
		t.Fatalf("alone: %s", v)
	}
	for i := 1; i < 10; i++ {
		name := "m" + string(rune('0'+i))
		ca[name] = []float64{100, 120, 90, 110, 95}
		cb[name] = []float64{102, 118, 93, 108, 97}
	}
	c, err := Compare([]Side{side("A", mk("a", ca)...), side("B", mk("b", cb)...)}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	d := findDelta(t, c, c.Pairs[0], "m0")
	if d.Verdict == Better || math.Abs(d.PAdj-10*d.P) > 1e-12 {
		t.Errorf("with 10 metrics: verdict %s p=%v adj=%v", d.Verdict, d.P, d.PAdj)
	}
}

func TestBadInput(t *testing.T) {
	a := mkRun("a", "cpu", "h", metricSpec{"m", "events/s", run.Higher, []float64{1, 2, 3, 4}})
	b := mkRun("b", "memory", "h", metricSpec{"m", "events/s", run.Higher, []float64{1, 2, 3, 4}})
	_, err := Compare([]Side{side("A", a), side("B", b)}, Options{})
	if !errors.Is(err, ErrNothingInCommon) || !strings.Contains(err.Error(), "A ran cpu") || !strings.Contains(err.Error(), "B ran memory") {
		t.Errorf("different probes: %v", err)
	}
	c := mkRun("c", "cpu", "h", metricSpec{"m", "ns", run.Higher, []float64{1, 2, 3, 4}})
	_, err = Compare([]Side{side("A", a), side("C", c)}, Options{})
	if err == nil || !strings.Contains(err.Error(), `"events/s"`) || !strings.Contains(err.Error(), `"ns"`) {
		t.Errorf("mismatched units: %v", err)
	}
	d := mkRun("d", "cpu", "h", metricSpec{"m", "events/s", run.Lower, []float64{1, 2, 3, 4}})
	if _, err = Compare([]Side{side("A", a), side("D", d)}, Options{}); err == nil {
		t.Error("mismatched direction accepted")
	}
	if _, err = Compare([]Side{side("A", a), {Name: "E"}}, Options{}); err == nil || !strings.Contains(err.Error(), "E") {
		t.Errorf("empty side: %v", err)
	}
	if _, err = Compare(nil, Options{}); err == nil {
		t.Error("no sides accepted")
	}
}

func TestZeroMedianAndIdentical(t *testing.T) {
	zeros := []float64{0, 0, 0, 0, 0, 0, 0, 0}
	a := mkRun("a", "p", "h", metricSpec{"errors", "count", run.Lower, zeros}, metricSpec{"same", "x/s", run.Higher, []float64{5, 5, 5, 5, 5, 5, 5, 5}})
	b := mkRun("b", "p", "h", metricSpec{"errors", "count", run.Lower, []float64{1, 2, 1, 3, 2, 1, 2, 2}}, metricSpec{"same", "x/s", run.Higher, []float64{5, 5, 5, 5, 5, 5, 5, 5}})
	c, err := Compare([]Side{side("A", replicate(a, 2, 0, 1)...), side("B", replicate(b, 2, 0, 2)...)}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	d := findDelta(t, c, c.Pairs[0], "errors")
	if !math.IsNaN(d.DeltaPct) || d.Verdict != Worse || d.Shift <= 0 {
		t.Errorf("zero baseline: Δ%%=%v verdict %s shift %v", d.DeltaPct, d.Verdict, d.Shift)
	}
	s := findDelta(t, c, c.Pairs[0], "same")
	if s.P != 1 || s.Verdict != Equivalent || s.DeltaPct != 0 {
		t.Errorf("identical: p=%v verdict %s Δ=%v", s.P, s.Verdict, s.DeltaPct)
	}
	for _, sm := range c.Pairs[0].Suites {
		if sm.Metrics != 1 { // the zero-median metric has no ratio
			t.Errorf("suite %s: %d metrics in geomean, want 1", sm.Suite, sm.Metrics)
		}
	}
}

func TestSuiteGeoMean(t *testing.T) {
	// Throughput ×1.21 and latency ×(1/1.21): both 21% better; benchstat's
	// raw ratio geomean is 1, the oriented gain is +21%.
	a := mkRun("a", "p", "h",
		metricSpec{"tput", "x/s", run.Higher, []float64{100, 100, 100, 100, 100}},
		metricSpec{"lat", "ns", run.Lower, []float64{121, 121, 121, 121, 121}})
	b := mkRun("b", "p", "h",
		metricSpec{"tput", "x/s", run.Higher, []float64{121, 121, 121, 121, 121}},
		metricSpec{"lat", "ns", run.Lower, []float64{100, 100, 100, 100, 100}})
	c, err := Compare([]Side{side("A", a), side("B", b)}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	sm := c.Pairs[0].Suites[0]
	if math.Abs(sm.Ratio-1) > 1e-12 || math.Abs(sm.GainPct-21) > 1e-9 || sm.Metrics != 2 {
		t.Errorf("suite mean %+v", sm)
	}
}

func TestNoiseFloor(t *testing.T) {
	mk := func(id string, centre float64) *run.Run {
		return mkRun(id, "cpu", "h1", metricSpec{"m", "x/s", run.Higher, []float64{centre, centre, centre, centre, centre}})
	}
	a := mk("a", 1000)
	history := []*run.Run{mk("h1", 980), mk("h2", 1020), mkRun("other-host", "cpu", "h2", metricSpec{"m", "x/s", run.Higher, []float64{500}})}
	b := mk("b", 1010)
	c, err := Compare([]Side{side("A", a), side("B", b)}, Options{History: history})
	if err != nil {
		t.Fatal(err)
	}
	n := c.Metrics[0].Sides[0].Noise
	// Medians 1000, 980, 1020 on h1: range 40 over median 1000 = 4%.
	if n == nil || n.Runs != 3 || math.Abs(n.SpreadPct-4) > 1e-9 {
		t.Fatalf("noise %+v", n)
	}
	if d := c.Pairs[0].Deltas[0]; !d.WithinNoise {
		t.Errorf("+1%% with a 4%% A/A spread must be flagged within noise: %+v", d)
	}
	// Without history, a single run per side has no noise floor.
	c, _ = Compare([]Side{side("A", a), side("B", b)}, Options{})
	if c.Metrics[0].Sides[0].Noise != nil {
		t.Error("noise from a single run")
	}
}

func TestPooledRunsAndNotes(t *testing.T) {
	a1 := mkRun("a1", "cpu", "h", metricSpec{"m", "x/s", run.Higher, []float64{1, 2, 3}}, metricSpec{"only_a", "x/s", run.Higher, []float64{1}})
	a2 := mkRun("a2", "cpu", "h", metricSpec{"m", "x/s", run.Higher, []float64{4, 5}})
	a2.Complete, a2.Stop = false, run.StopInterrupted
	b := mkRun("b", "cpu", "h", metricSpec{"m", "x/s", run.Higher, []float64{1, 2, 3}})
	c, err := Compare([]Side{side("A", a1, a2), side("B", b)}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var m MetricRow
	for _, row := range c.Metrics {
		if row.Metric == "m" {
			m = row
		}
	}
	if m.Sides[0].Summary.N != 5 {
		t.Errorf("pooled n=%d, want 5", m.Sides[0].Summary.N)
	}
	notes := strings.Join(c.Notes, "\n")
	if !strings.Contains(notes, "only_a is missing on B") || !strings.Contains(notes, "a2 stopped early") {
		t.Errorf("notes: %s", notes)
	}
}

func TestSingleSide(t *testing.T) {
	a := mkRun("a", "memory.latency", "h",
		metricSpec{"latency.64KiB", "ns", run.Lower, []float64{3, 3, 3, 3, 3, 3}},
		metricSpec{"latency.4KiB", "ns", run.Lower, []float64{1, 1, 1, 1, 1, 1}})
	a.Metrics[0].Series, a.Metrics[0].X = "latency", 65536
	a.Metrics[1].Series, a.Metrics[1].X = "latency", 4096
	c, err := Compare([]Side{side("A", a)}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Pairs) != 0 || len(c.Metrics) != 2 {
		t.Fatalf("pairs %d metrics %d", len(c.Pairs), len(c.Metrics))
	}
	// A curve's points come out in X order, not name order.
	if c.Metrics[0].X != 4096 {
		t.Errorf("first point x=%v", c.Metrics[0].X)
	}
}

func TestExplainRanksMovedKnobsFirst(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	mkSnap := func(id, thp, gov, sched string) *snapshot.Snapshot {
		return &snapshot.Snapshot{Schema: 1, ID: id,
			Memory:  snapshot.Memory{THP: snapshot.THP{Enabled: thp}},
			CPU:     snapshot.CPU{Governors: map[string][]int{gov: {0, 1}}},
			Block:   []snapshot.BlockDevice{{Name: "vda", Scheduler: sched}},
			Kernel:  snapshot.Kernel{Clocksource: "kvm-clock"},
			Sysctl:  map[string]string{"kernel.random.entropy_avail": id, "vm.swappiness": "60"},
			TakenAt: snapTime(id),
		}
	}
	a := mkRun("a", "memory.latency", "h", metricSpec{"latency.1GiB", "ns", run.Lower, noisy(rng, 12, 100, 0.01)})
	b := mkRun("b", "memory.latency", "h", metricSpec{"latency.1GiB", "ns", run.Lower, noisy(rng, 12, 130, 0.01)})
	a.SnapshotID, b.SnapshotID = "sa", "sb"
	// Both THP (memory) and the I/O scheduler (disk) differ, and the
	// governor does too; only memory latency was measured and it moved.
	sa := mkSnap("sa", "always", "performance", "mq-deadline")
	sb := mkSnap("sb", "never", "powersave", "none")
	sides := []Side{
		{Name: "A", Runs: replicate(a, 3, 0.005, 1), Snapshots: map[string]*snapshot.Snapshot{"sa": sa}},
		{Name: "B", Runs: replicate(b, 3, 0.005, 2), Snapshots: map[string]*snapshot.Snapshot{"sb": sb}},
	}
	c, err := Compare(sides, Options{})
	if err != nil {
		t.Fatal(err)
	}
	p := c.Pairs[0]
	paths := map[string]Diff{}
	for _, d := range p.Config {
		paths[d.Path] = d
	}
	if d, ok := paths["memory.thp.enabled"]; !ok || d.Before != "always" || d.After != "never" {
		t.Errorf("THP diff: %+v", d)
	}
	if d, ok := paths["block[vda].scheduler"]; !ok || d.Before != "mq-deadline" {
		t.Errorf("scheduler diff: %+v (all: %v)", d, p.Config)
	}
	if _, ok := paths["cpu.governors.performance"]; !ok {
		t.Errorf("governor diff missing: %v", p.Config)
	}
	for path := range paths {
		if strings.HasPrefix(path, "sysctl.kernel.random") || path == "id" || path == "taken_at" {
			t.Errorf("volatile fact reported: %s", path)
		}
	}
	if len(p.Causes) < 2 {
		t.Fatalf("causes: %+v", p.Causes)
	}
	// THP (memory, moved) and governor (affects memory too, weight 3)
	// both have moved metrics; the I/O scheduler cannot explain a memory
	// metric and is not a cause at all.
	var ids []string
	for _, cs := range p.Causes {
		ids = append(ids, cs.Knob)
		if cs.Knob == "io-scheduler" {
			t.Errorf("the I/O scheduler cannot move memory latency")
		}
	}
	if ids[0] != "cpu-governor" && ids[0] != "thp" {
		t.Errorf("order %v", ids)
	}
	for _, cs := range p.Causes[:2] {
		if !cs.Supported() || len(cs.Moved) != 1 {
			t.Errorf("%s: moved %v", cs.Knob, cs.Moved)
		}
	}
}

// A knob whose metrics did not move ranks below one whose metrics did,
// even when the unmoved knob is weightier.
func TestExplainSupportBeatsWeight(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	a := mkRun("a", "sysbench.cpu", "h",
		metricSpec{"events_per_sec", "events/s", run.Higher, noisy(rng, 12, 1000, 0.002)},
		metricSpec{"getpid", "ns syscall", run.Lower, noisy(rng, 12, 100, 0.002)})
	b := mkRun("b", "sysbench.cpu", "h",
		metricSpec{"events_per_sec", "events/s", run.Higher, noisy(rng, 12, 1000, 0.002)},
		metricSpec{"getpid", "ns syscall", run.Lower, noisy(rng, 12, 130, 0.002)})
	a.SnapshotID, b.SnapshotID = "sa", "sb"
	sa := &snapshot.Snapshot{ID: "sa", CPU: snapshot.CPU{Boost: ptr(true)}, Kernel: snapshot.Kernel{Vulnerabilities: map[string]string{"meltdown": "Not affected"}}}
	sb := &snapshot.Snapshot{ID: "sb", CPU: snapshot.CPU{Boost: ptr(false)}, Kernel: snapshot.Kernel{Vulnerabilities: map[string]string{"meltdown": "Mitigation: PTI"}}}
	c, err := Compare([]Side{
		{Name: "A", Runs: replicate(a, 3, 0.002, 1), Snapshots: map[string]*snapshot.Snapshot{"sa": sa}},
		{Name: "B", Runs: replicate(b, 3, 0.002, 2), Snapshots: map[string]*snapshot.Snapshot{"sb": sb}},
	}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	causes := c.Pairs[0].Causes
	if len(causes) < 2 || causes[0].Knob != "mitigations" {
		t.Fatalf("causes %+v", causes)
	}
	if !causes[0].Supported() {
		t.Error("mitigations: syscall metric moved")
	}
}

func TestMonitorSteal(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	mon := func(steal float64) []run.MonitorPoint {
		var pts []run.MonitorPoint
		for i := 0; i < 20; i++ {
			pts = append(pts, run.MonitorPoint{T: float64(i), StealPct: steal + rng.Float64(), CtxSwitches: 1000 + 10*rng.Float64()})
		}
		return pts
	}
	a := mkRun("a", "cpu", "h", metricSpec{"events", "events/s", run.Higher, noisy(rng, 10, 1000, 0.003)})
	b := mkRun("b", "cpu", "h", metricSpec{"events", "events/s", run.Higher, noisy(rng, 10, 800, 0.003)})
	a.Monitor, b.Monitor = mon(0), mon(20)
	c, err := Compare([]Side{side("A", a), side("B", b)}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	p := c.Pairs[0]
	var steal, ctx *MonDelta
	for i := range p.Monitor {
		switch p.Monitor[i].Field {
		case "steal_pct":
			steal = &p.Monitor[i]
		case "ctxt_per_s":
			ctx = &p.Monitor[i]
		}
	}
	if steal == nil || !steal.Notable || math.Abs(steal.Other-steal.Base-20) > 1 {
		t.Errorf("steal: %+v", steal)
	}
	if ctx == nil || ctx.Notable {
		t.Errorf("a 1%% change in context switches is not notable: %+v", ctx)
	}
	if len(p.Causes) == 0 || p.Causes[0].Knob != "steal" || p.Causes[0].Source != "monitor" {
		t.Errorf("causes: %+v", p.Causes)
	}
}

func TestDiffRuns(t *testing.T) {
	a := mkRun("a", "wrk", "h")
	b := mkRun("b", "wrk", "h")
	a.Params["connections"], b.Params["connections"] = "100", "400"
	b.Params["duration"] = "10s"
	a.ToolVersion, b.ToolVersion = "4.1", "4.2"
	got := DiffRuns([]*run.Run{a}, []*run.Run{b})
	want := []Diff{
		{"run[wrk].params.connections", "100", "400"},
		{"run[wrk].params.duration", absent, "10s"},
		{"run[wrk].tool_version", "4.1", "4.2"},
	}
	if len(got) != len(want) {
		t.Fatalf("got %v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("diff %d: %+v want %+v", i, got[i], want[i])
		}
	}
}

// Runs of an interleaved session are compared block by block: the host's
// drift between blocks (±8% here) cancels, and a −4% effect is found that
// the same runs, unpaired, cannot resolve.
func TestInterleavedBlocksArePaired(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 8))
	var as, bs []*run.Run
	for blk := 1; blk <= 6; blk++ {
		off := 1 + 0.08*(2*rng.Float64()-1)
		a := mkRun(fmt.Sprint("a", blk), "cpu", "h", metricSpec{"events", "events/s", run.Higher, noisy(rng, 8, 1000*off, 0.002)})
		b := mkRun(fmt.Sprint("b", blk), "cpu", "h", metricSpec{"events", "events/s", run.Higher, noisy(rng, 8, 960*off, 0.002)})
		a.State, a.Block, b.State, b.Block = "A", blk, "B", blk
		as, bs = append(as, a), append(bs, b)
	}
	c, err := Compare([]Side{side("A", as...), side("B", bs...)}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	d := findDelta(t, c, c.Pairs[0], "events")
	if d.Drift.Source != "blocks" || d.Verdict != Worse || !(d.DeltaLoPct < -4 && -4 < d.DeltaHiPct) {
		t.Errorf("paired: %s %+v Δ %.2f%% [%.2f, %.2f], want worse from blocks covering −4%%", d.Verdict, d.Drift, d.DeltaPct, d.DeltaLoPct, d.DeltaHiPct)
	}
	for _, r := range bs { // the same runs without their blocks
		r.State, r.Block = "", 0
	}
	c, _ = Compare([]Side{side("A", as...), side("B", bs...)}, Options{})
	if d := findDelta(t, c, c.Pairs[0], "events"); d.Drift.Source != "runs" || d.Verdict == Worse {
		t.Errorf("unpaired: %s %+v, want no verdict from runs", d.Verdict, d.Drift)
	}
}

// Issue 12 point 4: state facts (node memory grown by hot-plug, a runtime
// mount) are conditions, never likely causes; a setting explains only a
// change in the direction the knowledge base gives it (a governor switched
// to powersave does not explain a metric that got better).
func TestCausesOnlyFromSettingsInTheirDirection(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 11))
	a := mkRun("a", "cpu", "h", metricSpec{"events", "events/s", run.Higher, noisy(rng, 10, 1000, 0.002)})
	b := mkRun("b", "cpu", "h", metricSpec{"events", "events/s", run.Higher, noisy(rng, 10, 1300, 0.002)})
	a.SnapshotID, b.SnapshotID = "sa", "sb"
	sa := &snapshot.Snapshot{ID: "sa", CPU: snapshot.CPU{Governors: map[string][]int{"performance": {0, 1}},
		NUMA: []snapshot.NUMANode{{ID: 0, MemTotalKiB: 5_600_000}}}}
	sb := &snapshot.Snapshot{ID: "sb", CPU: snapshot.CPU{Governors: map[string][]int{"powersave": {0, 1}},
		NUMA: []snapshot.NUMANode{{ID: 0, MemTotalKiB: 7_300_000}}},
		Mounts: []snapshot.Mount{{MountPoint: "/run/netns", FSType: "tmpfs"}}}
	c, err := Compare([]Side{
		{Name: "A", Runs: replicate(a, 3, 0.002, 1), Snapshots: map[string]*snapshot.Snapshot{"sa": sa}},
		{Name: "B", Runs: replicate(b, 3, 0.002, 2), Snapshots: map[string]*snapshot.Snapshot{"sb": sb}},
	}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	p := c.Pairs[0]
	if d := findDelta(t, c, p, "events"); d.Verdict != Better {
		t.Fatalf("events +30%%: %s", d.Verdict)
	}
	for _, cs := range p.Causes {
		if cs.Knob == "numa" {
			t.Errorf("node memory growing is a condition, not a cause: %+v", cs)
		}
		if cs.Knob == "cpu-governor" && cs.Supported() {
			t.Errorf("powersave cannot explain a metric that got better: %+v", cs)
		}
		if cs.Kind != KindSetting && cs.Kind != KindIdentity && cs.Kind != KindHostDrift {
			t.Errorf("cause %s has kind %q", cs.Knob, cs.Kind)
		}
	}
	var conds []string
	for _, d := range p.Conditions {
		conds = append(conds, d.Path)
	}
	if !strings.Contains(strings.Join(conds, " "), "mem_total_kib") {
		t.Errorf("conditions %v, want the node's memory", conds)
	}
}
