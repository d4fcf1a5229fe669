package knowledge

import (
	"slices"
	"testing"
)

func TestMatchPrefix(t *testing.T) {
	cases := []struct {
		pattern, path string
		want          bool
	}{
		{"memory.thp", "memory.thp.enabled", true},
		{"memory.thp", "memory.thpx", false},
		{"memory.thp.enabled", "memory.thp", false},
		{"net.interfaces[*].mtu", "net.interfaces[eth0].mtu", true},
		{"net.interfaces[*].rx_queues", "net.interfaces[eth0.100].rx_queues[rx-0].rps_cpus", true},
		{"services.*.pids", "services.irqbalance.pids", true},
		{"services.*.pids", "services.irqbalance.running", false},
		{"sysctl.vm", "sysctl.vm.swappiness", true},
		{"sysctl.vm", "sysctl.vmx", false},
		{"sysctl.kernel.sched_*", "sysctl.kernel.sched_autogroup_enabled", true},
		{"sysctl.kernel.sched_*", "sysctl.kernel.shmmax", false},
	}
	for _, c := range cases {
		if got := MatchPrefix(c.pattern, c.path); got != c.want {
			t.Errorf("MatchPrefix(%q, %q) = %v", c.pattern, c.path, got)
		}
	}
	if got := Normalize("a[x.y].b[1]"); got != "a[*].b[*]" {
		t.Errorf("Normalize = %q", got)
	}
}

func TestLookup(t *testing.T) {
	cases := map[string]string{
		"memory.thp.enabled":                            "thp",
		"cpu.governors":                                 "cpu-governor",
		"kernel.vulnerabilities.spectre_v2":             "mitigations",
		"kernel.params.mitigations":                     "mitigations",
		"kernel.clocksource":                            "clocksource",
		"net.interfaces[eth0].rx_queues[rx-0].rps_cpus": "nic-steering",
		"block[sda].scheduler":                          "io-scheduler",
		"block[sda].write_cache":                        "write-cache",
		"cpu.microcode":                                 "cpu-identity",
		"cgroup.cpu_quota_us":                           "cgroup-cpu",
		"sysctl.kernel.sched_migration_cost_ns":         "scheduler",
		"sysctl.kernel.numa_balancing":                  "numa",
		"monitor.steal_pct":                             "steal",
		"hostnoise.lost_pct":                            "host-noise",
	}
	for path, id := range cases {
		e := Lookup(path)
		if e == nil || e.ID != id {
			t.Errorf("Lookup(%q) = %v, want %s", path, e, id)
		}
	}
	if e := Lookup("host.hostname"); e != nil {
		t.Errorf("hostname is not a performance knob: %v", e.ID)
	}
}

// Every entry must be usable: an id, a mechanism, areas, a sane weight,
// and patterns that are not shadowed by another entry's identical one.
func TestBaseWellFormed(t *testing.T) {
	ids := map[string]bool{}
	patterns := map[string]string{}
	for _, e := range Base {
		if e.ID == "" || e.Why == "" || e.Title == "" || len(e.Areas) == 0 || e.Weight < 1 || e.Weight > 3 || len(e.Paths) == 0 {
			t.Errorf("incomplete entry %+v", e)
		}
		if ids[e.ID] {
			t.Errorf("duplicate id %s", e.ID)
		}
		ids[e.ID] = true
		for _, p := range e.Paths {
			if other, ok := patterns[p]; ok {
				t.Errorf("pattern %q in both %s and %s", p, other, e.ID)
			}
			patterns[p] = e.ID
			if got := Lookup(p); got == nil || got.ID != e.ID {
				t.Errorf("pattern %q of %s resolves to %v", p, e.ID, got)
			}
		}
	}
}

func TestAreasOf(t *testing.T) {
	cases := []struct {
		probe, metric, unit string
		want                Area
	}{
		{"sysbench.cpu", "events_per_sec.t1", "events/s", CPU},
		{"memory.latency", "latency.64KiB", "ns", Memory},
		{"iperf3.tcp", "throughput", "Gbit/s", Network},
		{"fio.randread", "iops", "IOPS", Disk},
		{"syscall", "getpid", "ns", Syscall},
		{"clock", "clock_gettime", "ns", Timer},
		{"go:example.com/x", "BenchmarkFoo-8", "sec/op", CPU},
		{"mystery", "x", "things", CPU},
	}
	for _, c := range cases {
		got := AreasOf(c.probe, c.metric, c.unit)
		if !slices.Contains(got, c.want) {
			t.Errorf("AreasOf(%q,%q,%q) = %v, want %s", c.probe, c.metric, c.unit, got, c.want)
		}
	}
	if !Affects([]Area{All}, []Area{Disk}) || Affects([]Area{Network}, []Area{CPU}) || !Affects([]Area{Memory, Disk}, []Area{Disk}) {
		t.Error("Affects")
	}
}
