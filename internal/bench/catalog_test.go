package bench

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/clierr"
	"github.com/perflab/perflab/internal/probe"
	"github.com/perflab/perflab/internal/run"
)

// paramProbe is a fake with named parameters and quick defaults.
type paramProbe struct {
	fake
	defaults, quick probe.Params
	avail           error
}

func (p *paramProbe) Defaults(q bool) probe.Params {
	if q {
		return p.defaults.Merge(p.quick)
	}
	return p.defaults.Merge(nil)
}

func (p *paramProbe) Metrics(ps probe.Params) ([]run.Metric, error) {
	for k := range ps {
		if _, ok := p.defaults[k]; !ok {
			return nil, errors.New("unknown parameter " + k)
		}
	}
	return oneMetric, nil
}

type toolProbe struct {
	paramProbe
}

func (t *toolProbe) Available() error { return t.avail }

func np(name string, defaults, quick probe.Params) *paramProbe {
	return &paramProbe{fake: fake{name: name, metrics: oneMetric}, defaults: defaults, quick: quick}
}

func testCatalog() *Catalog {
	return NewCatalog(
		np("cpu", probe.Params{"threads": "1,2", "duration": "500ms"}, probe.Params{"duration": "200ms"}),
		np("disk", probe.Params{"size": "256MiB", "duration": "300ms"}, probe.Params{"size": "64MiB"}),
		np("memory.latency", probe.Params{"max": "512MiB"}, nil),
		np("cpu", probe.Params{"dup": "ignored"}, nil),
	)
}

func names(items []Item) string {
	var s []string
	for _, it := range items {
		s = append(s, it.Probe.Name())
	}
	return strings.Join(s, ",")
}

// "disk" is both a builtin suite and a probe: bare, the suite wins; a
// qualifier picks either.
func TestResolveQualifiedNames(t *testing.T) {
	c := testCatalog()
	for _, tc := range []struct {
		name, items, suite string
	}{
		{"probe:disk", "disk", ""},
		{"suite:disk", "disk", "disk"},
		{"disk", "disk", "disk"},
		{" probe:disk\n", "disk", ""}, // a shell variable's newline
		{"disk\t", "disk", "disk"},
	} {
		plan, err := c.Resolve([]string{tc.name}, nil)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if names(plan.Items) != tc.items || plan.Suite != tc.suite {
			t.Errorf("%s: items %s suite %q, want %s suite %q", tc.name, names(plan.Items), plan.Suite, tc.items, tc.suite)
		}
		if tc.name == "probe:disk" && len(plan.Notes) != 0 {
			t.Errorf("probe:disk ran the suite: notes %v", plan.Notes)
		}
	}
}

func TestResolveProbesAndParams(t *testing.T) {
	c := testCatalog()
	if len(c.Probes()) != 3 {
		t.Fatalf("duplicate name not ignored: %d probes", len(c.Probes()))
	}
	plan, err := c.Resolve([]string{"memory.latency", "disk"}, []string{"duration=1s", "disk:size=1GiB", "max=64MiB"})
	if err != nil {
		t.Fatal(err)
	}
	if names(plan.Items) != "memory.latency,disk" || plan.Suite != "" {
		t.Fatalf("items %s suite %q", names(plan.Items), plan.Suite)
	}
	lat, disk := plan.Items[0].Params, plan.Items[1].Params
	if lat["max"] != "64MiB" || lat["duration"] != "" {
		t.Errorf("memory.latency params %v: global duration must only go to probes that have it", lat)
	}
	if disk["size"] != "1GiB" || disk["duration"] != "1s" {
		t.Errorf("disk params %v", disk)
	}

	for _, c2 := range []struct {
		names, params []string
		want          string
	}{
		{[]string{"nope"}, nil, `unknown suite or probe "nope"`},
		{[]string{"memory.latncy"}, nil, "memory.latency?"},
		{nil, nil, "name a suite or probe"},
		{[]string{"disk"}, []string{"bogus=1"}, "Params bogus is a parameter of none of the selected probes"},
		{[]string{"disk"}, []string{"cpu:threads=1"}, "Params cpu:… names a probe that is not being run"},
		{[]string{"disk"}, []string{"noequals"}, `Params "noequals" is not key=value`},
		{[]string{"suite:memory.latency"}, nil, `unknown suite "memory.latency" (memory.latency is a probe: run it as probe:memory.latency)`},
		{[]string{"suite:nope"}, nil, `unknown suite "nope" (see 'perflab bench list' for suites)`},
		{[]string{"tool:disk"}, nil, "only probe: and suite: qualify a name"},
		{[]string{"probe:nope"}, nil, `unknown suite or probe "nope"`},
		{[]string{"probe:"}, nil, "no probe name after the colon"},
		{[]string{"suite:"}, nil, "no suite name after the colon"},
		{[]string{""}, nil, "empty suite or probe name"},
		{[]string{"  "}, nil, "empty suite or probe name"},
		{[]string{":"}, nil, "only probe: and suite: qualify a name"},
		{[]string{"PROBE:cpu"}, nil, "did you mean probe:cpu?"},
		{[]string{"Suite:disk"}, nil, "did you mean suite:disk?"},
		{[]string{"probe:probe:cpu"}, nil, "qualify a name once"},
		{[]string{"suite:probe:cpu"}, nil, "qualify a name once"},
		{[]string{"cpu disk"}, nil, "names have no spaces"},
		{[]string{"probe: cpu"}, nil, "names have no spaces"},
		{[]string{"cpuu"}, nil, "did you mean cpu?"},
	} {
		_, err := c.Resolve(c2.names, c2.params)
		var oe *OptionError
		if errors.As(err, &oe) {
			// A bad parameter names the Params field; cli words it as --param.
			if !strings.Contains(err.Error(), c2.want) {
				t.Errorf("Resolve(%v, %v): %v, want %q", c2.names, c2.params, err, c2.want)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c2.want) || clierr.Code(err) != clierr.Usage {
			t.Errorf("Resolve(%v, %v): %v, want usage error with %q", c2.names, c2.params, err, c2.want)
		}
	}
}

func TestResolveSuiteWithFallbacks(t *testing.T) {
	saved := Suites
	defer func() { Suites = saved }()
	sysbench := &toolProbe{paramProbe: *np("sysbench.cpu", probe.Params{"threads": "1"}, nil)}
	sysbench.avail = errors.New("sysbench not installed")
	fio := &toolProbe{paramProbe: *np("fio.disk", probe.Params{"bs": "4k"}, nil)}
	Suites = []Suite{{Name: "s", Items: []SuiteItem{
		{Probe: "sysbench.cpu", Fallback: "cpu", FallbackParams: probe.Params{"threads": "4"}, Quick: true, Budget: 7 * time.Second, MaxRuns: 9, Measures: "cpu"},
		{Probe: "fio.disk", Fallback: "disk", Params: probe.Params{"bs": "64k"}, Measures: "disk"},
		{Probe: "wrk.nginx", Measures: "nginx qps"},
		{Probe: "redis.bench", Fallback: "nope", Measures: "redis"},
	}}}
	c := NewCatalog(append(testCatalog().Probes(), sysbench, fio)...)
	plan, err := c.Resolve([]string{"s"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if names(plan.Items) != "cpu,fio.disk" || plan.Suite != "s" {
		t.Fatalf("items %s suite %q", names(plan.Items), plan.Suite)
	}
	cpu := plan.Items[0]
	if cpu.Params["threads"] != "4" || cpu.Params["duration"] != "200ms" || cpu.Budget != 7*time.Second || cpu.MaxRuns != 9 {
		t.Errorf("fallback item %+v: want fallback params over quick defaults and the entry's limits", cpu)
	}
	if len(cpu.Notes) != 1 || !strings.Contains(cpu.Notes[0], "builtin probe cpu used instead of sysbench.cpu: sysbench not installed") {
		t.Errorf("fallback note %v", cpu.Notes)
	}
	if plan.Items[1].Params["bs"] != "64k" || len(plan.Items[1].Notes) != 0 {
		t.Errorf("available tool item %+v", plan.Items[1])
	}
	notes := strings.Join(plan.Notes, "\n")
	for _, want := range []string{"skipped wrk.nginx (nginx qps): no wrk.nginx probe in this build", "no nope probe either", "sysbench not installed"} {
		if !strings.Contains(notes, want) {
			t.Errorf("plan notes lack %q:\n%s", want, notes)
		}
	}
	// A suite plus more: the runs do not claim to be that suite.
	plan, err = c.Resolve([]string{"s", "disk"}, nil)
	if err != nil || plan.Suite != "" {
		t.Errorf("suite plus a probe: suite %q err %v", plan.Suite, err)
	}
	plan, err = c.Resolve([]string{"s", "s"}, nil)
	if err != nil || plan.Suite != "" {
		t.Errorf("two suites: suite %q err %v", plan.Suite, err)
	}
	if names(plan.Items) != "cpu,fio.disk" {
		t.Errorf("a suite named twice ran its probes twice: %s", names(plan.Items))
	}

	// Named on its own, a probe whose tool is missing is refused before
	// anything runs, with the builtin probe that replaces it in suites.
	_, err = c.Resolve([]string{"probe:disk", "probe:sysbench.cpu"}, nil)
	if err == nil || clierr.Code(err) != clierr.Runtime ||
		!strings.Contains(err.Error(), "probe sysbench.cpu cannot run here: sysbench not installed") ||
		!strings.Contains(err.Error(), "or run the builtin probe cpu instead") {
		t.Errorf("unavailable tool probe: %v", err)
	}
	if _, err := c.Resolve([]string{"fio.disk"}, nil); err != nil {
		t.Errorf("available tool probe: %v", err)
	}
}

// A probe named twice with the same parameters, or named and also in a
// suite on the command line, runs once; with other parameters it runs
// again.
func TestResolveDropsRepeatedProbes(t *testing.T) {
	saved := Suites
	defer func() { Suites = saved }()
	Suites = []Suite{{Name: "s", Items: []SuiteItem{
		{Probe: "cpu", Measures: "cpu"},
		{Probe: "disk", Quick: true, Measures: "disk"},
	}}}
	c := testCatalog()
	for _, tc := range []struct {
		names, params []string
		items         string
		notes         int
	}{
		{[]string{"probe:cpu", "probe:cpu"}, nil, "cpu", 1},
		{[]string{"s", "cpu"}, nil, "cpu,disk", 1},       // the suite's cpu has the defaults
		{[]string{"s", "disk"}, nil, "cpu,disk,disk", 0}, // the suite's disk is the quick one
		{[]string{"s", "s"}, nil, "cpu,disk", 2},         // the second suite adds nothing
		{[]string{"cpu", "cpu"}, []string{"duration=1s"}, "cpu", 1},
	} {
		plan, err := c.Resolve(tc.names, tc.params)
		if err != nil {
			t.Fatalf("%v: %v", tc.names, err)
		}
		if names(plan.Items) != tc.items || len(plan.Notes) != tc.notes {
			t.Errorf("%v: items %s notes %q, want %s and %d notes", tc.names, names(plan.Items), plan.Notes, tc.items, tc.notes)
		}
	}
}
