// Package fleet reads many hosts' stored runs and snapshots together: it
// groups the hosts by what they are (CPU model, microcode, kernel release,
// virtualisation) and by every setting that differs between them, finds the
// hosts whose results are outliers for each probe and metric, names the fact
// that separates each outlier group from the rest of the fleet, and counts
// on how many hosts each audit finding holds. It is pure: the caller loads
// runs and snapshots (internal/store) and renders the Report.
//
// # The statistics
//
// The run is the unit, not the sample. A host's value x for a metric is
// the median of its k runs' medians (each run's median is over its
// samples, as in internal/history); its between-run noise σₕ is 1.4826 ×
// the median absolute deviation (MAD) of those run medians, defined when
// it has at least 2 runs.
//
// The fleet's run noise σ_f is the median, over the hosts with at least 2
// runs (at least 3 such hosts, else undefined), of each host's sample
// standard deviation s of its run medians made median-unbiased for
// normal runs: s·√((k−1)/m), m the median of χ²ₖ₋₁ (stats.SDMedianUnbiased;
// the SD of 2 values is below σ more often than not, the MAD of 3 far
// more). One host's 2 or 3 runs say little about its noise; the median
// over many hosts is stable, and an odd host's wild run does not move it.
//
// The standard error of x is
//
//	SE(x) = √(π/2) · max(σₕ, σ_f) / √k
//
// the large-k standard error of the median of k normal values
// (stats.MedianSE), which overstates the exact one at small k (by 25% at
// k = 1 and 2, 8% at 3, 5% at 5): the rule errs towards not naming a
// host. The floor σ_f keeps a host whose 2 or 3 runs happen to agree from
// having a tiny SE, and gives a single-run host an SE at all; a host
// noisier than the fleet is judged by its own noise. SE is 0 (no own
// condition) when neither σₕ nor σ_f is known (single runs everywhere).
//
// A host is an outlier for a metric when both hold:
//
//   - robust across hosts: |x − m| > 3 × s, where m is the median of the
//     host values and s = max(1.4826 × MAD of the host values, 1% of |m|).
//     1.4826 × MAD estimates the standard deviation of normally spread
//     hosts without letting the outliers themselves inflate it; the 1%
//     floor keeps a fleet of near-identical hosts (MAD ≈ 0) from calling a
//     3% difference an outlier;
//   - beyond the uncertainty of its own value: |x − m| > 3 × SE(x), so a
//     host is not named for a few unlucky runs, while a host that is
//     consistently off is named with more certainty the more runs it has
//     (the SE falls as 1/√k). It replaces "> 3 × σₕ", the spread of single
//     runs, whose power did not grow with k (docs/fleet-scale.md, "Power at
//     few runs per host": simulated by fleet.PowerSim,
//     `go run ./bench/fleetpower`).
//
// At least 3 hosts with the metric are needed to call any host an outlier.
//
// Outliers are grouped by direction (below or above m). For each group,
// the separating fact is a fact (identity or setting) whose value is shared
// by every outlier in the group and by as few of the other hosts as
// possible; facts held by more than a quarter of the other hosts do not
// separate. Its effect is the ratio of the geometric mean of the outliers'
// host values to that of the hosts without the value, with a 95% Student t
// interval on the difference of the mean log host values (pooled variance,
// hosts as units, n₁ + n₂ − 2 degrees of freedom); it needs at least 3
// hosts in all.
//
// Facts compared are those compare.DiffSnapshots reports between the
// hosts' latest snapshots whose factpath.Kind is setting or identity; state
// (free memory, counters, load) and per-host names (hostname, machine id)
// never group hosts.
package fleet

import (
	"github.com/perflab/perflab/internal/effect"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/perflab/perflab/internal/audit"
	"github.com/perflab/perflab/internal/compare"
	"github.com/perflab/perflab/internal/run"
	"github.com/perflab/perflab/internal/snapshot"
	"github.com/perflab/perflab/internal/snapshot/factpath"
	"github.com/perflab/perflab/internal/stats"
)

// Outlier rule constants (see the package doc).
const (
	MADScale     = 1.4826 // MAD → standard deviation of a normal distribution
	OutlierK     = 3.0    // how many robust standard deviations make an outlier
	RelFloor     = 0.01   // floor of the robust spread, relative to the fleet median
	MinHosts     = 3      // fewest hosts with a metric to call outliers
	MaxInlierPct = 25     // a separating value may be held by at most this share of the other hosts
)

// Input is what the report is built from.
type Input struct {
	Runs []*run.Run
	// Snapshots by snapshot id; a run whose snapshot is missing still
	// counts for its metrics.
	Snapshots map[string]*snapshot.Snapshot
	// Workload the audit side judges against (nil: no audit side).
	Workload *audit.Workload
}

// Report is the fleet view.
type Report struct {
	Hosts    []Host    `json:"hosts"`
	Groups   []Group   `json:"groups"`   // by CPU model, microcode, kernel, virtualisation
	Settings []Setting `json:"settings"` // every other fact that differs between hosts
	Metrics  []Metric  `json:"metrics"`
	Audit    *Audit    `json:"audit,omitempty"`
	Rule     string    `json:"outlier_rule"`
}

// Host is one host of the selection.
type Host struct {
	Name           string    `json:"name"`
	Runs           int       `json:"runs"`
	Latest         time.Time `json:"latest_run"`
	SnapshotID     string    `json:"snapshot_id,omitempty"` // of its latest run with one
	CPUModel       string    `json:"cpu_model,omitempty"`
	Microcode      string    `json:"microcode,omitempty"`
	Kernel         string    `json:"kernel,omitempty"`
	Virtualization string    `json:"virtualization,omitempty"`
}

// Group is hosts sharing one value of a fact.
type Group struct {
	Fact   string  `json:"fact"` // fact path: cpu.model
	Values []Value `json:"values"`
}

// Value is one value of a fact and the hosts holding it.
type Value struct {
	Value string   `json:"value"`
	Hosts []string `json:"hosts"`
}

// Setting is a setting or identity fact that differs between hosts.
type Setting struct {
	Fact   string         `json:"fact"`
	Kind   factpath.Kind  `json:"kind"`
	Values []Value        `json:"values"`
	byHost map[string]int // host → index into Values
}

// Metric is one probe's metric across the hosts.
type Metric struct {
	Probe    string         `json:"probe"`
	Metric   string         `json:"metric"`
	Params   string         `json:"params,omitempty"`
	Unit     string         `json:"unit"`
	Better   run.Better     `json:"better"`
	Median   float64        `json:"median"`              // of the host values
	Spread   float64        `json:"robust_sd"`           // max(1.4826·MAD, 1% of |median|)
	RunNoise float64        `json:"run_noise,omitempty"` // the hosts' typical between-run noise (≥3 hosts with ≥2 runs)
	Hosts    []HostValue    `json:"hosts"`               // by name
	Outliers []OutlierGroup `json:"outlier_groups"`
	TooFew   bool           `json:"too_few_hosts,omitempty"`
}

// HostValue is one host's value of a metric.
type HostValue struct {
	Host    string  `json:"host"`
	Value   float64 `json:"value"`           // median of its runs' medians
	Runs    int     `json:"runs"`            // how many runs
	Noise   float64 `json:"noise,omitempty"` // 1.4826·MAD of its run medians (≥2 runs)
	Outlier bool    `json:"outlier,omitempty"`
}

// OutlierGroup is the outliers of a metric on one side of the median.
type OutlierGroup struct {
	Direction string   `json:"direction"` // low, high
	Worse     bool     `json:"worse"`     // in the metric's bad direction
	Hosts     []string `json:"hosts"`
	// Separating facts, best first (empty: nothing the outliers share
	// separates them; Unexplained then).
	Facts []Separation `json:"separating_facts"`
}

// Separation is a fact value that sets an outlier group apart, with the
// effect of belonging to it.
type Separation struct {
	Fact    string   `json:"fact"`
	Value   string   `json:"value"`
	Others  []string `json:"other_values"`    // the values of the hosts without it
	Inliers []string `json:"inliers_sharing"` // non-outliers that share the value
	Effect  *Effect  `json:"effect,omitempty"`
	// Also are other facts that split the hosts exactly as this one
	// (cgroup.cpu_quota_dir beside cgroup.cpu_quota_us).
	Also  []string `json:"same_split,omitempty"`
	split string   // the hosts holding the value, joined
	rank  int      // position of the fact in the candidate table
	group bool     // a grouping fact
}

// Effect is the ratio of the group's geometric mean host value to the
// rest's, with a 95% interval.
type Effect struct {
	Ratio float64 `json:"ratio"`
	Lo    float64 `json:"lo"`
	Hi    float64 `json:"hi"`
	N1    int     `json:"hosts_with"`
	N2    int     `json:"hosts_without"`
}

// Audit is the audit side: each finding and on how many hosts it holds.
type Audit struct {
	Workload string       `json:"workload"`
	Hosts    int          `json:"hosts"` // hosts with a snapshot
	Findings []AuditCount `json:"findings"`
}

// AuditCount is one rule failing on some hosts.
type AuditCount struct {
	Rule     string         `json:"rule"`
	Title    string         `json:"title"`
	Severity audit.Severity `json:"severity"`
	Hosts    []string       `json:"hosts"` // where it fails
	Of       int            `json:"of"`    // hosts where it was decided (pass or fail)
}

// RuleText states the outlier rule in one line.
const RuleText = "outlier: |x − m| > 3·max(1.4826·MAD, 1%·m) across hosts, and > 3·SE(x), SE = 1.2533·max(σ, σ_fleet)/√k (σ: 1.4826·MAD of its k run medians; σ_fleet: the hosts' typical between-run SD); x = median of its runs' medians"

// Build makes the report from runs and snapshots in memory. FromStore
// makes the same report from a store without holding its runs.
func Build(in Input) *Report {
	hosts, snaps := hostsOf(in)
	b := NewBuilder(in.Workload)
	for _, h := range hosts {
		if s := snaps[h.Name]; s != nil {
			b.Reference(s)
			break
		}
	}
	for _, h := range hosts {
		b.AddHost(h, b.Facts(snaps[h.Name]))
	}
	for _, r := range in.Runs {
		b.AddRun(r)
	}
	return b.Report()
}

func hostsOf(in Input) ([]Host, map[string]*snapshot.Snapshot) {
	by := map[string]*Host{}
	snapAt := map[string]time.Time{}
	snaps := map[string]*snapshot.Snapshot{}
	for _, r := range in.Runs {
		h := by[r.Host]
		if h == nil {
			h = &Host{Name: r.Host}
			by[r.Host] = h
		}
		h.Runs++
		if r.Started.After(h.Latest) {
			h.Latest = r.Started
		}
		if s := in.Snapshots[r.SnapshotID]; s != nil && r.SnapshotID != "" && !r.Started.Before(snapAt[r.Host]) {
			snapAt[r.Host] = r.Started
			snaps[r.Host] = s
			h.SnapshotID = r.SnapshotID
		}
	}
	out := make([]Host, 0, len(by))
	for name, h := range by {
		if s := snaps[name]; s != nil {
			h.CPUModel, h.Microcode = s.CPU.Model, s.CPU.Microcode
			h.Kernel, h.Virtualization = s.Kernel.Release, s.Host.Virtualization
		}
		out = append(out, *h)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, snaps
}

// groupFacts are the identity facts every report groups by.
var groupFacts = []struct {
	path string
	get  func(Host) string
}{
	{"cpu.model", func(h Host) string { return h.CPUModel }},
	{"cpu.microcode", func(h Host) string { return h.Microcode }},
	{"kernel.release", func(h Host) string { return h.Kernel }},
	{"host.virtualization", func(h Host) string { return h.Virtualization }},
}

func groups(hosts []Host) []Group {
	var out []Group
	for _, gf := range groupFacts {
		m := map[string][]string{}
		for _, h := range hosts {
			if h.SnapshotID == "" {
				continue
			}
			v := gf.get(h)
			if v == "" {
				v = "(unknown)"
			}
			m[v] = append(m[v], h.Name)
		}
		if len(m) > 0 {
			out = append(out, Group{Fact: gf.path, Values: values(m)})
		}
	}
	return out
}

func values(m map[string][]string) []Value {
	out := make([]Value, 0, len(m))
	for v, hs := range m {
		sort.Strings(hs)
		out = append(out, Value{Value: v, Hosts: hs})
	}
	sort.Slice(out, func(i, j int) bool {
		if len(out[i].Hosts) != len(out[j].Hosts) {
			return len(out[i].Hosts) > len(out[j].Hosts)
		}
		return out[i].Value < out[j].Value
	})
	return out
}

// perHost are identity facts that name a host rather than describe it
// (the UTS names are also read as sysctls, where they would otherwise
// "separate" every outlier from the rest).
var perHost = []string{"host.hostname", "host.machine_id", "host.boot_id", "id", "taken_at",
	"sysctl.kernel.hostname", "sysctl.kernel.domainname", "sysctl.kernel.random.boot_id", "sysctl.kernel.random.uuid"}

func isPerHost(p string) bool {
	for _, x := range perHost {
		if p == x {
			return true
		}
	}
	return false
}

type key struct{ probe, metric, params string }

func mad(xs []float64) float64 {
	m := stats.Median(xs)
	d := make([]float64, len(xs))
	for i, x := range xs {
		d[i] = math.Abs(x - m)
	}
	return stats.Median(d)
}

// fact is one candidate separating fact: each host's value.
type fact struct {
	path   string
	byHost map[string]string
	group  bool // one of groupFacts
}

func factTable(hosts []Host, gs []Group, ss []Setting) []fact {
	var out []fact
	add := func(path string, vs []Value, group bool) {
		if len(vs) < 2 {
			return // the same on every host: separates nothing
		}
		f := fact{path: path, byHost: map[string]string{}, group: group}
		for _, v := range vs {
			for _, h := range v.Hosts {
				f.byHost[h] = v.Value
			}
		}
		out = append(out, f)
	}
	for _, g := range gs {
		add(g.Fact, g.Values, true)
	}
	seen := map[string]bool{}
	for _, g := range gs {
		seen[g.Fact] = true
	}
	for _, s := range ss {
		if !seen[s.Fact] {
			add(s.Fact, s.Values, false)
		}
	}
	return out
}

func outliers(m *Metric, facts []fact) {
	xs := make([]float64, len(m.Hosts))
	for i, h := range m.Hosts {
		xs[i] = h.Value
	}
	m.Median = stats.Median(xs)
	m.Spread = math.Max(MADScale*mad(xs), RelFloor*math.Abs(m.Median))
	m.Outliers = []OutlierGroup{}
	if len(xs) < MinHosts {
		m.TooFew = true
		return
	}
	var low, high []string
	for i := range m.Hosts {
		h := &m.Hosts[i]
		d := h.Value - m.Median
		if math.Abs(d) <= OutlierK*m.Spread {
			continue
		}
		if se := m.SE(*h); se > 0 && math.Abs(d) <= OutlierK*se {
			continue
		}
		h.Outlier = true
		if d < 0 {
			low = append(low, h.Host)
		} else {
			high = append(high, h.Host)
		}
	}
	for _, side := range []struct {
		dir   string
		hosts []string
	}{{"low", low}, {"high", high}} {
		if len(side.hosts) == 0 {
			continue
		}
		worse := outlierWorse(m, side.hosts[0])
		g := OutlierGroup{Direction: side.dir, Worse: worse, Hosts: side.hosts, Facts: separate(m, side.hosts, facts)}
		m.Outliers = append(m.Outliers, g)
	}
}

// SE is the standard error of h's value, the median of its k run
// medians: √(π/2)·max(σ, σ_fleet)/√k with σ its Noise and σ_fleet the
// metric's RunNoise (see the package doc); 0 when neither is known. The
// report's JSON leaves it out (a float per host and metric, a quarter of
// a large report): it follows from the host's noise and runs and the
// metric's run_noise.
func (m *Metric) SE(h HostValue) float64 {
	sigma := math.Max(h.Noise, m.RunNoise)
	if h.Runs < 1 || !(sigma > 0) {
		return 0
	}
	return stats.MedianSE(sigma, h.Runs)
}

// outlierWorse: the host's value lies on the metric's bad side of the
// fleet median (the one rule's direction, package effect).
func outlierWorse(m *Metric, host string) bool {
	for _, h := range m.Hosts {
		if h.Host == host && m.Median != 0 {
			return effect.Toward(h.Value/m.Median, m.Better) < 0
		}
	}
	return false
}

// separate finds the facts whose value every outlier shares and at most
// MaxInlierPct of the other hosts with the metric hold, fewest such
// inliers first.
func separate(m *Metric, outs []string, facts []fact) []Separation {
	isOut := map[string]bool{}
	for _, h := range outs {
		isOut[h] = true
	}
	var out []Separation
	for rank, f := range facts {
		v, ok := f.byHost[outs[0]]
		if !ok {
			continue
		}
		shared := true
		for _, h := range outs[1:] {
			if hv, ok := f.byHost[h]; !ok || hv != v {
				shared = false
				break
			}
		}
		if !shared {
			continue
		}
		var inl, holders []string
		others := map[string]bool{}
		var with, without []float64
		nIn := 0
		for _, hv := range m.Hosts {
			fv, ok := f.byHost[hv.Host]
			if !ok {
				continue
			}
			if fv == v {
				with = append(with, hv.Value)
				holders = append(holders, hv.Host)
			} else {
				without = append(without, hv.Value)
				others[fv] = true
			}
			if !isOut[hv.Host] {
				nIn++
				if fv == v {
					inl = append(inl, hv.Host)
				}
			}
		}
		if nIn == 0 || len(without) == 0 || 100*len(inl) > MaxInlierPct*nIn {
			continue
		}
		s := Separation{Fact: f.path, Value: v, Inliers: inl, Others: sortedKeys(others), split: strings.Join(holders, ","), rank: rank, group: f.group}
		if s.Inliers == nil {
			s.Inliers = []string{}
		}
		s.Effect = splitEffect(with, without)
		out = append(out, s)
	}
	// Fewest inliers sharing the value first; then by compare's
	// explanation of the move (kind, knowledge, direction: a CPU quota
	// before an interface's driver for a CPU metric); then the grouping
	// facts in their order (CPU model before microcode), then the shorter
	// value (a quota before the directory that sets it).
	moved := compare.Better
	if outlierWorse(m, outs[0]) {
		moved = compare.Worse
	}
	ranks := map[string]compare.FactRank{}
	for _, s := range out {
		other := ""
		if len(s.Others) > 0 {
			other = s.Others[0]
		}
		ranks[s.Fact] = compare.RankFact(s.Fact, other, s.Value, m.Probe, m.Metric, m.Unit, moved)
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if len(a.Inliers) != len(b.Inliers) {
			return len(a.Inliers) < len(b.Inliers)
		}
		if ra, rb := ranks[a.Fact], ranks[b.Fact]; !ra.Same(rb) {
			return ra.Better(rb)
		}
		ga, gb := a.group, b.group
		if ga != gb {
			return ga
		}
		if ga {
			return a.rank < b.rank
		}
		if len(a.Value) != len(b.Value) {
			return len(a.Value) < len(b.Value)
		}
		return a.Fact < b.Fact
	})
	// Facts splitting the hosts the same way are one finding.
	merged := []Separation{}
	first := map[string]int{}
	for _, s := range out {
		if i, ok := first[s.split]; ok {
			merged[i].Also = append(merged[i].Also, s.Fact)
			continue
		}
		first[s.split] = len(merged)
		merged = append(merged, s)
	}
	return merged
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// splitEffect is the ratio of geometric means of a and b with a 95% pooled t
// interval on the log scale; nil when a value is not positive or there are
// fewer than 3 hosts.
func splitEffect(a, b []float64) *Effect {
	n1, n2 := len(a), len(b)
	if n1+n2 < 3 || n1 == 0 || n2 == 0 {
		return nil
	}
	la, lb := logs(a), logs(b)
	if la == nil || lb == nil {
		return nil
	}
	m1, v1 := meanVar(la)
	m2, v2 := meanVar(lb)
	df := n1 + n2 - 2
	pooled := ((float64(n1)-1)*v1 + (float64(n2)-1)*v2) / float64(df)
	se := math.Sqrt(pooled * (1/float64(n1) + 1/float64(n2)))
	d := m1 - m2
	t := tQuantile975(df)
	return &Effect{Ratio: math.Exp(d), Lo: math.Exp(d - t*se), Hi: math.Exp(d + t*se), N1: n1, N2: n2}
}

func logs(xs []float64) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		if !(x > 0) {
			return nil
		}
		out[i] = math.Log(x)
	}
	return out
}

func meanVar(xs []float64) (mean, variance float64) {
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	if len(xs) < 2 {
		return mean, 0
	}
	for _, x := range xs {
		variance += (x - mean) * (x - mean)
	}
	return mean, variance / float64(len(xs)-1)
}

// t975 is the 0.975 quantile of Student's t for 1–30 degrees of freedom
// (standard tables); beyond 30 the normal's 1.96 is within 2%.
var t975 = [...]float64{12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
	2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
	2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042}

func tQuantile975(df int) float64 {
	if df >= 1 && df <= len(t975) {
		return t975[df-1]
	}
	return 1.96
}
