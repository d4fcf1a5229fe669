// Package probetest gives tests one fake probe: its samples are a function
// the test writes (usually of a file in a fixture tree, so a setting that
// tune, bisect or search writes changes what the probe measures), scaled by
// a level drawn at each run's Setup to model a host that drifts from run to
// run.
package probetest

import (
	"context"
	"math/rand/v2"

	"github.com/perflab/perflab/internal/probe"
	"github.com/perflab/perflab/internal/run"
)

// Fake is a probe.Probe for tests.
type Fake struct {
	ProbeName string
	Metric    []run.Metric
	// Rng drives the drift and is passed to Sample; seed it for a
	// reproducible test.
	Rng *rand.Rand
	// Drift is the run-to-run level's half-width: each Setup draws a level
	// uniformly in 1±Drift (0: no draw, level 1).
	Drift float64
	// Sample returns one iteration's values before the run's level.
	Sample func(rng *rand.Rand) (map[string]float64, error)

	level float64
}

func (p *Fake) Name() string                               { return p.ProbeName }
func (p *Fake) Doc() string                                { return "fake" }
func (p *Fake) Defaults(bool) probe.Params                 { return probe.Params{} }
func (p *Fake) Metrics(probe.Params) ([]run.Metric, error) { return p.Metric, nil }
func (p *Fake) Teardown(*probe.Env) error                  { return nil }
func (p *Fake) Setup(context.Context, *probe.Env) error {
	p.level = 1
	if p.Drift > 0 {
		p.level = 1 + p.Drift*(2*p.Rng.Float64()-1)
	}
	return nil
}

func (p *Fake) Iterate(context.Context, *probe.Env) (map[string]float64, error) {
	v, err := p.Sample(p.Rng)
	if err != nil {
		return nil, err
	}
	if p.level == 0 {
		p.level = 1
	}
	for k := range v {
		v[k] *= p.level
	}
	return v, nil
}
