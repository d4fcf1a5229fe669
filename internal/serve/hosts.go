package serve

import (
	"context"
	"math"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/perflab/perflab/internal/audit"
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

// drift is a probe's newest run against the median of the host's runs of
// it in the 30 days before.
type drift struct {
	Probe    string     `json:"probe"`
	Metric   string     `json:"metric"`
	Unit     string     `json:"unit"`
	Better   run.Better `json:"better"`
	Latest   float64    `json:"latest"`
	Median   float64    `json:"median_30d"`
	Runs     int        `json:"baseline_runs"`
	DeltaPct float64    `json:"delta_pct"`
	Worse    bool       `json:"worse"`
	RunID    string     `json:"run_id"`
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
// median of the per-run medians of its earlier runs within 30 days, on
// the probe's first metric. Nil without at least two earlier runs.
func (s *Server) driftOf(ctx context.Context, ph store.ProbeHost) (*drift, error) {
	latest, err := s.st.Run(ctx, ph.Newest)
	if err != nil || len(latest.Metrics) == 0 {
		return nil, err
	}
	m := latest.Metrics[0]
	runs, err := s.st.MetricRuns(ctx, store.Page{Filter: store.Filter{Probe: ph.Probe, Host: ph.Host, Limit: driftRuns + 1},
		From: latest.Started.Add(-driftWindow)}, m.Name)
	if err != nil {
		return nil, err
	}
	want := paramKey(latest.Params, latest.CPUs)
	var meds []float64
	for _, r := range runs {
		if r.ID == latest.ID || !r.Complete || paramKey(r.Params, r.CPUs) != want || len(r.Values) == 0 {
			continue
		}
		meds = append(meds, stats.Median(r.Values))
	}
	if len(meds) < 2 {
		return nil, nil
	}
	d := &drift{Probe: ph.Probe, Metric: m.Name, Unit: m.Unit, Better: m.Better, RunID: latest.ID,
		Latest: stats.Median(latest.Values(m.Name)), Median: stats.Median(meds), Runs: len(meds)}
	if d.Median != 0 {
		d.DeltaPct = (d.Latest/d.Median - 1) * 100
	}
	d.Worse = (m.Better == run.Higher && d.DeltaPct < 0) || (m.Better == run.Lower && d.DeltaPct > 0)
	return d, nil
}

// paramKey is a run's parameters and placement, which separate different
// measurements of one probe (as compare and history keep them apart).
func paramKey(params map[string]string, cpus string) string {
	kv := make([]string, 0, len(params))
	for k, v := range params {
		kv = append(kv, k+"="+v)
	}
	sort.Strings(kv)
	return cpus + "|" + strings.Join(kv, " ")
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
