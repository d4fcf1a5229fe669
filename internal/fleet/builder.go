package fleet

import (
	"math"
	"runtime"
	"slices"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/perflab/perflab/internal/audit"
	"github.com/perflab/perflab/internal/compare"
	"github.com/perflab/perflab/internal/run"
	"github.com/perflab/perflab/internal/snapshot"
	"github.com/perflab/perflab/internal/snapshot/factpath"
	"github.com/perflab/perflab/internal/stats"
)

// Builder makes a Report piecewise, so that a store of a million runs and
// ten thousand snapshots is read without holding it: hosts are added in
// name order with the facts of their latest snapshot (Facts, which may run
// concurrently once the Reference is set), and each run's median per
// metric as it is read. Build and FromStore both use it, so the report is
// the same whichever way its input arrives.
type Builder struct {
	w       *audit.Workload
	wkey    string         // workloadKey(w)
	ref     []compare.Leaf // the reference snapshot's kept facts
	hasRef  bool
	hosts   []Host
	names   []string                     // hosts with a snapshot, in order
	refVal  map[string]string            // path → the reference host's value
	hostVal map[string]map[string]string // path → host → its value
	audit   *Audit
	auditBy map[string]*auditCount
	metrics map[key]*metricAcc
}

type auditCount struct {
	c    AuditCount
	fail []string
}

type metricAcc struct {
	m       Metric
	medians map[string][]float64
}

// HostFacts is what a report keeps of one host's snapshot: its grouping
// identity, the setting and identity facts that differ from the
// reference snapshot's, and its audit outcomes.
type HostFacts struct {
	ok                                bool
	cpuModel, microcode, kernel, virt string
	diffs                             []compare.Diff
	findings                          []audit.Finding
}

// NewBuilder starts a report; w is the audit side's workload (nil: none).
func NewBuilder(w *audit.Workload) *Builder {
	b := &Builder{w: w, refVal: map[string]string{}, hostVal: map[string]map[string]string{}, metrics: map[key]*metricAcc{}}
	if w != nil {
		b.audit = &Audit{Workload: w.Label(), Findings: []AuditCount{}}
		b.auditBy = map[string]*auditCount{}
		b.wkey = workloadKey(w)
	}
	return b
}

// Reference sets the snapshot every other host's is diffed against: that
// of the first host (in name order) with one. Call it before Facts.
func (b *Builder) Reference(s *snapshot.Snapshot) { b.ReferenceSet(b.factSet(s)) }

// ReferenceSet is Reference from the reference snapshot's FactSet.
func (b *Builder) ReferenceSet(f *FactSet) { b.ref, b.hasRef = f.Facts, true }

// Facts reduces a host's latest snapshot (nil: none) to what the report
// needs. It is safe for concurrent use after Reference.
func (b *Builder) Facts(s *snapshot.Snapshot) HostFacts {
	if s == nil {
		return HostFacts{}
	}
	hf, _ := b.FactsOf(b.factSet(s))
	return hf
}

// factSet is s's FactSet with the audit of the report's workload only.
func (b *Builder) factSet(s *snapshot.Snapshot) *FactSet {
	var ws []*audit.Workload
	if b.w != nil {
		ws = []*audit.Workload{b.w}
	}
	return factSetOf(s, ws)
}

// FactsOf is Facts from a snapshot's FactSet (as stored): the setting and
// identity facts that differ from the reference's, and the audit outcomes
// under the report's workload. ok is false when the set has no outcomes
// for that workload (a user profile): the caller audits the snapshot.
func (b *Builder) FactsOf(fs *FactSet) (f HostFacts, ok bool) {
	f = HostFacts{ok: true, cpuModel: fs.CPUModel, microcode: fs.Microcode, kernel: fs.Kernel, virt: fs.Virt}
	if b.hasRef {
		f.diffs = compare.DiffLeaves(b.ref, fs.Facts)
	}
	if b.w == nil {
		return f, true
	}
	outs, ok := fs.Audit[b.wkey]
	for _, o := range outs {
		f.findings = append(f.findings, audit.Finding{Rule: o.Rule, Title: o.Title, Severity: audit.Severity(o.Severity), Status: o.Status})
	}
	return f, ok
}

// StoredAudit reports whether fact sets stored by this perflab hold the
// report's workload's audit outcomes (a built-in workload, unchanged).
func (b *Builder) StoredAudit() bool {
	if b.w == nil {
		return true
	}
	for _, w := range builtinWorkloads() {
		if workloadKey(w) == b.wkey {
			return true
		}
	}
	return false
}

// AddHost adds a host (in name order) with its runs counted, its latest
// run and the id of its latest snapshot, and the Facts of that snapshot.
func (b *Builder) AddHost(h Host, f HostFacts) {
	if f.ok {
		h.CPUModel, h.Microcode, h.Kernel, h.Virtualization = f.cpuModel, f.microcode, f.kernel, f.virt
		first := len(b.names) == 0
		b.names = append(b.names, h.Name)
		if !first {
			for _, d := range f.diffs {
				b.refVal[d.Path] = d.Before
				if b.hostVal[d.Path] == nil {
					b.hostVal[d.Path] = map[string]string{}
				}
				b.hostVal[d.Path][h.Name] = d.After
			}
		}
		b.addAudit(h.Name, f.findings)
	} else {
		h.SnapshotID = ""
	}
	b.hosts = append(b.hosts, h)
}

func (b *Builder) addAudit(host string, findings []audit.Finding) {
	if b.audit == nil {
		return
	}
	b.audit.Hosts++
	for _, f := range findings {
		c := b.auditBy[f.Rule]
		if c == nil {
			c = &auditCount{c: AuditCount{Rule: f.Rule, Title: f.Title, Severity: f.Severity}}
			b.auditBy[f.Rule] = c
		}
		c.c.Of++
		if f.Status == audit.Fail {
			c.fail = append(c.fail, host)
			if f.Severity > c.c.Severity {
				c.c.Severity = f.Severity
			}
		}
	}
}

// AddRun adds a run's medians (a run that did not complete, failed or was
// interrupted adds nothing).
func (b *Builder) AddRun(r *run.Run) {
	if !r.Complete || r.Stop == run.StopFailed || r.Stop == run.StopInterrupted {
		return
	}
	ps := r.ParamKey()
	for _, md := range r.Metrics {
		vs := r.Values(md.Name)
		if len(vs) == 0 {
			continue
		}
		b.AddMedian(r.Probe, md.Name, ps, md.Unit, md.Better, r.Host, stats.Median(vs))
	}
}

// AddMedian adds one run's median of one metric on host.
func (b *Builder) AddMedian(probe, metric, params, unit string, better run.Better, host string, med float64) {
	if math.IsNaN(med) || math.IsInf(med, 0) {
		return
	}
	a := b.acc(probe, metric, params, unit, better)
	a.medians[host] = append(a.medians[host], med)
}

// AddMedians adds several runs' medians of one metric on host, as
// AddMedian once each (their order does not matter: a host's value and
// noise are of the sorted list).
func (b *Builder) AddMedians(probe, metric, params, unit string, better run.Better, host string, meds []float64) {
	var a *metricAcc
	for _, med := range meds {
		if math.IsNaN(med) || math.IsInf(med, 0) {
			continue
		}
		if a == nil {
			a = b.acc(probe, metric, params, unit, better)
		}
		a.medians[host] = append(a.medians[host], med)
	}
}

func (b *Builder) acc(probe, metric, params, unit string, better run.Better) *metricAcc {
	k := key{probe, metric, params}
	a := b.metrics[k]
	if a == nil {
		// Sized for every host added so far: FromStore adds the hosts first.
		a = &metricAcc{m: Metric{Probe: probe, Metric: metric, Params: params, Unit: unit, Better: better}, medians: make(map[string][]float64, len(b.hosts))}
		b.metrics[k] = a
	}
	return a
}

// Report finishes the report.
func (b *Builder) Report() *Report {
	rep := &Report{Rule: RuleText, Hosts: b.hosts, Groups: groups(b.hosts), Settings: b.settings(), Metrics: []Metric{}}
	if rep.Hosts == nil {
		rep.Hosts = []Host{}
	}
	if rep.Groups == nil {
		rep.Groups = []Group{}
	}
	facts := factTable(b.hosts, rep.Groups, rep.Settings)
	accs := make([]*metricAcc, 0, len(b.metrics))
	for _, a := range b.metrics {
		accs = append(accs, a)
	}
	ms := make([]Metric, len(accs))
	eachOnCPUs(len(accs), func(i int) { ms[i] = accs[i].metric(facts) })
	rep.Metrics = append(rep.Metrics, ms...)
	sort.Slice(rep.Metrics, func(i, j int) bool {
		a, b := rep.Metrics[i], rep.Metrics[j]
		if a.Probe != b.Probe {
			return a.Probe < b.Probe
		}
		if a.Metric != b.Metric {
			return a.Metric < b.Metric
		}
		return a.Params < b.Params
	})
	if b.audit != nil {
		rep.Audit = b.finishAudit()
	}
	return rep
}

// metric is a's metric: each host's value and noise, the fleet's run
// noise and each host's standard error, the fleet's median and spread,
// and the outliers with their separating facts (read only).
func (a *metricAcc) metric(facts []fact) Metric {
	m := a.m
	m.Hosts = make([]HostValue, 0, len(a.medians))
	var dev []float64
	pool := make([]float64, 0, len(a.medians))
	for h, meds := range a.medians {
		// meds are finite (AddMedian) and this report's own: sorted in
		// place, then Median's and mad's values without their copies.
		slices.Sort(meds)
		hv := HostValue{Host: h, Value: stats.MedianSorted(meds), Runs: len(meds)}
		if len(meds) >= 2 {
			dev = dev[:0]
			for _, x := range meds {
				if d := math.Abs(x - hv.Value); !math.IsInf(d, 0) {
					dev = append(dev, d)
				}
			}
			slices.Sort(dev)
			hv.Noise = MADScale * stats.MedianSorted(dev)
			if sd := sampleSD(meds); !math.IsNaN(sd) && !math.IsInf(sd, 0) {
				pool = append(pool, stats.SDMedianUnbiased(sd, len(meds)))
			}
		}
		m.Hosts = append(m.Hosts, hv)
	}
	if len(pool) >= MinHosts {
		m.RunNoise = stats.Median(pool)
	}
	sort.Slice(m.Hosts, func(i, j int) bool { return m.Hosts[i].Host < m.Hosts[j].Host })
	outliers(&m, facts)
	return m
}

// sampleSD is the standard deviation (n−1) of xs.
func sampleSD(xs []float64) float64 {
	_, v := meanVar(xs)
	return math.Sqrt(v)
}

// eachOnCPUs calls fn(0) … fn(n-1) on every CPU; the calls must be
// independent (each metric of a report is).
func eachOnCPUs(n int, fn func(i int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				fn(i)
			}
		}()
	}
	wg.Wait()
}

// settings are the setting and identity facts that differ between the
// hosts' latest snapshots: each host was diffed against the first host's,
// and a host without a difference at a path holds the first host's value.
func (b *Builder) settings() []Setting {
	if len(b.names) < 2 {
		return []Setting{}
	}
	out := make([]Setting, 0, len(b.refVal))
	for p, rv := range b.refVal {
		m := map[string][]string{}
		for _, n := range b.names {
			v, ok := b.hostVal[p][n]
			if !ok {
				v = rv
			}
			m[v] = append(m[v], n)
		}
		k, _ := factpath.KindOf(p)
		s := Setting{Fact: p, Kind: k, Values: values(m), byHost: map[string]int{}}
		for i, v := range s.Values {
			for _, h := range v.Hosts {
				s.byHost[h] = i
			}
		}
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Fact < out[j].Fact })
	return out
}

func (b *Builder) finishAudit() *Audit {
	a := b.audit
	for _, c := range b.auditBy {
		if len(c.fail) == 0 {
			continue
		}
		c.c.Hosts = c.fail
		a.Findings = append(a.Findings, c.c)
	}
	sort.Slice(a.Findings, func(i, j int) bool {
		x, y := a.Findings[i], a.Findings[j]
		if x.Severity != y.Severity {
			return x.Severity > y.Severity
		}
		if len(x.Hosts) != len(y.Hosts) {
			return len(x.Hosts) > len(y.Hosts)
		}
		return x.Rule < y.Rule
	})
	return a
}
