// Package metrics turns perflab's verdicts into Prometheus metrics: one 0/1
// series per audit rule, node_exporter-style enum series for the knobs that
// most often explain a slow host (cpufreq governor, THP, clocksource,
// mitigations), and perflab_build_info.
//
// The collectors are ordinary prometheus.Collector values so that `perflab
// audit --format prom` (a node_exporter textfile) and `perflab exporter` (an
// HTTP endpoint) publish exactly the same series. Names carry the perflab_
// prefix so they never collide with node_exporter's own.
package metrics

import (
	"io"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/perflab/perflab/internal/audit"
	"github.com/perflab/perflab/internal/snapshot"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
)

// Namespace prefixes every perflab metric.
const Namespace = "perflab"

// NewRegistry returns a registry holding the build info and, when s is not
// nil, the findings and knob collectors for one audit.
func NewRegistry(version string, s *snapshot.Snapshot, workload string, findings []audit.Finding) *prometheus.Registry {
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(NewBuildInfo(version))
	if s != nil {
		f := NewFindings()
		f.Update(s, workload, findings)
		k := NewKnobs()
		k.Update(s)
		reg.MustRegister(f, k)
	}
	return reg
}

// WriteText writes everything g gathers in the Prometheus text exposition
// format, as node_exporter's textfile collector reads it.
func WriteText(w io.Writer, g prometheus.Gatherer) error {
	mfs, err := g.Gather()
	if err != nil {
		return err
	}
	for _, mf := range mfs {
		if _, err := expfmt.MetricFamilyToText(w, mf); err != nil {
			return err
		}
	}
	return nil
}

// lazyDesc is prometheus.NewDesc on first use. A Desc validates its name
// and labels and hashes them when built; perflab links this package into
// every command, and only the exporter and `audit --format prom` describe
// a metric, so the package's initialiser builds none (docs/performance.md,
// "Snapshot + audit": start-up).
func lazyDesc(name, help string, labels []string, constLabels prometheus.Labels) func() *prometheus.Desc {
	return sync.OnceValue(func() *prometheus.Desc { return prometheus.NewDesc(name, help, labels, constLabels) })
}

// constGauge is prometheus.MustNewConstMetric for a gauge whose label values
// come from the host or the run store. Label values must be UTF-8, and a
// corrupt sysfs file or a binary run label is not: such a value is repaired
// (invalid bytes become U+FFFD) so one bad fact cannot take down the whole
// exposition.
func constGauge(d *prometheus.Desc, v float64, labels ...string) prometheus.Metric {
	for i, l := range labels {
		if !utf8.ValidString(l) {
			labels[i] = strings.ToValidUTF8(l, "\uFFFD")
		}
	}
	return prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
}
