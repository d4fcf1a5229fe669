package metrics

import (
	"sync"

	"github.com/perflab/perflab/internal/run"
	"github.com/perflab/perflab/internal/stats"
	"github.com/prometheus/client_golang/prometheus"
)

var (
	benchMedianDesc = lazyDesc(Namespace+"_bench_median",
		"Median of the latest stored run of each probe and metric (unit in the unit label; see better for the direction).",
		[]string{"probe", "metric", "unit", "better", "label"}, nil)
	benchCIDesc = lazyDesc(Namespace+"_bench_ci_relative_halfwidth",
		"Half-width of the 95% confidence interval of that median, relative to the median (0.01 = ±1%).",
		[]string{"probe", "metric", "unit", "better", "label"}, nil)
	benchTimeDesc = lazyDesc(Namespace+"_bench_run_timestamp_seconds",
		"Unix time at which the latest stored run of each probe ended.",
		[]string{"probe", "label"}, nil)
)

// Bench is a collector for the latest bench result per probe and metric.
type Bench struct {
	mu   sync.RWMutex
	runs []*run.Run
}

// NewBench returns an empty bench collector.
func NewBench() *Bench { return &Bench{} }

// Update sets the runs to report; only the newest run of each probe counts.
func (b *Bench) Update(runs []*run.Run) {
	latest := map[string]*run.Run{}
	var order []string
	for _, r := range runs {
		if !r.Complete && r.Stop != run.StopPrecision && r.Stop != run.StopMaxRuns && r.Stop != run.StopTimeBudget && r.Stop != run.StopFixed {
			continue // interrupted or failed runs are not results
		}
		if cur, ok := latest[r.Probe]; !ok || r.Ended.After(cur.Ended) {
			if !ok {
				order = append(order, r.Probe)
			}
			latest[r.Probe] = r
		}
	}
	out := make([]*run.Run, 0, len(order))
	for _, p := range order {
		out = append(out, latest[p])
	}
	b.mu.Lock()
	b.runs = out
	b.mu.Unlock()
}

// Describe implements prometheus.Collector.
func (b *Bench) Describe(ch chan<- *prometheus.Desc) {
	ch <- benchMedianDesc()
	ch <- benchCIDesc()
	ch <- benchTimeDesc()
}

// Collect implements prometheus.Collector.
func (b *Bench) Collect(ch chan<- prometheus.Metric) {
	b.mu.RLock()
	defer b.mu.RUnlock()
	for _, r := range b.runs {
		for _, m := range r.Metrics {
			xs := r.Values(m.Name)
			if len(xs) == 0 {
				continue
			}
			sum := stats.Summarize(xs)
			labels := []string{r.Probe, m.Name, m.Unit, string(m.Better), r.Label}
			ch <- constGauge(benchMedianDesc(), sum.Median, labels...)
			if sum.HasCI && sum.Median != 0 {
				ch <- constGauge(benchCIDesc(), (sum.Hi-sum.Lo)/2/abs(sum.Median), labels...)
			}
		}
		ch <- constGauge(benchTimeDesc(), float64(r.Ended.UnixNano())/1e9, r.Probe, r.Label)
	}
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}
