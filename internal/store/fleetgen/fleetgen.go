// Package fleetgen generates a fleet-scale store from real data: the runs
// of testdata/aa (one development VM measured repeatedly with nothing
// changed) and a snapshot collected from a testdata/roots fixture tree,
// copied to N hosts with varied identities (hostname, CPU model, kernel,
// settings), with planted outliers and one change point whose causes the
// fleet report must name. The same seed gives the same store.
//
// Each generated run is a real run's samples (its first Samples
// iterations) scaled so every probe's metric has the median of the real
// runs, times the host's factor and a small per-run noise: the real runs'
// own drift (the VM was shared with up to ten jobs) would otherwise hide
// any planted effect.
package fleetgen

import (
	"compress/gzip"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/perflab/perflab/internal/hostfs"
	"github.com/perflab/perflab/internal/run"
	"github.com/perflab/perflab/internal/snapshot"
	"github.com/perflab/perflab/internal/stats"
)

// Options is what to generate.
type Options struct {
	Hosts       int    // hosts (at least 20)
	RunsPerHost int    // runs per host, cycling over the real runs' probes
	Samples     int    // iterations kept per run (of the real run's)
	Seed        uint64 // same seed, same store
	Repo        string // directory holding testdata/aa and testdata/roots
}

// The identities and settings the fleet varies.
const (
	ModelA     = "AMD EPYC 7B13 64-Core Processor" // the instance type's usual CPU
	ModelB     = "AMD EPYC 7B12 64-Core Processor" // the lottery's other CPU
	Label      = "fleet"
	thpNormal  = "madvise"
	thpPlanted = "always"
	// Per-run and per-host multiplicative noise (σ of the log), well
	// below the fleet rule's 1% floor, so the only outliers are planted.
	noise      = 0.004
	hostSpread = 0.003
)

var kernels = []string{"6.18.0-1-cloud-amd64", "6.12.9-1-cloud-amd64", "6.1.0-28-cloud-amd64"}

// Plan is what was planted, for the bench script to print and tests to
// check against the fleet report.
type Plan struct {
	ModelB      []string // hosts with ModelB: memory.latency ×0.88 worse (the lottery)
	THPAlways   []string // memory.thp.enabled=always: memory.pagefault ×0.7 worse
	Quota       []string // cgroup.cpu_quota_us=50000: cpu ×0.5
	ChangePoint string   // kernel upgraded half-way; syscall ×0.8 worse after
	ChangeAt    time.Time
	Runs        int
	Snapshots   int
}

// Host is one generated host: its snapshots and runs.
type Host struct {
	Name      string
	Snapshots []*snapshot.Snapshot
	Runs      []*run.Run
}

// template is one probe's real runs with each metric's median across them.
type template struct {
	probe  string
	runs   []*run.Run
	median map[string]float64   // metric → median of the runs' medians
	runMed []map[string]float64 // per run: metric → median of its kept samples
}

// Generator holds the real data; Host(i) builds host i.
type Generator struct {
	opt       Options
	templates []*template
	base      *snapshot.Snapshot
	plan      Plan
	start     time.Time
}

// New reads the real runs and collects the base snapshot.
func New(opt Options) (*Generator, error) {
	if opt.Hosts < 20 || opt.RunsPerHost < 4 || opt.Samples < 1 {
		return nil, fmt.Errorf("need at least 20 hosts, 4 runs per host and 1 sample (got %d, %d, %d)", opt.Hosts, opt.RunsPerHost, opt.Samples)
	}
	g := &Generator{opt: opt, start: time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)}
	if err := g.readRuns(filepath.Join(opt.Repo, "testdata", "aa")); err != nil {
		return nil, err
	}
	fs, err := hostfs.New(filepath.Join(opt.Repo, "testdata", "roots", "kvm"))
	if err != nil {
		return nil, err
	}
	g.base, err = snapshot.Collect(fs, snapshot.Options{Now: g.start, ID: "base", Root: "/"})
	if err != nil {
		return nil, fmt.Errorf("collecting the base snapshot: %w", err)
	}
	g.plan = g.makePlan()
	return g, nil
}

func (g *Generator) readRuns(dir string) error {
	files, _ := filepath.Glob(filepath.Join(dir, "*.json.gz"))
	if len(files) == 0 {
		return fmt.Errorf("no real runs in %s (run from the repository, or give its path)", dir)
	}
	sort.Strings(files)
	by := map[string]*template{}
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			return err
		}
		zr, err := gzip.NewReader(fh)
		if err != nil {
			fh.Close()
			return fmt.Errorf("%s: %w", f, err)
		}
		ex, err := run.ReadExport(zr)
		fh.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		for _, r := range ex.Runs {
			if !r.Complete {
				continue
			}
			t := by[r.Probe]
			if t == nil {
				t = &template{probe: r.Probe, median: map[string]float64{}}
				by[r.Probe] = t
			}
			t.runs = append(t.runs, r)
		}
	}
	for _, t := range by {
		all := map[string][]float64{}
		for _, r := range t.runs {
			m := map[string]float64{}
			for _, md := range r.Metrics {
				if vs := kept(r, md.Name, g.opt.Samples); len(vs) > 0 {
					m[md.Name] = stats.Median(vs)
					all[md.Name] = append(all[md.Name], m[md.Name])
				}
			}
			t.runMed = append(t.runMed, m)
		}
		for k, vs := range all {
			t.median[k] = stats.Median(vs)
		}
		g.templates = append(g.templates, t)
	}
	sort.Slice(g.templates, func(i, j int) bool { return g.templates[i].probe < g.templates[j].probe })
	return nil
}

// kept are the values of metric in r's first n iterations, the samples a
// generated run keeps.
func kept(r *run.Run, metric string, n int) []float64 {
	var out []float64
	for _, x := range r.Samples {
		if x.Metric == metric && x.Iteration < n {
			out = append(out, x.Value)
		}
	}
	return out
}

// Name is host i's hostname.
func Name(i int) string { return fmt.Sprintf("node%05d", i) }

func (g *Generator) rng(i int, salt uint64) *rand.Rand {
	return rand.New(rand.NewPCG(g.opt.Seed, uint64(i)<<8|salt))
}

func (g *Generator) makePlan() Plan {
	n := g.opt.Hosts
	r := g.rng(-1&0xffffff, 1)
	perm := r.Perm(n)
	take := func(k int) []string {
		var out []string
		for _, i := range perm[:k] {
			out = append(out, Name(i))
		}
		perm = perm[k:]
		sort.Strings(out)
		return out
	}
	p := Plan{}
	p.Quota = take(1)
	p.ChangePoint = take(1)[0]
	p.THPAlways = take(max(3, n/300))
	p.ModelB = take(max(3, n/20))
	p.ChangeAt = g.start.Add(time.Duration(g.opt.RunsPerHost/2) * time.Hour)
	return p
}

// Plan is what New planted.
func (g *Generator) Plan() Plan { return g.plan }

func in(xs []string, x string) bool {
	i := sort.SearchStrings(xs, x)
	return i < len(xs) && xs[i] == x
}

func id(parts ...any) string {
	h := fnv.New64a()
	fmt.Fprint(h, parts...)
	return fmt.Sprintf("%016x", h.Sum64())
}

// Host builds host i: one snapshot (two for the change-point host) and
// RunsPerHost runs, oldest first.
func (g *Generator) Host(i int) Host {
	name := Name(i)
	r := g.rng(i, 2)
	p := g.plan
	h := Host{Name: name}
	model := ModelA
	if in(p.ModelB, name) {
		model = ModelB
	}
	kernel := kernels[0]
	if x := r.Float64(); x > 0.9 {
		kernel = kernels[2]
	} else if x > 0.6 {
		kernel = kernels[1]
	}
	somax := "4096"
	if r.Float64() < 0.1 {
		somax = "128"
	}
	thp := thpNormal
	if in(p.THPAlways, name) {
		thp = thpPlanted
	}
	snap := func(k string, at time.Time, n int) *snapshot.Snapshot {
		s := *g.base
		s.ID = id(g.opt.Seed, name, "snap", n)
		s.TakenAt = at
		s.Host.Hostname = name
		s.Host.MachineID = id(g.opt.Seed, name, "machine") + id(name)
		s.Host.BootID = id(g.opt.Seed, name, "boot", n)
		s.CPU.Model = model
		s.Kernel.Release = k
		s.Sysctl = make(map[string]string, len(g.base.Sysctl))
		for sk, sv := range g.base.Sysctl {
			s.Sysctl[sk] = sv
		}
		s.Sysctl["kernel.hostname"] = name
		s.Sysctl["kernel.osrelease"] = k
		s.Sysctl["net.core.somaxconn"] = somax
		s.Memory.THP.Enabled = thp
		if in(p.Quota, name) {
			s.Cgroup.CPUQuotaUS, s.Cgroup.CPUPeriodUS = 50000, 100000
			s.Cgroup.CPUQuotaDir = "/sys/fs/cgroup/cpu,cpuacct/perflab.slice"
		}
		return &s
	}
	change := name == p.ChangePoint
	k0 := kernel
	if change {
		k0 = kernels[1]
	}
	before := snap(k0, g.start.Add(-time.Hour), 0)
	h.Snapshots = append(h.Snapshots, before)
	after := before
	if change {
		after = snap(kernels[0], p.ChangeAt.Add(-time.Minute), 1)
		h.Snapshots = append(h.Snapshots, after)
	}
	hostFactor := math.Exp(r.NormFloat64() * hostSpread)
	offset := time.Duration(r.IntN(3600)) * time.Second
	for j := 0; j < g.opt.RunsPerHost; j++ {
		t := g.templates[j%len(g.templates)]
		tr := (j / len(g.templates)) % len(t.runs)
		started := g.start.Add(time.Duration(j)*time.Hour + offset)
		s := before
		if started.After(p.ChangeAt) {
			s = after
		}
		f := hostFactor
		worse := 1.0 // <1: worse by this ratio in the metric's direction
		if t.probe == "memory.latency" && model == ModelB {
			worse = 0.88
		}
		switch {
		case t.probe == "cpu" && in(p.Quota, name):
			worse *= 0.5
		case t.probe == "memory.pagefault" && thp == thpPlanted:
			worse = 0.7
		case t.probe == "syscall" && change && s == after:
			worse = 0.8
		}
		h.Runs = append(h.Runs, g.run(t, tr, name, s.ID, started, j, f, worse, r))
	}
	return h
}

func (g *Generator) run(t *template, tr int, host, snapID string, started time.Time, j int, f, worse float64, r *rand.Rand) *run.Run {
	src := t.runs[tr]
	out := *src
	out.ID = id(g.opt.Seed, host, "run", j)
	out.Label = Label
	out.Host = host
	out.MachineID = ""
	out.BootID = ""
	out.SnapshotID = snapID
	out.Started = started
	out.Ended = started.Add(src.Ended.Sub(src.Started))
	out.Notes = nil
	out.Samples = nil
	runNoise := math.Exp(r.NormFloat64() * noise)
	for _, x := range src.Samples {
		if x.Iteration >= g.opt.Samples {
			continue
		}
		base := t.runMed[tr][x.Metric]
		if base == 0 || math.IsNaN(base) {
			continue
		}
		md, _ := src.Metric(x.Metric)
		k := f * runNoise
		if md.Better == run.Higher {
			k *= worse
		} else if md.Better == run.Lower {
			k /= worse
		}
		x.Value = x.Value / base * t.median[x.Metric] * k
		out.Samples = append(out.Samples, x)
	}
	return &out
}
