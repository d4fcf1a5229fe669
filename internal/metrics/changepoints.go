package metrics

import (
	"math"
	"sort"
	"strings"
	"sync"

	"github.com/perflab/perflab/internal/changepoint"
	"github.com/perflab/perflab/internal/history"
	"github.com/perflab/perflab/internal/run"
	"github.com/prometheus/client_golang/prometheus"
)

var (
	cpLabels   = []string{"host", "probe", "metric", "params", "unit", "better"}
	cpTimeDesc = lazyDesc(Namespace+"_change_point_timestamp_seconds",
		"Start time (Unix) of the first run after the latest change point of each host, probe and metric in the stored history (E-divisive means, docs/statistics.md).",
		cpLabels, nil)
	cpShiftDesc = lazyDesc(Namespace+"_change_point_shift_ratio",
		"Relative shift of the median run value at that change point: (after − before) / |before| (−0.19 = 19% lower; see better for the direction).",
		cpLabels, nil)
	cpPValueDesc = lazyDesc(Namespace+"_change_point_pvalue",
		"Permutation p-value of that change point.",
		cpLabels, nil)
)

// ChangePoints is a collector for the latest change point of each host,
// probe, metric and parameter set (internal/history over the stored
// runs). A series without a change point exports nothing.
type ChangePoints struct {
	opts changepoint.Options

	mu     sync.RWMutex
	latest []cpSeries
	// cache holds each probe and metric's result by the ids of the runs
	// it was computed from: the permutation test costs up to seconds, and
	// most refreshes find no new run.
	cache map[string]cpCache
}

type cpSeries struct {
	labels []string
	at     float64
	shift  float64
	pvalue float64
}

type cpCache struct {
	fingerprint string
	series      []cpSeries
}

// NewChangePoints returns an empty collector searching with o.
func NewChangePoints(o changepoint.Options) *ChangePoints {
	return &ChangePoints{opts: o, cache: map[string]cpCache{}}
}

// Update recomputes the change points of every probe and metric in runs.
func (c *ChangePoints) Update(runs []*run.Run) {
	type pm struct{ probe, metric string }
	ids := map[pm][]string{}
	for _, r := range runs {
		for _, m := range r.Metrics {
			k := pm{r.Probe, m.Name}
			ids[k] = append(ids[k], r.ID)
		}
	}
	keys := make([]pm, 0, len(ids))
	for k := range ids {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].probe != keys[j].probe {
			return keys[i].probe < keys[j].probe
		}
		return keys[i].metric < keys[j].metric
	})
	c.mu.RLock()
	old := c.cache
	c.mu.RUnlock()
	cache := map[string]cpCache{}
	var all []cpSeries
	for _, k := range keys {
		sort.Strings(ids[k])
		fp := strings.Join(ids[k], ",")
		ck := k.probe + "\x00" + k.metric
		got, ok := old[ck]
		if !ok || got.fingerprint != fp {
			got = cpCache{fingerprint: fp, series: latestChanges(runs, k.probe, k.metric, c.opts)}
		}
		cache[ck] = got
		all = append(all, got.series...)
	}
	c.mu.Lock()
	c.cache, c.latest = cache, all
	c.mu.Unlock()
}

func latestChanges(runs []*run.Run, probe, metric string, o changepoint.Options) []cpSeries {
	var out []cpSeries
	for _, s := range history.Build(runs, probe, metric, o) {
		if len(s.Changes) == 0 {
			continue
		}
		ch := s.Changes[len(s.Changes)-1]
		p := s.Points[ch.At.Index]
		out = append(out, cpSeries{
			labels: []string{s.Host, s.Probe, s.Metric, s.Params, s.Unit, string(s.Better)},
			at:     float64(p.Started.UnixNano()) / 1e9,
			shift:  ch.At.Change,
			pvalue: ch.At.PValue,
		})
	}
	return out
}

// Describe implements prometheus.Collector.
func (c *ChangePoints) Describe(ch chan<- *prometheus.Desc) {
	ch <- cpTimeDesc()
	ch <- cpShiftDesc()
	ch <- cpPValueDesc()
}

// Collect implements prometheus.Collector.
func (c *ChangePoints) Collect(ch chan<- prometheus.Metric) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	for _, s := range c.latest {
		ch <- constGauge(cpTimeDesc(), s.at, s.labels...)
		if !math.IsNaN(s.shift) && !math.IsInf(s.shift, 0) {
			ch <- constGauge(cpShiftDesc(), s.shift, s.labels...)
		}
		ch <- constGauge(cpPValueDesc(), s.pvalue, s.labels...)
	}
}
