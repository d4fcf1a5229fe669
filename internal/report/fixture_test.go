package report

import (
	"math/rand/v2"
	"testing"

	"github.com/perflab/perflab/internal/compare"
	"github.com/perflab/perflab/internal/run"
	"github.com/perflab/perflab/internal/snapshot"
)

// demo builds a two-host comparison like the one in seed 004: the second
// host runs the powersave governor, so CPU-bound results drop, memory
// latency rises at large working sets, and one metric was measured in one
// run a side only (inconclusive). Each side has three runs, the unit that
// verdicts are decided on, on a host drifting ±0.3% between them.
func demo(t testing.TB, sides int) *compare.Comparison {
	t.Helper()
	rng := rand.New(rand.NewPCG(42, 7))
	noisy := func(n int, c, sd float64) []float64 {
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = c * (1 + sd*rng.NormFloat64())
		}
		return xs
	}
	mk1 := func(id, host, gov string, cpuScale, latScale float64, rep int) ([]*run.Run, *snapshot.Snapshot) {
		snap := &snapshot.Snapshot{Schema: 1, ID: "snap-" + id,
			CPU:    snapshot.CPU{Model: "Xeon", Governors: map[string][]int{gov: {0, 1}}},
			Memory: snapshot.Memory{THP: snapshot.THP{Enabled: "madvise"}},
			Kernel: snapshot.Kernel{Release: "6.1.0", Clocksource: "kvm-clock"},
			Sysctl: map[string]string{"vm.swappiness": "60"}}
		drift := 1 + 0.003*rng.NormFloat64()
		cpuScale *= drift
		latScale /= drift
		suffix := ""
		if rep > 0 {
			suffix = "." + string(rune('0'+rep))
		}
		cpu := &run.Run{Schema: 1, ID: id + "-cpu" + suffix, Suite: "basic", Probe: "cpu", Host: host, SnapshotID: snap.ID,
			Params: map[string]string{"threads": "1"}, Complete: true, Stop: run.StopPrecision,
			Metrics: []run.Metric{
				{Name: "events_per_sec.t1", Unit: "events/s", Better: run.Higher},
				{Name: "prime_time", Unit: "s", Better: run.Lower},
				{Name: "pipe <rtt> | x", Unit: "µs", Better: run.Lower},
			}}
		add := func(r *run.Run, metric string, vs []float64) {
			for i, v := range vs {
				r.Samples = append(r.Samples, run.Sample{Metric: metric, Value: v, Iteration: i})
			}
		}
		add(cpu, "events_per_sec.t1", noisy(10, 1000*cpuScale, 0.004))
		add(cpu, "prime_time", noisy(10, 4.48/cpuScale, 0.004))
		if rep == 0 {
			add(cpu, "pipe <rtt> | x", []float64{5, 6, 5})
		} else {
			cpu.Metrics = cpu.Metrics[:2]
		}
		lat := &run.Run{Schema: 1, ID: id + "-mem" + suffix, Suite: "basic", Probe: "memory.latency", Host: host, SnapshotID: snap.ID,
			Params: map[string]string{}, Complete: true, Stop: run.StopPrecision}
		for i, ws := range []float64{16 << 10, 256 << 10, 8 << 20, 256 << 20} {
			name := "latency." + []string{"16KiB", "256KiB", "8MiB", "256MiB"}[i]
			lat.Metrics = append(lat.Metrics, run.Metric{Name: name, Unit: "ns", Better: run.Lower, Series: "latency", X: ws, XUnit: "bytes"})
			base := []float64{1.2, 4, 14, 95}[i]
			if i >= 2 {
				base *= latScale
			} else {
				base /= drift
			}
			add(lat, name, noisy(8, base, 0.01))
		}
		for i := 0; i < 10; i++ {
			cpu.Monitor = append(cpu.Monitor, run.MonitorPoint{T: float64(i), StealPct: 0.2 + 0.1*rng.Float64(), CtxSwitches: 900 + 20*rng.Float64()})
		}
		return []*run.Run{cpu, lat}, snap
	}
	mk := func(id, host, gov string, cpuScale, latScale float64) ([]*run.Run, *snapshot.Snapshot) {
		var runs []*run.Run
		var snap *snapshot.Snapshot
		for rep := range 3 {
			rs, sn := mk1(id, host, gov, cpuScale, latScale, rep)
			runs, snap = append(runs, rs...), sn
		}
		return runs, snap
	}
	ra, sa := mk("a", "vm-1", "performance", 1, 1)
	rb, sb := mk("b", "vm-2", "powersave", 0.8, 1.3)
	ss := []compare.Side{
		{Name: "vm", Runs: ra, Snapshots: map[string]*snapshot.Snapshot{sa.ID: sa}},
		{Name: "container", Runs: rb, Snapshots: map[string]*snapshot.Snapshot{sb.ID: sb}},
	}
	if sides == 1 {
		ss = ss[:1]
	}
	if sides == 3 {
		rc, sc := mk("c", "vm-3", "performance", 1.001, 1)
		ss = append(ss, compare.Side{Name: "third", Runs: rc, Snapshots: map[string]*snapshot.Snapshot{sc.ID: sc}})
	}
	c, err := compare.Compare(ss, compare.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return c
}
