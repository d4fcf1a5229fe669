package factpath

import (
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/fixture/fixturesnap"
	"github.com/perflab/perflab/internal/snapshot"
)

func TestCheck(t *testing.T) {
	for _, p := range []string{
		"memory.thp.enabled", "memory.thp", "net.interfaces[eth0.100].mtu", "net.interfaces[*].rx_queues[rx-0].rps_cpus",
		"sysctl.net.core.somaxconn", "sysctl.kernel.sched_*", "kernel.params.intel_idle.max_cstate", "services.irqbalance.pids",
		"cpu.governors.performance", "load.psi.cpu.avg10", "irqs[*].effective_affinity", "process.*",
		"monitor.psi_cpu_pct", "run[sysbench.cpu].params.threads", "hostnoise.lost_pct", "cpu.numa[1].mem_total_kib",
	} {
		if err := Check(p); err != nil {
			t.Errorf("Check(%q) = %v, want ok", p, err)
		}
	}
	for p, want := range map[string]string{
		"memory.thp.enable":          `no field "enable"`,
		"net.interfaces.eth0.mtu":    "net.interfaces[key]",
		"host.containr":              `no field "containr"`,
		"cpu.online.x":               "list of values",
		"memory.total_kib.x":         "a value",
		"monitor.psi_cpu":            `no field "psi_cpu"`,
		"run[*].command":             `no field "command"`,
		"sysctl[net.core.somaxconn]": "is a map",
		"net.interfaces[*].queues":   `no field "queues"`,
		"kernel.paramz.mitigations":  `no field "paramz"`,
		"services.irqbalance.pidz":   `no field "pidz"`,
		"load.psi.cpu.avg5":          `no field "avg5"`,
		"block[sda].read_ahead_kb":   `no field "read_ahead_kb"`,
		"unavailable.x.y":            "",
	} {
		err := Check(p)
		if want == "" {
			if err != nil {
				t.Errorf("Check(%q) = %v, want ok", p, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Check(%q) = %v, want an error with %q", p, err, want)
		}
	}
}

// Every key a collector records in Unavailable, on every fixture tree
// (new trees under testdata/roots are covered automatically), names a
// fact of the catalogue.
func TestUnavailableKeysOnFixtures(t *testing.T) {
	n := 0
	for name, s := range fixtureSnapshots(t) {
		for k := range s.Unavailable {
			n++
			if err := CheckUnavailable(k); err != nil {
				t.Errorf("%s: unavailable key %q: %v", name, k, err)
			}
		}
	}
	if n == 0 {
		t.Error("no fixture tree has an unavailable fact: the test checks nothing")
	}
}

func TestEveryPathHasAKind(t *testing.T) {
	paths := Paths()
	if len(paths) < 200 {
		t.Fatalf("only %d catalogue paths", len(paths))
	}
	for _, p := range paths {
		if k, ok := KindOf(p); !ok || k == "" {
			t.Errorf("%s has no kind", p)
		}
		if err := Check(p); err != nil {
			t.Errorf("catalogue path %s does not check: %v", p, err)
		}
	}
	// Every kind pattern names a fact (a typo there would classify nothing).
	for _, r := range kinds {
		if err := Check(r.pattern); err != nil {
			t.Errorf("kind pattern %q: %v", r.pattern, err)
		}
	}
}

func TestKindOf(t *testing.T) {
	for p, want := range map[string]Kind{
		"memory.thp.enabled":                         Setting,
		"sysctl.net.core.somaxconn":                  Setting,
		"sysctl.kernel.random.boot_id":               State,
		"kernel.params.mitigations":                  Setting,
		"cpu.governors.powersave":                    Setting,
		"cpu.model":                                  Identity,
		"cpu.microcode":                              Identity,
		"kernel.release":                             Identity,
		"host.virtualization":                        Identity,
		"memory.total_kib":                           State,
		"cpu.numa[0].mem_total_kib":                  State,
		"memory.dirty_kib":                           State,
		"load.loadavg1":                              State,
		"mounts[/run/netns]":                         State,
		"mounts[/run/netns].options":                 State,
		"mounts[/].options":                          Setting,
		"mounts[/data].fs_type":                      Setting,
		"mounts[/runx].options":                      Setting,
		"irqs[24].affinity":                          Setting,
		"irqs[24].total":                             State,
		"net.interfaces[eth0].rx_queues[rx-0]":       Setting,
		"net.interfaces[eth0].channels.combined":     Setting,
		"net.interfaces[eth0].channels.max_combined": Identity,
		"net.interfaces[eth0].driver":                Identity,
		"cgroup.cpu_quota_us":                        Setting,
		"cgroup.nr_throttled":                        State,
		"services.irqbalance.running":                Setting,
		"services.irqbalance.pids":                   State,
		"monitor.steal_pct":                          State,
		"run[sysbench.cpu].params.threads":           Setting,
		"hostnoise.lost_pct":                         State,
		"taken_at":                                   Meta,
	} {
		if got, ok := KindOf(p); !ok || got != want {
			t.Errorf("KindOf(%q) = %q, %v; want %q", p, got, ok, want)
		}
	}
	if _, ok := KindOf("nosuch.fact"); ok {
		t.Error("a path outside the catalogue has a kind")
	}
}

func TestSegmentsAndMatch(t *testing.T) {
	if got := strings.Join(Segments("net.interfaces[eth0.100].rx_queues[rx-0].rps_cpus"), "|"); got != "net|interfaces|[*]|rx_queues|[*]|rps_cpus" {
		t.Errorf("Segments = %s", got)
	}
	for _, c := range []struct {
		pattern, path string
		want          bool
	}{
		{"memory.thp", "memory.thp.enabled", true},
		{"memory.thp", "memory.thpx", false},
		{"sysctl.kernel.sched_*", "sysctl.kernel.sched_autogroup_enabled", true},
		{"sysctl.kernel.sched_*", "sysctl.kernel.shmmax", false},
		{"net.interfaces[*].mtu", "net.interfaces[eth0].mtu", true},
		{"services.*.pids", "services.irqbalance.running", false},
	} {
		if got := Match(c.pattern, c.path); got != c.want {
			t.Errorf("Match(%q, %q) = %v", c.pattern, c.path, got)
		}
	}
}

var fixtureCache map[string]*snapshot.Snapshot

// fixtureSnapshots collects every tree under testdata/roots once.
func fixtureSnapshots(t *testing.T) map[string]*snapshot.Snapshot {
	t.Helper()
	if fixtureCache == nil {
		fixtureCache = fixturesnap.All(t)
	}
	return fixtureCache
}
