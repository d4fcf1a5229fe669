package search

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"
)

// The simulated target is seeded: the same seed measures the same values
// to the bit. A configuration's effects are multiplied in the order of
// the knobs' names; in a map's order the product could differ in its last
// bit from one measurement to the next.
func TestSimSameSeedSameBits(t *testing.T) {
	eff := map[string]map[string]map[string]float64{"rps": {}, "p99": {}}
	state := Config{}
	for i := range 8 {
		k := fmt.Sprintf("knob%d", i)
		state[k] = "on"
		eff["rps"][k] = map[string]float64{"on": 1 + 0.0137*float64(i+1)}
		eff["p99"][k] = map[string]float64{"on": 1 / (1 + 0.0291*float64(i+1))}
	}
	measure := func() string {
		s := newSim(11, eff)
		ss, err := s.Measure(context.Background(), []Config{{}, state}, 20)
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		for _, blocks := range ss.Medians {
			for _, m := range blocks {
				fmt.Fprintf(&b, "%x %x\n", math.Float64bits(m["rps"]), math.Float64bits(m["p99"]))
			}
		}
		return b.String()
	}
	want := measure()
	for i := range 100 {
		if got := measure(); got != want {
			t.Fatalf("measurement %d differs from the first", i+1)
		}
	}
}
