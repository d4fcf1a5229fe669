package metrics

import (
	"runtime"
	"runtime/debug"

	"github.com/prometheus/client_golang/prometheus"
)

// NewBuildInfo returns the constant perflab_build_info gauge (value 1) with
// version, Go version and VCS revision labels, so dashboards can tell which
// perflab produced a series.
func NewBuildInfo(version string) prometheus.Collector {
	revision := "unknown"
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && s.Value != "" {
				revision = s.Value
			}
		}
	}
	return prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Namespace:   Namespace,
		Name:        "build_info",
		Help:        "A metric with a constant '1' value labeled by the perflab version, Go version and VCS revision.",
		ConstLabels: prometheus.Labels{"version": version, "goversion": runtime.Version(), "revision": revision},
	}, func() float64 { return 1 })
}
