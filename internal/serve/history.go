package serve

import (
	"context"
	"errors"
	"math"
	"net/url"
	"sort"

	"github.com/perflab/perflab/internal/changepoint"
	"github.com/perflab/perflab/internal/history"
	"github.com/perflab/perflab/internal/run"
	"github.com/perflab/perflab/internal/stats"
	"github.com/perflab/perflab/internal/store"
)

// maxOverlay is how many hosts one history chart overlays.
const maxOverlay = 8

// seriesView is a history series with each run's interval.
type seriesView struct {
	*history.Series
	// CI holds each point's 95% interval of its median, [lo, hi], null
	// where the run has too few samples for one. It is the interval of
	// one run, not of the run-to-run spread.
	CI [][2]*float64 `json:"ci"`
}

type historyDoc struct {
	Probe   string            `json:"probe"`
	Metric  string            `json:"metric"`
	Hosts   []string          `json:"hosts"`
	From    string            `json:"from,omitempty"`
	To      string            `json:"to,omitempty"`
	Limit   int               `json:"n"`
	Choices []store.ProbeHost `json:"choices"` // every probe, and the hosts of the chosen one (at most maxListedHosts), for the selection
	Metrics []string          `json:"metrics"` // the probe's metrics
	Method  history.Method    `json:"method"`
	Series  []seriesView      `json:"series"`
}

func (s *Server) history(ctx context.Context, q url.Values) (*result, error) {
	p := newParams(q, "probe", "metric", "host*", "from", "to", "n")
	d := historyDoc{Probe: p.probe("probe"), Metric: p.str("metric"), Hosts: p.strs("host", maxOverlay),
		Limit: p.int("n", 100, maxSeriesRuns), Series: []seriesView{}, Metrics: []string{}}
	if d.Hosts == nil {
		d.Hosts = []string{} // the page reads a list, also without host=
	}
	from, to := p.time("from"), p.time("to")
	if p.err != nil {
		return nil, p.err
	}
	if !from.IsZero() && !to.IsZero() && !from.Before(to) {
		return nil, badf("from must be before to")
	}
	d.From, d.To = q.Get("from"), q.Get("to")
	o := changepoint.Options{MinSegment: changepoint.DefaultMinSegment, Alpha: changepoint.DefaultAlpha}
	d.Method = history.MethodOf(o)
	var err error
	if d.Choices, err = s.probeHosts(ctx, d.Probe, maxListedHosts); err != nil {
		return nil, err
	}
	res := &result{View: "history", Title: "perflab: history", Data: &d}
	if d.Probe == "" {
		return res, nil
	}
	hosts := d.Hosts
	for _, c := range d.Choices {
		if c.Probe == d.Probe {
			if len(d.Hosts) == 0 && len(hosts) < maxOverlay {
				hosts = append(hosts, c.Host)
			}
			if len(d.Metrics) == 0 {
				if r, err := s.st.Run(ctx, c.Newest); err == nil {
					for _, m := range r.Metrics {
						d.Metrics = append(d.Metrics, m.Name)
					}
				}
			}
		}
	}
	if len(d.Metrics) == 0 {
		return nil, &notFound{"no runs of probe " + d.Probe}
	}
	if d.Metric == "" {
		d.Metric = d.Metrics[0]
	}
	res.Title = "perflab: " + d.Probe + " " + d.Metric
	for _, h := range hosts {
		runs, err := s.st.RunsPage(ctx, store.Page{Filter: store.Filter{Probe: d.Probe, Host: h, Limit: d.Limit}, From: from, To: to})
		if err != nil {
			return nil, err
		}
		for _, sr := range history.Build(runs, d.Probe, d.Metric, o) {
			missing := func(err error) bool { return errors.Is(err, store.ErrNotFound) }
			if err := sr.Annotate(ctx, s.st.Snapshot, missing); err != nil {
				return nil, err
			}
			d.Series = append(d.Series, withCI(sr, runs))
		}
	}
	sort.SliceStable(d.Series, func(i, j int) bool { return d.Series[i].Host < d.Series[j].Host })
	return res, nil
}

// withCI adds each point's median interval, from the samples of its run.
func withCI(sr *history.Series, runs []*run.Run) seriesView {
	byID := make(map[string]int, len(runs))
	for i, r := range runs {
		byID[r.ID] = i
	}
	v := seriesView{Series: sr, CI: make([][2]*float64, len(sr.Points))}
	for i, pt := range sr.Points {
		j, ok := byID[pt.RunID]
		if !ok {
			continue
		}
		sum := stats.Summarize(runs[j].Values(sr.Metric))
		if sum.HasCI && !math.IsInf(sum.Lo, 0) && !math.IsInf(sum.Hi, 0) {
			lo, hi := sum.Lo, sum.Hi
			v.CI[i] = [2]*float64{&lo, &hi}
		}
	}
	return v
}
