package fleet

import (
	"runtime"
	"testing"
)

// The power simulation is seeded: the same PowerSim gives the same result
// however often it runs and at GOMAXPROCS 1 and 2 (its draws are made in
// host and run order; the rule reads each host's medians by host name, so
// the map that holds them gives no order). Another seed gives another
// result, so the comparison is not of constants.
func TestPowerSimSameSeedSameResult(t *testing.T) {
	p := PowerSim{Hosts: 40, Runs: 4, OtherRuns: 2, HostSpread: 0.01, RunNoise: 0.03, Effect: 0.04, Plant: PlantAll, Trials: 40, Seed: 3}
	want := p.Simulate()
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, procs := range []int{1, 2} {
		runtime.GOMAXPROCS(procs)
		for range 3 {
			if got := p.Simulate(); got != want {
				t.Fatalf("GOMAXPROCS %d: %+v, first run %+v", procs, got, want)
			}
		}
	}
	differs := false
	for s := uint64(4); s < 8 && !differs; s++ {
		q := p
		q.Seed = s
		differs = q.Simulate() != want
	}
	if !differs {
		t.Errorf("seeds 4–7 all gave seed 3's %+v", want)
	}
}
