package bench_test

import (
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/bench"
	"github.com/perflab/perflab/internal/probe/builtin"
	"github.com/perflab/perflab/internal/probe/tools"
	"github.com/perflab/perflab/internal/testenv"
)

// Every category of the issue must be in quick, from builtin probes (quick
// must run on a host without any tool), within the 90 s promise.
func TestQuickSuiteCoversEveryCategoryWithinBudget(t *testing.T) {
	quick, ok := bench.SuiteByName("quick")
	if !ok {
		t.Fatal("no quick suite")
	}
	have := map[string]bool{}
	var total time.Duration
	for _, it := range quick.Items {
		have[it.Probe] = true
		if _, ok := builtin.ByName(it.Probe); !ok {
			t.Errorf("quick uses %s, which is not a builtin probe", it.Probe)
		}
		if it.Budget <= 0 {
			t.Errorf("quick entry %s has no budget", it.Probe)
		}
		total += it.Budget
	}
	for _, cat := range []string{"cpu", "memory.bandwidth", "memory.latency", "memory.pagefault", "sched.wakeup", "sched.ctxswitch", "syscall", "disk", "net.tcp", "net.udp"} {
		if !have[cat] {
			t.Errorf("quick does not cover %s", cat)
		}
	}
	// Budgets include setup; leave room for the snapshot and the store.
	if total > 80*time.Second {
		t.Errorf("quick budgets add up to %s, over 80 s", total)
	}
}

// Every suite resolves against the full catalogue (builtin probes and tool
// adapters): each entry's probe or fallback exists, and every parameter it
// sets is one the probe accepts. An entry may be skipped only when it is a
// tool adapter whose tool this host lacks (never in CI, which installs
// every tool).
func TestSuitesResolveAgainstBuiltinProbes(t *testing.T) {
	cat := bench.NewCatalog(append(builtin.All(), tools.All()...)...)
	missing := map[string]bool{} // tool adapters whose tool is not installed here
	for _, p := range tools.All() {
		if err := p.(bench.Availability).Available(); err != nil {
			if testenv.InCI() {
				t.Errorf("%s unavailable in CI: %v", p.Name(), err)
			}
			missing[p.Name()] = true
		}
	}
	for _, s := range bench.Suites {
		plan, err := cat.Resolve([]string{s.Name}, nil)
		if err != nil {
			allMissing := true
			for _, it := range s.Items {
				allMissing = allMissing && missing[it.Probe] && it.Fallback == ""
			}
			if !allMissing {
				t.Errorf("suite %s: %v", s.Name, err)
			}
			continue
		}
		if err := bench.Validate(plan.Items, bench.Options{}); err != nil {
			t.Errorf("suite %s: %v", s.Name, err)
		}
		for _, n := range plan.Notes {
			// Only tool entries whose tool is missing here may be skipped.
			name, _, _ := strings.Cut(strings.TrimPrefix(n, "skipped "), " ")
			if strings.HasPrefix(n, "skipped ") && s.Name != "baseline" && !missing[name] {
				t.Errorf("suite %s: %s", s.Name, n)
			}
		}
		if s.Doc == "" {
			t.Errorf("suite %s has no doc", s.Name)
		}
	}
}

func TestBaselineIsAboutTenMinutes(t *testing.T) {
	b, _ := bench.SuiteByName("baseline")
	var total time.Duration
	for _, it := range b.Items {
		total += it.Budget
	}
	if total < 8*time.Minute || total > 15*time.Minute {
		t.Errorf("baseline budgets add up to %s", total)
	}
}

// Every row of seed 004's table that perflab measures names a probe of the
// baseline suite (or its fallback), and each of its metric patterns
// matches a metric that probe declares with the suite's parameters; rank
// follows the table's order.
func TestBaselineRowsMatchSuite(t *testing.T) {
	cat := bench.NewCatalog(append(builtin.All(), tools.All()...)...)
	b, _ := bench.SuiteByName("baseline")
	items := map[string]bench.SuiteItem{}
	for _, it := range b.Items {
		items[it.Probe] = it
		if it.Fallback != "" {
			items[it.Fallback] = it
		}
	}
	prev := -1
	for i, r := range b.Rows {
		if r.Probe == "" {
			if r.Note == "" {
				t.Errorf("row %q measures nothing and does not say why", r.Seed)
			}
			continue
		}
		it, ok := items[r.Probe]
		if !ok {
			t.Errorf("row %q: probe %s is not in the baseline suite", r.Seed, r.Probe)
			continue
		}
		p, ok := cat.Probe(r.Probe)
		if !ok {
			t.Fatalf("row %q: no probe %s", r.Seed, r.Probe)
		}
		ms, err := p.Metrics(p.Defaults(it.Quick).Merge(it.Params))
		if err != nil {
			t.Fatalf("row %q: %v", r.Seed, err)
		}
		// A row's patterns may name its fallback's metrics too.
		if r.Fallback != "" {
			fb, _ := cat.Probe(r.Fallback)
			fms, err := fb.Metrics(fb.Defaults(it.Quick).Merge(it.FallbackParams))
			if err != nil {
				t.Fatalf("row %q fallback: %v", r.Seed, err)
			}
			ms = append(ms, fms...)
		}
		for _, pat := range r.Metrics {
			matched := false
			for _, m := range ms {
				rank, ok := b.RowRank(r.Probe, m.Name)
				if !ok && r.Fallback != "" {
					rank, ok = b.RowRank(r.Fallback, m.Name)
				}
				if ok && rank/1000 == i && (pat == m.Name || strings.HasSuffix(pat, "*") && strings.HasPrefix(m.Name, strings.TrimSuffix(pat, "*"))) {
					matched = true
					if rank < prev {
						t.Errorf("row %q metric %s ranks %d, before the previous row's %d", r.Seed, m.Name, rank, prev)
					}
				}
			}
			if !matched {
				t.Errorf("row %q: pattern %q matches no metric of %s", r.Seed, pat, r.Probe)
			}
		}
		prev = i * 1000
		if r.NeedsPeer != it.NeedsPeer {
			t.Errorf("row %q and its suite entry disagree on needing a second host", r.Seed)
		}
	}
	// Within a row the listed metrics come first, in the table's order.
	a, _ := bench.RowRank("baseline", "memory.stream", "copy.t1")
	z, _ := bench.RowRank("baseline", "memory.stream", "triad.t1")
	rest, _ := bench.RowRank("baseline", "memory.stream", "triad.t2")
	if !(a < z && z < rest) {
		t.Errorf("stream ranks copy %d, triad %d, triad.t2 %d", a, z, rest)
	}
	if _, ok := bench.RowRank("quick", "memory.stream", "copy.t1"); ok {
		t.Error("quick has no reference table")
	}
	if n := bench.PeerNote(b); !strings.Contains(n, "iperf3") || !strings.Contains(n, "second host") {
		t.Errorf("peer note %q", n)
	}
}

// --concurrency reaches the server probes of a suite and nothing else.
func TestSetWhereKnownConcurrency(t *testing.T) {
	cat := bench.NewCatalog(append(builtin.All(), tools.All()...)...)
	plan, err := cat.Resolve([]string{"probe:cpu", "probe:etcd"}, nil)
	if err != nil {
		testenv.Unavailable(t, "etcd not installed: %v", err)
	}
	if n := plan.SetWhereKnown("concurrency", "1,20,100"); n != 1 {
		t.Errorf("set on %d probes, want 1 (etcd)", n)
	}
	for _, it := range plan.Items {
		_, has := it.Params["concurrency"]
		if has != (it.Probe.Name() == "etcd") {
			t.Errorf("%s: concurrency set = %v", it.Probe.Name(), has)
		}
	}
	if err := bench.Validate(plan.Items, bench.Options{}); err != nil {
		t.Errorf("validate: %v", err)
	}
	plan, _ = cat.Resolve([]string{"probe:cpu"}, nil)
	if n := plan.SetWhereKnown("concurrency", "1"); n != 0 {
		t.Errorf("cpu has no concurrency, set on %d", n)
	}
}
