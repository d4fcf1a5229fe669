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
