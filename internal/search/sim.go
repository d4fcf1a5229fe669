package search

import (
	"context"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/perflab/perflab/internal/run"
)

// Sim is a seeded simulated target: each configuration has a true effect
// on every metric (the product of its knobs' effects), and every run's
// median is that value times a per-run drift, uniform in ±Drift, times the
// host's slow trend. It measures in interleaved blocks as Host does, so the
// engine's error rates can be counted over thousands of searches.
type Sim struct {
	Rng *rand.Rand
	// Metrics the probe reports, each with its baseline value.
	Metrics []run.Metric
	Base    map[string]float64
	// Effects[metric][knob][value] multiplies metric when knob has value
	// (absent: 1, no effect).
	Effects map[string]map[string]map[string]float64
	// Model, when set, is the true multiplier of a metric in a
	// configuration, for effects that are not a product (interactions).
	Model   func(metric string, c Config) float64
	Drift   float64       // per-run relative drift, uniform in ±Drift
	Trend   float64       // slow drift per block (log scale), cancelled by the pairing
	RunTime time.Duration // simulated time per run (default 1s)
	block   int
}

// Measure implements Measurer.
func (s *Sim) Measure(ctx context.Context, states []Config, blocks int) (*Session, error) {
	rt := s.RunTime
	if rt == 0 {
		rt = time.Second
	}
	ss := &Session{Metrics: s.Metrics, Medians: make([][]map[string]float64, len(states))}
	for b := 0; b < blocks; b++ {
		if err := ctx.Err(); err != nil {
			return ss, err
		}
		s.block++
		for _, i := range s.Rng.Perm(len(states)) {
			m := map[string]float64{}
			for _, mt := range s.Metrics {
				v := s.Base[mt.Name]
				// In the knobs' order: in a map's, the product could differ
				// in its last bit from run to run (TestSimSameSeedSameBits).
				for _, k := range slices.Sorted(maps.Keys(states[i])) {
					if e, ok := s.Effects[mt.Name][k][states[i][k]]; ok {
						v *= e
					}
				}
				if s.Model != nil {
					v *= s.Model(mt.Name, states[i])
				}
				v *= (1 + s.Drift*(2*s.Rng.Float64()-1)) * math.Exp(s.Trend*float64(s.block))
				m[mt.Name] = v
			}
			ss.Medians[i] = append(ss.Medians[i], m)
			ss.Runs++
			ss.Elapsed += rt
		}
		ss.Blocks++
	}
	return ss, nil
}
