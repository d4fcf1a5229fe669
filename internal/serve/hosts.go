package serve

import (
	"context"
	"math"
	"net/url"
	"runtime"
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
	// Pending: the probes whose verdict is still being computed (a first
	// start on a large store; the next request shows them), and whether
	// the snapshot's audit is.
	Pending      []string `json:"pending_probes,omitempty"`
	AuditPending bool     `json:"audit_pending,omitempty"`
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

// hostsPerPage is the hosts page's default page size; maxHostsPerPage
// its largest.
const (
	hostsPerPage    = 50
	maxHostsPerPage = 500
)

// verdictFilters are the values of the hosts page's verdict= filter: a
// verdict of compare, "pending" (not computed yet) or "none" (no earlier
// run to compare with).
var verdictFilters = []string{"worse", "better", "same", "equivalent", "inconclusive", "pending", "none"}

// hostsDoc is the hosts page: one page of the matching hosts, worst first.
type hostsDoc struct {
	Workload string     `json:"workload"`
	Probe    string     `json:"probe,omitempty"`
	Verdict  string     `json:"verdict,omitempty"`
	Host     string     `json:"host,omitempty"` // substring of the name
	Label    string     `json:"label,omitempty"`
	Sort     string     `json:"sort"` // worst or name
	Page     int        `json:"page"`
	Per      int        `json:"per_page"`
	Total    int        `json:"total"` // hosts matching the filters
	Probes   []string   `json:"probes"`
	Index    indexState `json:"index"`
	Hosts    []hostRow  `json:"hosts"`
}

func (s *Server) hosts(ctx context.Context, q url.Values) (*result, error) {
	p := newParams(q, "workload", "probe", "verdict", "host", "label", "page", "per", "sort")
	d := hostsDoc{Probe: p.probe("probe"), Verdict: p.str("verdict"), Host: p.str("host"), Label: p.str("label"), Sort: p.str("sort"),
		Page: p.int("page", 0, 1<<20), Per: p.int("per", hostsPerPage, maxHostsPerPage), Hosts: []hostRow{}}
	wl := p.str("workload")
	if d.Per == 0 {
		p.fail(badf("per=0: want a page size from 1 to %d", maxHostsPerPage))
	}
	if d.Verdict != "" && !slices.Contains(verdictFilters, d.Verdict) {
		p.fail(badf("verdict=%q: want one of %s", d.Verdict, strings.Join(verdictFilters, ", ")))
	}
	if d.Sort == "" {
		d.Sort = "worst"
	} else if d.Sort != "worst" && d.Sort != "name" {
		p.fail(badf("sort=%q: want worst or name", d.Sort))
	}
	if p.err != nil {
		return nil, p.err
	}
	w, err := workload(wl)
	if err != nil {
		return nil, err
	}
	d.Workload = w.Name
	deadline := time.Now().Add(pageWait)
	if loaded, err := s.loadedBy(ctx, deadline); err != nil {
		return nil, err
	} else if !loaded {
		d.Probes, d.Index = []string{}, s.indexState()
		return &result{View: "hosts", Title: "perflab: hosts", Data: &d}, nil
	}
	var lab *labelSet
	if d.Label != "" {
		if lab, err = s.labelHosts(ctx, d.Label); err != nil {
			return nil, err
		}
	}
	page, err := s.pageOf(ctx, &d, lab, deadline)
	if err != nil {
		return nil, err
	}
	for _, h := range page {
		d.Hosts = append(d.Hosts, s.hostRowOf(ctx, h, w))
	}
	d.Index = s.indexState()
	return &result{View: "hosts", Title: "perflab: hosts", Data: &d}, nil
}

// syncFill is how many pending pairs of the matching hosts a request
// computes itself before it orders them; beyond it, only its own rows'.
const syncFill = 64

// pageWait is how long a hosts page waits for the store's hosts and its
// own rows' pending verdicts and audits (the first start of a console on
// a large store) before it answers with those read and computed by then;
// the rest are read and computed on and shown by the next request. 50
// rows of 2 probes are 100 comparisons of 31 runs, about 0.3 s of two
// CPUs (10 probes: 1.5 s): a page cannot wait for them within its 100 ms.
const pageWait = 50 * time.Millisecond

// maxPageFills bounds the pages' fills running at once (each on every
// CPU): a request finding them all busy answers with what is computed.
const maxPageFills = 2

// pageOf is d's page of hosts with every verdict on it computed, or
// pending when pageWait did not suffice: when few of the matching hosts'
// verdicts are pending (a small store, or a store the background index
// has nearly finished), all are computed first, so the order is exact;
// otherwise the page's own rows are (twice: a row whose verdict was
// pending may move off the page) within pageWait, and the page says how
// many verdicts the order still lacks and which of its rows' are pending.
func (s *Server) pageOf(ctx context.Context, d *hostsDoc, lab *labelSet, deadline time.Time) ([]*hostEntry, error) {
	workers := max(1, runtime.NumCPU())
	sel := s.selectHosts(d, lab)
	if sel.match != nil {
		if err := s.fillHosts(ctx, sel.match, workers); err != nil {
			return nil, err
		}
		sel = s.selectHosts(d, lab)
	}
	page := sel.page
	for i := range 2 {
		lacked, done, err := s.fillPage(ctx, page, workers, deadline)
		if err != nil {
			return nil, err
		}
		if !lacked || !done || i == 1 {
			break
		}
		page = s.selectHosts(d, lab).page
	}
	return page, nil
}

// fillPage computes what page's hosts lack and waits for it until
// deadline; it reports whether they lacked anything and whether
// everything was computed by then. The computation runs on after a
// deadline (not under the request's context): the next request shows its
// results.
func (s *Server) fillPage(ctx context.Context, page []*hostEntry, workers int, deadline time.Time) (lacked bool, done bool, err error) {
	s.ix.mu.Lock()
	lack := false
	for _, h := range page {
		lack = lack || !h.Audited && h.Snap.ID != ""
		for _, p := range h.Pairs {
			lack = lack || !p.Done
		}
	}
	busy := s.ix.pageFills >= maxPageFills
	if lack && !busy {
		s.ix.pageFills++
	}
	s.ix.mu.Unlock()
	if !lack || busy {
		return lack, !lack, nil
	}
	filled := make(chan error, 1)
	go func() {
		err := s.fillHosts(context.WithoutCancel(ctx), page, workers)
		s.ix.mu.Lock()
		s.ix.pageFills--
		s.ix.mu.Unlock()
		if err != nil {
			s.log.Printf("hosts page: computing its verdicts: %v", err)
		}
		filled <- err
	}()
	t := time.NewTimer(time.Until(deadline))
	defer t.Stop()
	select {
	case err := <-filled:
		return true, err == nil, err
	case <-t.C:
		return true, false, nil
	case <-ctx.Done():
		return true, false, ctx.Err()
	}
}

// hostSelection is what selectHosts found.
type hostSelection struct {
	page []*hostEntry
	// match is every matching host when some of their pairs are pending,
	// at most syncFill (pageOf computes them all first); else nil.
	match []*hostEntry
}

// maxRank bounds rank's values (the buckets of the worst-first order).
const maxRank = 63

// selectHosts filters the index by d, orders it (worst first or by name)
// and returns d's page of it; it sets d's count of matches and the probes
// seen. It reads each entry's summary (index.summarize), not its pairs,
// and orders by rank in one counting pass (stable: by name within a
// rank, as the index is), so a page of 10,000 hosts costs a pass over
// 10,000 words, not a sort of them through their 100,000 pairs.
func (s *Server) selectHosts(d *hostsDoc, lab *labelSet) hostSelection {
	ix := &s.ix
	ix.mu.Lock()
	defer ix.mu.Unlock()
	d.Probes = append([]string{}, ix.probes...)
	f := hostFilter{name: strings.ToLower(d.Host), in: lab.bitsFor(ix), probe: -1, verdict: -1}
	if d.Probe != "" {
		f.probe = len(ix.probes) // no pair's: no host matches
		if n, ok := ix.probeNum[d.Probe]; ok {
			f.probe = n
		}
	}
	if d.Verdict != "" {
		f.verdict = int(verdictCode(d.Verdict))
	}
	var match []int32
	var count [maxRank + 1]int
	pending := 0
	for i, h := range ix.hosts {
		if f.matches(h) {
			match = append(match, int32(i))
			count[h.rank]++
			pending += h.npend
		}
	}
	if d.Sort == "worst" {
		// Counting sort, worst rank first; within a rank in index order.
		var at [maxRank + 1]int
		for r, n := maxRank, 0; r >= 0; r-- {
			at[r], n = n, n+count[r]
		}
		sorted := make([]int32, len(match))
		for _, i := range match {
			r := ix.hosts[i].rank
			sorted[at[r]] = i
			at[r]++
		}
		match = sorted
	}
	d.Total = len(match)
	var sel hostSelection
	for i := d.Page * d.Per; i < len(match) && i < (d.Page+1)*d.Per; i++ {
		sel.page = append(sel.page, ix.hosts[match[i]])
	}
	if pending > 0 && pending <= syncFill {
		sel.match = make([]*hostEntry, len(match))
		for k, i := range match {
			sel.match[k] = ix.hosts[i]
		}
	}
	return sel
}

// hostFilter is a page's filters over the index's entries of one
// generation.
type hostFilter struct {
	name    string   // a substring of the lower-cased host name
	in      []uint64 // the label's hosts by position; nil: any host
	probe   int      // the probe's number; -1: any
	verdict int      // verdictCode of the verdict; -1: any
}

// matches: h passes the filters (host substring, label, probe, verdict
// of the probe or of any probe).
func (f *hostFilter) matches(h *hostEntry) bool {
	if f.name != "" && !strings.Contains(h.lower, f.name) || f.in != nil && f.in[h.pos/64]&(1<<(h.pos%64)) == 0 {
		return false
	}
	if f.probe < 0 && f.verdict < 0 {
		return true
	}
	hasProbe, hasVerdict := f.probe < 0, f.verdict < 0
	for _, x := range h.pv {
		if f.probe >= 0 && int(x>>4) != f.probe {
			continue
		}
		hasProbe = true
		hasVerdict = hasVerdict || int(x&15) == f.verdict
	}
	return hasProbe && hasVerdict
}

// labelSet is the hosts of a label, as positions in the index's hosts of
// generation gen (a bit each).
type labelSet struct {
	gen     int      // the index's generation when the store was read
	names   []string // as the store gave them: in byte order
	bits    []uint64 // for generation bitsGen
	bitsGen int
}

// maxLabelSets bounds the labels whose hosts the index keeps.
const maxLabelSets = 16

// labelHosts is the hosts of label: read from the store
// (Store.LabelHosts) once per generation of the index, i.e. again
// whenever the index reads the store again (at most every refreshEvery
// after a write), as the rest of the page is. A label's hosts change only
// with new or deleted runs, which the index shows from its next read too.
func (s *Server) labelHosts(ctx context.Context, label string) (*labelSet, error) {
	ix := &s.ix
	ix.mu.Lock()
	l, gen := ix.labels[label], ix.gen
	ix.mu.Unlock()
	if l != nil && l.gen == gen {
		return l, nil
	}
	names, err := s.st.LabelHosts(ctx, label)
	if err != nil {
		return nil, err
	}
	l = &labelSet{gen: gen, names: names}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.gen == gen {
		l.bitsFor(ix)
		if ix.labels == nil || len(ix.labels) >= maxLabelSets && ix.labels[label] == nil {
			ix.labels = map[string]*labelSet{}
		}
		ix.labels[label] = l
	}
	return l, nil
}

// bitsFor is l's hosts as positions in ix's hosts, nil for a nil l (no
// label filter); mu held.
func (l *labelSet) bitsFor(ix *index) []uint64 {
	if l == nil {
		return nil
	}
	if l.bits == nil || l.bitsGen != ix.gen {
		l.bitsGen, l.bits = ix.gen, make([]uint64, (len(ix.hosts)+63)/64)
		if !ix.sorted || !slices.IsSorted(l.names) {
			for _, name := range l.names {
				if h := ix.byName[name]; h != nil {
					l.bits[h.pos/64] |= 1 << (h.pos % 64)
				}
			}
			return l.bits
		}
		// Both in byte order: one merge, no hashing.
		j := 0
		for _, name := range l.names {
			for j < len(ix.hosts) && ix.hosts[j].Host < name {
				j++
			}
			if j < len(ix.hosts) && ix.hosts[j].Host == name {
				l.bits[j/64] |= 1 << (j % 64)
			}
		}
	}
	return l.bits
}

// hostRowOf is a host's row of the page: its entry, with the audit of
// another workload than the index's computed (and cached) here.
func (s *Server) hostRowOf(ctx context.Context, h *hostEntry, w *audit.Workload) hostRow {
	s.ix.mu.Lock()
	row := hostRow{HostSummary: store.HostSummary{Host: h.Host, Runs: h.Runs, LastRun: h.LastRun, Snapshot: h.Snap.ID, SnapAt: h.Snap.TakenAt},
		Summary: h.Summary, Findings: h.Findings, Worst: h.Worst, Drift: []drift{}}
	for _, p := range h.Pairs {
		switch {
		case !p.Done:
			row.Pending = append(row.Pending, p.Probe)
		case p.Drift != nil:
			row.Drift = append(row.Drift, *p.Drift)
		}
	}
	row.AuditPending = !h.Audited && h.Snap.ID != ""
	s.ix.mu.Unlock()
	if w.Name != "general" && row.Snapshot != "" {
		row.Summary, row.Findings, row.Worst, row.AuditPending = nil, nil, "", false
		if a, ok := s.snapAudit(ctx, row.Snapshot, w); ok {
			row.Summary, row.Findings, row.Worst = a.summary, a.sum.FailBySeverity, a.sum.Worst
		}
	}
	return row
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
	if err != nil {
		return nil, err
	}
	runs, err := s.st.RunsBatch(ctx, store.Filter{Probe: ph.Probe, Host: ph.Host, Limit: driftRuns + 1})
	if err != nil {
		return nil, err
	}
	return driftFrom(ph, latest, runs), nil
}

// driftsOf is driftOf for many pairs, with their runs read together
// (store.PairRuns: the runs RunsBatch reads for each, two queries per
// store.PairRunsMost pairs instead of five per pair). A pair's newest run
// is among its runs unless runs were added or deleted since the pair was
// read, and is then read alone, as driftOf does. out[i] is phs[i]'s, or
// errs[i] the pair's error (its newest run deleted meanwhile, say) when
// only that pair failed; err is the batch's.
func (s *Server) driftsOf(ctx context.Context, phs []store.ProbeHost) (out []*drift, errs []error, err error) {
	runs, err := s.st.PairRuns(ctx, phs, driftRuns+1)
	if err != nil {
		return nil, nil, err
	}
	out, errs = make([]*drift, len(phs)), make([]error, len(phs))
	for i, ph := range phs {
		var latest *run.Run
		for _, r := range runs[i] {
			if r.ID == ph.Newest {
				latest = r
				break
			}
		}
		if latest == nil {
			if latest, errs[i] = s.st.Run(ctx, ph.Newest); errs[i] != nil {
				continue
			}
		}
		out[i] = driftFrom(ph, latest, runs[i])
	}
	return out, errs, nil
}

// driftFrom is driftOf's verdict on the runs it read: latest, the pair's
// newest run, and runs, the pair's newest driftRuns+1 runs, newest first.
func driftFrom(ph store.ProbeHost, latest *run.Run, runs []*run.Run) *drift {
	if len(latest.Metrics) == 0 {
		return nil
	}
	m := latest.Metrics[0]
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
		return nil
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
	// compare's noise history is store.History of these runs: the
	// HistoryLimit newest runs of this probe on this host, which are the
	// first of runs (the same query, newest first, with a larger limit).
	c, err := compare.Compare(sides, compare.Options{History: runs[:min(len(runs), store.HistoryLimit)]})
	if err != nil {
		d.Reason = err.Error()
		return d
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
	return d
}

// probeDelta is the delta that stands for a probe: the probe's first
// metric, unless compare calls another metric worse (or better) beyond
// host drift by a factor of stats.GrossFactor or more (THP always → never
// moves only the huge-page metric of memory.pagefault, ×8). Picking any
// changed metric would add alarms: on the real A/A runs (testdata/aa),
// whose runs swing by more than the model assumes, it called 6 of 60
// probes changed against 1 for the first metric alone.
func probeDelta(c *compare.Comparison, probe, first string) (compare.Delta, bool) {
	var pick compare.Delta
	rank := -1
	for _, del := range c.Pairs[0].Deltas {
		row := c.Metrics[del.Row]
		if row.Probe != probe {
			continue
		}
		r := 0
		beyond := del.Verdict.Changed() && !del.HostDrift && gross(del.Ratio)
		switch {
		case beyond && del.Verdict == compare.Worse:
			r = 3
		case beyond:
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

// gross: a ratio at least stats.GrossFactor either way.
func gross(ratio float64) bool {
	return ratio >= stats.GrossFactor || ratio <= 1/stats.GrossFactor
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
	putBounded(&s.mu, s.audits, key, a, maxAuditCache)
	return a, true
}
