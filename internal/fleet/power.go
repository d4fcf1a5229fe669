package fleet

import (
	"math/rand/v2"
	"strconv"
)

// Planted says which of the planted host's runs carry the effect in a
// power simulation.
type Planted int

const (
	PlantNone   Planted = iota // an A/A fleet: no host differs
	PlantAll                   // every run of the planted host
	PlantNewest                // only its newest run
)

// PowerSim is one cell of the outlier rule's power table: a fleet of
// Hosts hosts whose true values spread by HostSpread (relative standard
// deviation across hosts), each with Runs runs whose medians scatter by
// RunNoise (relative, normal) around the host's value; one host (the
// first) is Effect slower on the runs Plant says: those run medians (a
// throughput) are lower by the host's value × (1 − 1/(1+Effect)), their
// noise unchanged. The rule is the Builder's own (the same code as a
// report's).
type PowerSim struct {
	Hosts, Runs          int
	OtherRuns            int // when > 0: every second other host has this many runs instead
	HostSpread, RunNoise float64
	Effect               float64 // 0.2: the planted runs take 20% longer
	Plant                Planted
	Trials               int
	Seed                 uint64
}

// PowerResult is a simulation's outcome: the share of trials in which the
// planted host is an outlier, and the mean number of other hosts called
// outliers per fleet (false hosts; with PlantNone every host counts).
type PowerResult struct {
	Power      float64 // 0–1; 0 with PlantNone
	FalseHosts float64 // per fleet
}

// Simulate runs the trials of p. The same PowerSim gives the same result.
func (p PowerSim) Simulate() PowerResult {
	rng := rand.New(rand.NewPCG(p.Seed, uint64(p.Runs)<<32|uint64(p.Hosts)))
	var hit, falses int
	slow := 1 - 1/(1+p.Effect) // a run taking 20% longer does 1/1.2 of the work
	names := make([]string, p.Hosts)
	for i := range names {
		names[i] = "h" + strconv.Itoa(i)
	}
	for range p.Trials {
		a := &metricAcc{m: Metric{Probe: "sim", Metric: "x", Unit: "1/s", Better: "higher"}, medians: make(map[string][]float64, p.Hosts)}
		for i, name := range names {
			host := 100 * (1 + p.HostSpread*rng.NormFloat64())
			k := p.Runs
			if p.OtherRuns > 0 && i%2 == 1 {
				k = p.OtherRuns
			}
			meds := make([]float64, k)
			for j := range meds {
				meds[j] = host * (1 + p.RunNoise*rng.NormFloat64())
				if i == 0 && (p.Plant == PlantAll || p.Plant == PlantNewest && j == k-1) {
					meds[j] -= host * slow
				}
			}
			a.medians[name] = meds
		}
		m := a.metric(nil)
		for _, h := range m.Hosts {
			switch {
			case !h.Outlier:
			case h.Host == names[0] && p.Plant != PlantNone:
				hit++
			default:
				falses++
			}
		}
	}
	r := PowerResult{FalseHosts: float64(falses) / float64(p.Trials)}
	if p.Plant != PlantNone {
		r.Power = float64(hit) / float64(p.Trials)
	}
	return r
}
