package search

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/perflab/perflab/internal/audit"
	"github.com/perflab/perflab/internal/run"
)

var simMetrics = []run.Metric{
	{Name: "rps", Unit: "req/s", Better: run.Higher},
	{Name: "p99", Unit: "ms", Better: run.Lower},
}

func simKnobs() ([]Knob, map[string]string) {
	ks := []Knob{
		{Name: "net.core.somaxconn", Kind: audit.KindSysctl, Target: "net.core.somaxconn", Scope: ScopeNetNS, Ladder: []string{"4096", "65535"}},
		{Name: "net.ipv4.tcp_rmem", Kind: audit.KindSysctl, Target: "net.ipv4.tcp_rmem", Scope: ScopeNetNS, Ladder: []string{"4096 131072 6291456"}},
		{Name: "net.ipv4.tcp_fin_timeout", Kind: audit.KindSysctl, Target: "net.ipv4.tcp_fin_timeout", Scope: ScopeNetNS, Ladder: []string{"15", "30"}},
		{Name: "net.ipv4.tcp_tw_reuse", Kind: audit.KindSysctl, Target: "net.ipv4.tcp_tw_reuse", Scope: ScopeNetNS, Ladder: []string{"0", "1"}},
		{Name: "/sys/block/vda/queue/read_ahead_kb", Kind: audit.KindFile, Target: "/sys/block/vda/queue/read_ahead_kb", Scope: ScopeHost, Ladder: []string{"512", "4096"}},
	}
	base := map[string]string{"net.core.somaxconn": "16", "net.ipv4.tcp_rmem": "4096 4096 4096", "net.ipv4.tcp_fin_timeout": "60",
		"net.ipv4.tcp_tw_reuse": "2", "/sys/block/vda/queue/read_ahead_kb": "128"}
	return ks, base
}

func newSim(seed uint64, effects map[string]map[string]map[string]float64) *Sim {
	return &Sim{Rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), Metrics: simMetrics,
		Base: map[string]float64{"rps": 20000, "p99": 5}, Effects: effects, Drift: 0.05, Trend: 0.01}
}

// No false gains: over knobs that cannot affect the probe, with ±5%
// per-run drift and a slow trend, at most 5% of searches may confirm a
// gain. The bound the simulation supports: with n = 1000 searches the
// one-sided 95% upper (Wilson) bound of the observed rate must be ≤ 5%.
func TestNoFalseGainsSimulated(t *testing.T) {
	const n = 1000
	ks, base := simKnobs()
	false_, screened, runs := 0, 0, 0
	for i := range n {
		res, err := Run(context.Background(), Options{Probe: "sim", Knobs: ks, Baseline: base, Measurer: newSim(uint64(i+1), nil)})
		if err != nil {
			t.Fatal(err)
		}
		if res.Confirmed {
			false_++
		}
		if res.Gain != nil {
			screened++
		}
		runs += res.Runs
		if !res.Confirmed && res.Conclusion == "" {
			t.Fatalf("search %d has no conclusion", i)
		}
	}
	ub := wilsonUpper(false_, n, 1.645)
	t.Logf("%d/%d false gains (upper bound %.2f%%); the screening kept a useless knob in %d; %.1f runs per search", false_, n, 100*ub, screened, float64(runs)/n)
	if ub > 0.05 {
		t.Fatalf("false-gain rate %d/%d: upper bound %.3f > 0.05", false_, n, ub)
	}
}

func wilsonUpper(k, n int, z float64) float64 {
	p := float64(k) / float64(n)
	d := 1 + z*z/float64(n)
	c := p + z*z/(2*float64(n))
	h := z * math.Sqrt(p*(1-p)/float64(n)+z*z/(4*float64(n)*float64(n)))
	return (c + h) / d
}

// Real gains: rmem ×1.5 and somaxconn ×1.2 (65535 better than 4096), the
// rest nothing; the search must keep both, drop the rest, and its
// confirmed gain must cover the true ×1.8 in most searches.
func TestRealGainsSimulated(t *testing.T) {
	ks, base := simKnobs()
	eff := map[string]map[string]map[string]float64{"rps": {
		"net.ipv4.tcp_rmem":  {"4096 131072 6291456": 1.5},
		"net.core.somaxconn": {"4096": 1.1, "65535": 1.2},
	}}
	const n = 200
	found, covered := 0, 0
	for i := range n {
		res, err := Run(context.Background(), Options{Probe: "sim", Knobs: ks, Baseline: base, Measurer: newSim(uint64(1000+i), eff)})
		if err != nil {
			t.Fatal(err)
		}
		w := res.WinnerConfig()
		if res.Confirmed && w["net.ipv4.tcp_rmem"] != "" && w["net.core.somaxconn"] != "" && len(w) == 2 {
			found++
		}
		if res.Gain != nil && res.Gain.Lo <= 1.8 && 1.8 <= res.Gain.Hi {
			covered++
		}
		if i == 0 {
			if res.Runs == 0 || res.Blocks == 0 || res.Seconds == 0 {
				t.Fatalf("no budget accounted: %+v", res)
			}
			for _, r := range res.Rejected {
				if r.Knob == "net.ipv4.tcp_rmem" {
					t.Fatalf("rmem rejected: %+v", r)
				}
			}
		}
	}
	t.Logf("found exactly the two knobs in %d/%d, gain CI covers ×1.8 in %d/%d", found, n, covered, n)
	// With effects of 20% and 50% against 4% run-to-run noise the
	// screening's power is near 1; 90% leaves room for the seeds.
	if found < n*9/10 {
		t.Fatalf("found the two knobs in only %d/%d searches", found, n)
	}
	// A 95% interval covers the truth in ~95% of searches; 85% is far
	// below what 200 searches could show by chance (binomial sd 1.5%).
	if covered < n*85/100 {
		t.Fatalf("gain interval covered the true effect in only %d/%d", covered, n)
	}
}

// A harmful knob is rejected and flagged.
func TestHarmfulFlagged(t *testing.T) {
	ks, base := simKnobs()
	eff := map[string]map[string]map[string]float64{"rps": {"net.ipv4.tcp_tw_reuse": {"0": 0.7}}}
	res, err := Run(context.Background(), Options{Probe: "sim", Knobs: ks, Baseline: base, Measurer: newSim(7, eff)})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res.Rejected {
		if r.Knob == "net.ipv4.tcp_tw_reuse" {
			if !r.Harmful || r.Worst == nil || r.Worst.Value != "0" {
				t.Fatalf("tw_reuse=0 not flagged harmful: %+v", r)
			}
			return
		}
	}
	t.Fatalf("tw_reuse not in rejected: %+v", res.Rejected)
}

// Constrained: somaxconn=65535 raises rps ×1.3 but p99 ×1.5 (7.5 ms > 6);
// 4096 raises rps ×1.15 with p99 unchanged. Maximising rps subject to
// p99 ≤ 6 must pick 4096, and the confirmation's worst block meets it.
func TestConstrainedObjective(t *testing.T) {
	ks, base := simKnobs()
	eff := map[string]map[string]map[string]float64{
		"rps": {"net.core.somaxconn": {"65535": 1.3, "4096": 1.15}},
		"p99": {"net.core.somaxconn": {"65535": 1.5}},
	}
	o, err := ParseObjective("max:rps,p99<=6")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 50 {
		res, err := Run(context.Background(), Options{Probe: "sim", Knobs: ks, Baseline: base, Objective: o, Measurer: newSim(uint64(500+i), eff)})
		if err != nil {
			t.Fatal(err)
		}
		if w := res.WinnerConfig(); w["net.core.somaxconn"] == "65535" {
			t.Fatalf("search %d chose the value that breaks p99<=6: %+v", i, res.Steps)
		}
		if res.Confirmed {
			for _, c := range res.Constraints {
				if !c.Held || c.Worst > 6 {
					t.Fatalf("confirmed with a broken bound: %+v", c)
				}
			}
		}
	}
	// Unconstrained, the larger gain wins.
	res, err := Run(context.Background(), Options{Probe: "sim", Knobs: ks, Baseline: base, Measurer: newSim(3, eff)})
	if err != nil {
		t.Fatal(err)
	}
	if w := res.WinnerConfig(); w["net.core.somaxconn"] != "65535" {
		t.Fatalf("unconstrained search did not keep 65535: %+v", res.Steps)
	}
}

// The budget stops the screening and says so; the confirmation still runs
// on what was found.
func TestBudget(t *testing.T) {
	ks, base := simKnobs()
	eff := map[string]map[string]map[string]float64{"rps": {"net.core.somaxconn": {"65535": 1.5}}}
	// One run is 1 s simulated; the first step costs 9 runs, a confirmation
	// 12: a 25 s budget leaves room for one step only.
	res, err := Run(context.Background(), Options{Probe: "sim", Knobs: ks, Baseline: base, Measurer: newSim(11, eff), Budget: 25e9})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Untried) == 0 || len(res.Steps) != 1 || !res.Confirmed {
		t.Fatalf("budget not honoured: steps %d untried %v confirmed %v", len(res.Steps), res.Untried, res.Confirmed)
	}
	if res.Seconds > 25 {
		t.Fatalf("spent %.0f s of a 25 s budget", res.Seconds)
	}
}

func TestParseObjective(t *testing.T) {
	for _, bad := range []string{"max:", "p99<=", "max:rps,p99<5", "max:rps,p99<=x", "a b"} {
		if _, err := ParseObjective(bad); err == nil && bad != "max:" {
			t.Errorf("%q parsed", bad)
		}
	}
	o, err := ParseObjective("min:p99,rps>=20000")
	if err != nil || o.Better != run.Lower || o.Metric != "p99" || len(o.Constraints) != 1 || o.Constraints[0].Holds(19999) || !o.Constraints[0].Holds(20000) {
		t.Fatalf("%+v %v", o, err)
	}
}

func TestSpace(t *testing.T) {
	w, err := audit.LookupWorkload("web")
	if err != nil {
		t.Fatal(err)
	}
	add, err := ParseKnobSpec("net.ipv4.tcp_keepalive_time=60, 600")
	if err != nil {
		t.Fatal(err)
	}
	ks, ex := Space(FromKnobs{FS: fakeTree(t)}, SpaceOptions{Workload: w, Add: []Knob{add}, Pin: []string{"net.ipv4.tcp_fastopen"}, NamespacedOnly: true})
	got := map[string]Knob{}
	for _, k := range ks {
		got[k.Name] = k
		if k.Scope != ScopeNetNS {
			t.Errorf("%s is host-wide in a namespaced-only space", k.Name)
		}
	}
	if _, ok := got["net.ipv4.tcp_fastopen"]; ok {
		t.Error("a pinned knob is searched")
	}
	if _, ok := got["vm.swappiness"]; ok {
		t.Error("a host-wide knob is searched")
	}
	if k := got["net.ipv4.tcp_keepalive_time"]; len(k.Ladder) != 2 || k.Ladder[1] != "600" {
		t.Errorf("user knob: %+v", k)
	}
	if len(ex) == 0 {
		t.Error("nothing excluded")
	}
	for _, bad := range []string{"x", "net.core.somaxconn=", "/sys/../etc/passwd=1", "a b=1"} {
		if _, err := ParseKnobSpec(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

// An interaction, as measured on this machine: a large tcp_rmem alone
// makes bandwidth worse (×0.5), a large tcp_wmem alone ×4, both ×48. The
// first pass rejects rmem (tried before wmem), the second pass retries it
// against the configuration with wmem and keeps it; the confirmed winner
// holds both.
func TestInteractionSecondPass(t *testing.T) {
	ks, base := simKnobs()
	ks = append([]Knob{{Name: "net.ipv4.tcp_wmem", Kind: audit.KindSysctl, Target: "net.ipv4.tcp_wmem", Scope: ScopeNetNS, Ladder: []string{"4096 16384 4194304"}}}, ks...)
	ks[0], ks[2] = ks[2], ks[0] // rmem first, wmem third
	base["net.ipv4.tcp_wmem"] = "4096 4096 4096"
	model := buffersModel(48, 0.5, 4)
	for i := range 20 {
		sim := newSim(uint64(3000+i), nil)
		sim.Model = model
		res, err := Run(context.Background(), Options{Probe: "sim", Knobs: ks, Baseline: base, Measurer: sim})
		if err != nil {
			t.Fatal(err)
		}
		w := res.WinnerConfig()
		if !res.Confirmed || w["net.ipv4.tcp_rmem"] == "" || w["net.ipv4.tcp_wmem"] == "" {
			t.Fatalf("search %d: winner %v (%s)", i, w, res.Conclusion)
		}
		if res.Gain.Lo > 48 || res.Gain.Hi < 48 {
			t.Logf("search %d: gain ×%.1f [%.1f, %.1f] misses ×48", i, res.Gain.Ratio, res.Gain.Lo, res.Gain.Hi)
		}
		pass2 := false
		for _, st := range res.Steps {
			pass2 = pass2 || (st.Pass == 2 && st.Knob == "net.ipv4.tcp_rmem" && st.Kept != "")
		}
		if !pass2 {
			t.Fatalf("search %d: rmem not kept on the second pass: %+v", i, res.Steps)
		}
	}
}

// A large gain on a very noisy target (a configuration with tiny socket
// buffers varies ±60% run to run): four blocks often leave it unclear;
// extending the step while the value is promising finds it far more
// often, and the confirmation still decides.
func TestNoisyGainExtended(t *testing.T) {
	ks, base := simKnobs()
	eff := map[string]map[string]map[string]float64{"rps": {"net.ipv4.tcp_rmem": {"4096 131072 6291456": 2}}}
	const n = 300
	found := func(maxBlocks int) (int, float64) {
		k, runs := 0, 0
		for i := range n {
			sim := newSim(uint64(2000+i), eff)
			sim.Drift = 0.6
			res, err := Run(context.Background(), Options{Probe: "sim", Knobs: ks, Baseline: base, Measurer: sim, MaxBlocks: maxBlocks})
			if err != nil {
				t.Fatal(err)
			}
			if res.Confirmed && res.WinnerConfig()["net.ipv4.tcp_rmem"] != "" {
				k++
			}
			runs += res.Runs
		}
		return k, float64(runs) / n
	}
	fixed, fixedRuns := found(4)
	ext, extRuns := found(0)
	t.Logf("×2 at ±60%% drift: found in %d/%d with 4 blocks a step (%.1f runs), %d/%d extending to 12 (%.1f runs)", fixed, n, fixedRuns, ext, n, extRuns)
	if ext < fixed+n/10 {
		t.Fatalf("extending found the gain in %d/%d searches against %d/%d without", ext, n, fixed, n)
	}
}

// Knobs that help only together (this 6.18 VM: tcp_rmem raised alone
// ×0.05, tcp_wmem alone ×0.78, both ×14) are invisible to coordinate
// ascent; as one catalogue group they are tried together after the
// passes, both are kept, the shrink keeps both (either removed is far
// worse), and the confirmation shows each alone harmful.
func TestGroupTriedTogether(t *testing.T) {
	ks, base := simKnobs()
	wmem := Knob{Name: "net.ipv4.tcp_wmem", Kind: audit.KindSysctl, Target: "net.ipv4.tcp_wmem", Scope: ScopeNetNS, Ladder: []string{"4096 16384 4194304"}, Group: "tcp buffers"}
	ks = append(ks, wmem)
	for i := range ks {
		if ks[i].Name == "net.ipv4.tcp_rmem" {
			ks[i].Group = "tcp buffers"
		}
	}
	base["net.ipv4.tcp_wmem"] = "4096 4096 4096"
	model := buffersModel(14, 0.05, 0.78)
	for i := range 20 {
		sim := newSim(uint64(4000+i), nil)
		sim.Model = model
		res, err := Run(context.Background(), Options{Probe: "sim", Knobs: ks, Baseline: base, Measurer: sim})
		if err != nil {
			t.Fatal(err)
		}
		w := res.WinnerConfig()
		if !res.Confirmed || len(w) != 2 || w["net.ipv4.tcp_rmem"] == "" || w["net.ipv4.tcp_wmem"] == "" {
			t.Fatalf("search %d: winner %v (%s)", i, w, res.Conclusion)
		}
		joint := res.Steps[len(res.Steps)-1]
		if len(joint.Members) != 2 || joint.Pass != 3 || joint.Kept == "" {
			t.Fatalf("search %d: the last step is not the group tried together: %+v", i, joint)
		}
		for _, s := range res.Winner {
			if s.Alone == nil || s.Alone.Verdict != "worse" {
				t.Fatalf("search %d: %s alone is not shown harmful: %+v", i, s.Knob, s.Alone)
			}
		}
	}
	// Without the group the same target yields nothing.
	for i := range ks {
		ks[i].Group = ""
	}
	sim := newSim(4000, nil)
	sim.Model = model
	res, err := Run(context.Background(), Options{Probe: "sim", Knobs: ks, Baseline: base, Measurer: sim})
	if err != nil {
		t.Fatal(err)
	}
	if res.Confirmed {
		t.Fatalf("coordinate ascent alone found the joint gain: %v", res.WinnerConfig())
	}
}

// buffersModel is a simulated target's rps multiplier with tcp_rmem and
// tcp_wmem raised together (both), rmem alone and wmem alone.
func buffersModel(both, rmem, wmem float64) func(string, Config) float64 {
	return func(m string, c Config) float64 {
		if m != "rps" {
			return 1
		}
		r, w := c["net.ipv4.tcp_rmem"] != "", c["net.ipv4.tcp_wmem"] != ""
		switch {
		case r && w:
			return both
		case r:
			return rmem
		case w:
			return wmem
		}
		return 1
	}
}
