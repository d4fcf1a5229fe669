package serve

import (
	"context"
	"math"
	"net/url"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/perflab/perflab/internal/audit"
	"github.com/perflab/perflab/internal/compare"
	"github.com/perflab/perflab/internal/run"
	"github.com/perflab/perflab/internal/snapshot"
	"github.com/perflab/perflab/internal/stats"
	"github.com/perflab/perflab/internal/store"
)

// driftWindow is how far back a host's drift baseline reaches, and
// driftRuns how many runs of it are read at most.
const (
	driftWindow = 30 * 24 * time.Hour
	driftRuns   = 30
)

// hostRow is one host in the hosts view.
type hostRow struct {
	store.HostSummary
	Summary  *snapSummary   `json:"snapshot,omitempty"`
	Findings map[string]int `json:"failing_by_severity,omitempty"`
	Worst    string         `json:"worst,omitempty"`
	Drift    []drift        `json:"drift"`
}

// snapSummary is the identity of a host from its newest snapshot.
type snapSummary struct {
	Kernel  string `json:"kernel"`
	CPU     string `json:"cpu"`
	Threads int    `json:"threads"`
	MemGiB  int64  `json:"memory_gib"`
	Virt    string `json:"virtualization,omitempty"`
}

// drift is a probe's newest run against the host's earlier runs of the
// same measurement, decided as 'perflab compare EARLIER NEWEST' does: run
// level (the earlier runs' spread is the drift), one verdict rule
// (package effect). Inconclusive wherever compare would say so.
type drift struct {
	Probe      string          `json:"probe"`
	Metric     string          `json:"metric"`
	Unit       string          `json:"unit"`
	Better     run.Better      `json:"better"`
	Latest     float64         `json:"latest"`
	Previous   float64         `json:"previous"`
	Median     float64         `json:"median_30d"` // of the earlier runs' medians
	Runs       int             `json:"baseline_runs"`
	DeltaPct   *float64        `json:"delta_pct"`
	DeltaLoPct *float64        `json:"delta_lo_pct"`
	DeltaHiPct *float64        `json:"delta_hi_pct"`
	Verdict    compare.Verdict `json:"verdict"`
	Reason     string          `json:"reason,omitempty"`
	// HostDrift: compare's host-drift reference explains the change (the
	// host ran faster or slower, not the system): not counted as one.
	HostDrift bool `json:"host_drift,omitempty"`
	// Calibration is how many earlier runs measured the drift.
	Calibration int    `json:"calibration_runs"`
	RunID       string `json:"run_id"`
	PreviousID  string `json:"previous_run_id"`
	// BaselineIDs are the earlier runs compared with the newest, oldest
	// first ('perflab compare' takes them joined by commas as one side).
	BaselineIDs []string `json:"baseline_run_ids"`
}

func (s *Server) hosts(ctx context.Context, q url.Values) (*result, error) {
	p := newParams(q, "workload")
	wl := p.str("workload")
	if p.err != nil {
		return nil, p.err
	}
	w, err := workload(wl)
	if err != nil {
		return nil, err
	}
	hs, err := s.st.Hosts(ctx)
	if err != nil {
		return nil, err
	}
	phs, err := s.st.ProbeHosts(ctx)
	if err != nil {
		return nil, err
	}
	rows := make([]hostRow, 0, len(hs))
	for _, h := range hs {
		row := hostRow{HostSummary: h, Drift: []drift{}}
		if h.Snapshot != "" {
			if a, ok := s.snapAudit(ctx, h.Snapshot, w); ok {
				row.Summary, row.Findings, row.Worst = a.summary, a.sum.FailBySeverity, a.sum.Worst
			}
		}
		for _, ph := range phs {
			if ph.Host != h.Host {
				continue
			}
			d, err := s.driftOf(ctx, ph)
			if err != nil {
				return nil, err
			}
			if d != nil {
				row.Drift = append(row.Drift, *d)
			}
		}
		rows = append(rows, row)
	}
	return &result{View: "hosts", Title: "perflab: hosts", Data: map[string]any{"workload": w.Name, "hosts": rows}}, nil
}

func workload(name string) (*audit.Workload, error) {
	if name == "" {
		name = "general"
	}
	w, err := audit.LookupWorkload(name)
	if err != nil {
		return nil, badf("%v", err)
	}
	return w, nil
}

func summarize(s *snapshot.Snapshot) *snapSummary {
	return &snapSummary{Kernel: s.Kernel.Release, CPU: s.CPU.Model, Threads: s.CPU.Threads,
		MemGiB: int64(math.Round(float64(s.Memory.TotalKiB) / (1 << 20))), Virt: s.Host.Virtualization}
}

// driftOf compares the newest complete run of a probe on a host with the
// host's earlier runs of the same measurement within 30 days (at most
// driftRuns), on the probe's first metric, through compare: the verdict
// 'perflab compare ID,ID,… NEWEST' gives on the same runs and store. The
// earlier runs are one side, so their run-to-run spread is the drift the
// newest run must clear. Nil without an earlier run.
func (s *Server) driftOf(ctx context.Context, ph store.ProbeHost) (*drift, error) {
	latest, err := s.st.Run(ctx, ph.Newest)
	if err != nil || len(latest.Metrics) == 0 {
		return nil, err
	}
	m := latest.Metrics[0]
	runs, err := s.st.Runs(ctx, store.Filter{Probe: ph.Probe, Host: ph.Host, Limit: driftRuns + 1})
	if err != nil {
		return nil, err
	}
	from := latest.Started.Add(-driftWindow)
	var earlier []*run.Run
	var meds []float64
	for _, r := range runs {
		if r.ID == latest.ID || !r.Complete || !r.SameMeasurement(latest) || r.Started.After(latest.Started) || r.Started.Before(from) {
			continue
		}
		v := r.Values(m.Name)
		if len(v) == 0 {
			continue
		}
		earlier = append(earlier, r)
		meds = append(meds, stats.Median(v))
	}
	if len(earlier) == 0 {
		return nil, nil
	}
	sort.Slice(earlier, func(i, j int) bool { return earlier[i].Started.Before(earlier[j].Started) })
	prev := earlier[len(earlier)-1]
	d := &drift{Probe: ph.Probe, Metric: m.Name, Unit: m.Unit, Better: m.Better, RunID: latest.ID, PreviousID: prev.ID,
		Latest: stats.Median(latest.Values(m.Name)), Previous: stats.Median(prev.Values(m.Name)), Median: stats.Median(meds), Runs: len(meds),
		Verdict: compare.Inconclusive}
	ids := make([]string, len(earlier))
	for i, r := range earlier {
		ids[i] = r.ID
	}
	d.BaselineIDs = ids
	sides := []compare.Side{{Name: strings.Join(ids, ","), Runs: earlier}, {Name: latest.ID, Runs: []*run.Run{latest}}}
	c, err := compare.Compare(sides, compare.Options{History: s.st.History(ctx, append(slices.Clone(earlier), latest))})
	if err != nil {
		d.Reason = err.Error()
		return d, nil
	}
	if del, ok := probeDelta(c, ph.Probe, m.Name); ok {
		row := c.Metrics[del.Row]
		d.Metric, d.Unit, d.Better = row.Metric, row.Unit, row.Better
		d.Latest, d.Previous = stats.Median(latest.Values(row.Metric)), stats.Median(prev.Values(row.Metric))
		if meds := runMedians(earlier, row.Metric); len(meds) > 0 {
			d.Median = stats.Median(meds)
		}
		d.Verdict, d.Reason, d.Calibration, d.HostDrift = del.Verdict, del.Reason, del.Drift.CalibrationRuns, del.HostDrift
		d.DeltaPct, d.DeltaLoPct, d.DeltaHiPct = finite(del.DeltaPct), finite(del.DeltaLoPct), finite(del.DeltaHiPct)
	}
	return d, nil
}

// probeDelta is the delta that stands for a probe: a metric compare calls
// worse (beyond host drift), else one it calls better, else the probe's
// first metric. compare's p-values are Holm-adjusted over the probe's
// metrics, so picking the changed one adds no false alarms.
func probeDelta(c *compare.Comparison, probe, first string) (compare.Delta, bool) {
	var pick compare.Delta
	rank := -1
	for _, del := range c.Pairs[0].Deltas {
		row := c.Metrics[del.Row]
		if row.Probe != probe {
			continue
		}
		r := 0
		switch {
		case del.Verdict == compare.Worse && !del.HostDrift:
			r = 3
		case del.Verdict == compare.Better && !del.HostDrift:
			r = 2
		case row.Metric == first:
			r = 1
		}
		if r > rank {
			pick, rank = del, r
		}
	}
	return pick, rank >= 0
}

func runMedians(runs []*run.Run, metric string) []float64 {
	var out []float64
	for _, r := range runs {
		if v := r.Values(metric); len(v) > 0 {
			out = append(out, stats.Median(v))
		}
	}
	return out
}

func finite(x float64) *float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	return &x
}

// audited is a snapshot's summary and audit for one workload.
type audited struct {
	summary *snapSummary
	sum     audit.Summary
}

// maxAuditCache bounds the cache of audited snapshots.
const maxAuditCache = 1024

// snapAudit audits a stored snapshot, once per snapshot and workload: a
// stored snapshot never changes (its id is written once), so the result
// stays true for as long as the server runs.
func (s *Server) snapAudit(ctx context.Context, id string, w *audit.Workload) (audited, bool) {
	key := id + "\x00" + w.Name
	s.mu.Lock()
	a, ok := s.audits[key]
	s.mu.Unlock()
	if ok {
		return a, true
	}
	snap, err := s.st.Snapshot(ctx, id)
	if err != nil {
		return a, false
	}
	a = audited{summary: summarize(snap), sum: audit.Summarize(audit.Run(snap, w))}
	s.mu.Lock()
	if len(s.audits) >= maxAuditCache {
		clear(s.audits)
	}
	s.audits[key] = a
	s.mu.Unlock()
	return a, true
}
