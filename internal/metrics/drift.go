package metrics

import (
	"sync"

	"github.com/perflab/perflab/internal/tune"
	"github.com/prometheus/client_golang/prometheus"
)

var (
	driftDesc = lazyDesc(Namespace+"_tune_drift",
		"1 when a knob applied by 'perflab tune' no longer has the applied value (drifted), 0 when it still has it.",
		[]string{"kind", "target", "rule"}, nil)
	tunedDesc = lazyDesc(Namespace+"_tune_applied_knobs",
		"Number of knobs in the active tune journal.",
		nil, nil)
)

// Drift is a collector for 'perflab tune verify': one series per applied
// knob, so an alert fires when something changes a tuned knob behind
// perflab's back.
type Drift struct {
	mu    sync.RWMutex
	drift []tune.Drift
	known bool
}

// NewDrift returns a drift collector that reports nothing until Update.
func NewDrift() *Drift { return &Drift{} }

// Update records the latest verify result (nil when nothing is applied).
func (d *Drift) Update(drift []tune.Drift) {
	d.mu.Lock()
	d.drift, d.known = append([]tune.Drift(nil), drift...), true
	d.mu.Unlock()
}

// Describe implements prometheus.Collector.
func (d *Drift) Describe(ch chan<- *prometheus.Desc) {
	ch <- driftDesc()
	ch <- tunedDesc()
}

// Collect implements prometheus.Collector.
func (d *Drift) Collect(ch chan<- prometheus.Metric) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	if !d.known {
		return
	}
	for _, x := range d.drift {
		ch <- constGauge(driftDesc(), b2f(!x.OK), x.Kind, x.Target, x.Rule)
	}
	ch <- constGauge(tunedDesc(), float64(len(d.drift)))
}
