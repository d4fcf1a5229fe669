package audit

import (
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/fixture"
	"github.com/perflab/perflab/internal/snapshot"
)

// metal's eth0: i40e on NUMA node 1 (CPUs 4-7), 8 rx/tx queues, rps_cpus 00
// everywhere, xps_cpus one CPU per queue, IRQs 101-108 pinned to node 0,
// irqbalance running; nf_conntrack 241877 of 262144 entries. kvm's eth0:
// virtio_net with one queue pair on a 2-CPU single-node guest.

const netDir = "/sys/class/net/eth0/queues/"

// metalTwoQueues leaves eth0 with rx-0/1 and tx-0/1 only.
func metalTwoQueues() map[string]string {
	m := map[string]string{}
	for i := 2; i < 8; i++ {
		m[netDir+"rx-"+itoa(i)] = fixture.Delete
		m[netDir+"tx-"+itoa(i)] = fixture.Delete
	}
	return m
}

// eachTxXPS sets xps_cpus of metal's eight tx queues.
func eachTxXPS(v string) map[string]string {
	m := map[string]string{}
	for i := 0; i < 8; i++ {
		m[netDir+"tx-"+itoa(i)+"/xps_cpus"] = v
	}
	return m
}

// sysctlRuleCases covers a rule that judges one sysctl: pass and fail by
// editing the /proc/sys file, na by removing it (a kernel without the knob).
func sysctlRuleCases(rule, name, workload, good, bad, wantFix string) []ruleCase {
	path := SysctlPath(name)
	return []ruleCase{
		{Rule: rule, Name: name + "=" + good, Tree: "metal", Workload: workload, Want: Pass,
			Edits: map[string]string{path: good + "\n"}},
		{Rule: rule, Name: name + "=" + bad, Tree: "metal", Workload: workload, Want: Fail,
			Edits: map[string]string{path: bad + "\n"},
			Check: all(observedContains(strings.Fields(bad)[0]), wantChange(name, wantFix), wantCurrent(name, bad))},
		{Rule: rule, Name: "kernel without " + name, Tree: "metal", Workload: workload, Want: NA,
			Edits: map[string]string{path: fixture.Delete}},
	}
}

// wantCurrent asserts the change to target records the value to restore.
func wantCurrent(target, current string) func(*testing.T, Finding) {
	return func(t *testing.T, f Finding) {
		t.Helper()
		for _, c := range f.Changes {
			if c.Target == target {
				if normalizeSpace(c.Current) != normalizeSpace(current) {
					t.Errorf("change %s current %q, want %q", target, c.Current, current)
				}
				return
			}
		}
		t.Errorf("no change to %s in %+v", target, f.Changes)
	}
}

// reasonContains asserts a substring of the reason.
func reasonContains(sub string) func(*testing.T, Finding) {
	return func(t *testing.T, f Finding) {
		t.Helper()
		if !strings.Contains(f.Reason, sub) {
			t.Errorf("reason %q does not contain %q", f.Reason, sub)
		}
	}
}

// changeCount asserts how many changes a finding proposes.
func changeCount(n int) func(*testing.T, Finding) {
	return func(t *testing.T, f Finding) {
		t.Helper()
		if len(f.Changes) != n {
			t.Errorf("%d changes, want %d: %+v", len(f.Changes), n, f.Changes)
		}
	}
}

func init() {
	addRuleCases(
		// NET-NIC-QUEUES
		ruleCase{Rule: "NET-NIC-QUEUES", Name: "8 queues for 4 node-1 CPUs", Tree: "metal", Want: Pass,
			Check: observedContains("for 4 CPUs on NUMA node 1")},
		ruleCase{Rule: "NET-NIC-QUEUES", Name: "2 queues for 4 node-1 CPUs", Tree: "metal", Want: Fail,
			Edits: metalTwoQueues(),
			Check: all(wantChange("eth0", "4"), wantCurrent("eth0", "2"), changeCount(1),
				// ethtool data needs the live host, so the maximum is unknown.
				wantSeverity(Low), reasonContains("ethtool -l"),
				func(t *testing.T, f Finding) {
					if f.Fix != "ethtool -L eth0 combined 4" || f.Revert != "ethtool -L eth0 combined 2" {
						t.Errorf("fix %q revert %q", f.Fix, f.Revert)
					}
				})},
		ruleCase{Rule: "NET-NIC-QUEUES", Name: "one queue for 2 vCPUs", Tree: "kvm", Want: Fail,
			Check: wantChange("eth0", "2")},
		ruleCase{Rule: "NET-NIC-QUEUES", Name: "eth0 down", Tree: "metal", Want: NA,
			Edits: map[string]string{"/sys/class/net/eth0/operstate": "down\n"}},
		ruleCase{Rule: "NET-NIC-QUEUES", Name: "no /sys/class/net", Tree: "kunpeng", Want: NA},

		// NET-RPS
		ruleCase{Rule: "NET-RPS", Name: "RSS covers node 1", Tree: "metal", Want: Pass},
		ruleCase{Rule: "NET-RPS", Name: "2 rx queues, RPS unset", Tree: "metal", Want: Fail,
			Edits: metalTwoQueues(),
			Check: all(changeCount(2), wantChange(netDir+"rx-1/rps_cpus", "000000f0"), wantCurrent(netDir+"rx-0/rps_cpus", "00"),
				func(t *testing.T, f Finding) {
					fix := "echo 000000f0 > " + netDir + "rx-0/rps_cpus\necho 000000f0 > " + netDir + "rx-1/rps_cpus"
					revert := "echo 00 > " + netDir + "rx-0/rps_cpus\necho 00 > " + netDir + "rx-1/rps_cpus"
					if f.Fix != fix || f.Revert != revert {
						t.Errorf("fix %q revert %q", f.Fix, f.Revert)
					}
				})},
		ruleCase{Rule: "NET-RPS", Name: "2 rx queues, RPS on node 1", Tree: "metal", Want: Pass,
			Edits: edits(metalTwoQueues(), map[string]string{netDir + "rx-0/rps_cpus": "f0\n", netDir + "rx-1/rps_cpus": "f0\n"})},
		ruleCase{Rule: "NET-RPS", Name: "virtio single queue", Tree: "kvm", Want: Fail,
			Check: wantChange(netDir+"rx-0/rps_cpus", "00000003")},
		ruleCase{Rule: "NET-RPS", Name: "no /sys/class/net", Tree: "kunpeng", Want: NA},

		// NET-XPS
		ruleCase{Rule: "NET-XPS", Name: "one CPU per queue", Tree: "metal", Want: Pass},
		ruleCase{Rule: "NET-XPS", Name: "XPS unset", Tree: "metal", Want: Fail,
			Edits: eachTxXPS("00\n"),
			Check: all(changeCount(8), wantChange(netDir+"tx-0/xps_cpus", "00000001"),
				wantChange(netDir+"tx-7/xps_cpus", "00000080"), wantCurrent(netDir+"tx-3/xps_cpus", "00"))},
		ruleCase{Rule: "NET-XPS", Name: "single tx queue", Tree: "kvm", Want: Pass},
		ruleCase{Rule: "NET-XPS", Name: "no /sys/class/net", Tree: "kunpeng", Want: NA},

		// NET-CONNTRACK
		// Defect 7: procfs's tree has no module list and no /proc/sys/net:
		// nothing shows nf_conntrack is unloaded, so it is not a pass.
		ruleCase{Rule: "NET-CONNTRACK", Name: "no evidence on the procfs tree", Tree: "procfs", Want: NA,
			Check: reasonContains("net.conntrack.loaded unavailable: no evidence either way")},
		ruleCase{Rule: "NET-CONNTRACK", Name: "module list without nf_conntrack", Tree: "procfs", Want: Pass,
			Edits: map[string]string{"/proc/modules": "ext4 1 0 - Live 0x0\n"}, Check: observedContains("nf_conntrack not loaded")},
		ruleCase{Rule: "NET-CONNTRACK", Name: "node_exporter tree 123 of 65536", Tree: "node_exporter", Want: Pass,
			Check: observedContains("123 of 65536 entries")},
		// node_exporter's tree copied only a few sysctls: an absent one is
		// absent from the tree, not from the kernel.
		ruleCase{Rule: "NET-SOMAXCONN", Name: "sysctl not captured in node_exporter's tree", Tree: "node_exporter", Want: NA,
			Check: reasonContains("net.core.somaxconn is not in the captured tree (/proc/sys/net/core/somaxconn)")},
		ruleCase{Rule: "NET-CONNTRACK", Name: "table 92% full", Tree: "metal", Want: Fail,
			Check: all(wantSeverity(High), observedContains("92.3 %"),
				wantChange("net.netfilter.nf_conntrack_max", "1048576"), wantCurrent("net.netfilter.nf_conntrack_max", "262144"))},
		ruleCase{Rule: "NET-CONNTRACK", Name: "room in the table", Tree: "metal", Want: Pass,
			Edits: map[string]string{"/proc/sys/net/netfilter/nf_conntrack_count": "1000\n"}},
		ruleCase{Rule: "NET-CONNTRACK", Name: "loaded on a web host", Tree: "metal", Workload: "web", Want: Fail,
			Edits: map[string]string{"/proc/sys/net/netfilter/nf_conntrack_count": "1000\n"},
			Check: all(wantSeverity(Low), observedContains("3 netfilter modules"))},
		ruleCase{Rule: "NET-CONNTRACK", Name: "60% full on a container host", Tree: "metal", Workload: "container-host", Want: Fail,
			Edits: map[string]string{"/proc/sys/net/netfilter/nf_conntrack_count": "170000\n"},
			Check: wantChange("net.netfilter.nf_conntrack_max", "1048576")},
		ruleCase{Rule: "NET-CONNTRACK", Name: "not loaded", Tree: "metal", Workload: "web", Want: Pass,
			Edits: map[string]string{
				"/proc/sys/net/netfilter": fixture.Delete,
				"/proc/modules":           "coretemp 20480 0 - Live 0x0000000000000000\n",
			}},
		ruleCase{Rule: "NET-CONNTRACK", Name: "count unreadable", Tree: "metal", Want: NA,
			Edits: map[string]string{"/proc/sys/net/netfilter/nf_conntrack_count": fixture.Delete}},

		// NET-BUSY-POLL
		ruleCase{Rule: "NET-BUSY-POLL", Name: "off for latency", Tree: "metal", Workload: "latency", Want: Fail,
			Check: all(changeCount(2), wantChange("net.core.busy_poll", "50"), wantChange("net.core.busy_read", "50"))},
		ruleCase{Rule: "NET-BUSY-POLL", Name: "50 us", Tree: "metal", Workload: "latency", Want: Pass,
			Edits: map[string]string{"/proc/sys/net/core/busy_poll": "50\n", "/proc/sys/net/core/busy_read": "50\n"}},
		ruleCase{Rule: "NET-BUSY-POLL", Name: "general workload", Tree: "metal", Want: NA},

		// NET-LOCAL-PORT-RANGE
		ruleCase{Rule: "NET-LOCAL-PORT-RANGE", Name: "default 28232 ports", Tree: "metal", Workload: "web", Want: Fail,
			Check: all(observedContains("28232 ports"), wantChange("net.ipv4.ip_local_port_range", "1024 65535"),
				wantCurrent("net.ipv4.ip_local_port_range", "32768 60999"),
				func(t *testing.T, f Finding) {
					if !strings.Contains(f.Fix, "'1024 65535'") || !strings.Contains(f.Revert, "'32768 60999'") {
						t.Errorf("range not quoted for the shell: fix %q revert %q", f.Fix, f.Revert)
					}
				})},
		ruleCase{Rule: "NET-LOCAL-PORT-RANGE", Name: "1024-65535", Tree: "metal", Workload: "web", Want: Pass,
			Edits: map[string]string{"/proc/sys/net/ipv4/ip_local_port_range": "1024\t65535\n"}},
		ruleCase{Rule: "NET-LOCAL-PORT-RANGE", Name: "as wide, shifted", Tree: "metal", Workload: "web", Want: Pass,
			Edits: map[string]string{"/proc/sys/net/ipv4/ip_local_port_range": "1000\t65511\n"}},
		ruleCase{Rule: "NET-LOCAL-PORT-RANGE", Name: "general workload", Tree: "metal", Want: NA},

		// NET-TCP-RMEM / NET-TCP-WMEM: each field is a minimum.
		ruleCase{Rule: "NET-TCP-RMEM", Name: "32 MiB max beats seed 002's 16 MiB", Tree: "metal", Workload: "web", Want: Pass},
		ruleCase{Rule: "NET-TCP-RMEM", Name: "6 MiB max for web", Tree: "metal", Workload: "web", Want: Fail,
			Edits: map[string]string{"/proc/sys/net/ipv4/tcp_rmem": "4096\t131072\t6291456\n"},
			// The default stays 131072: tuning never shrinks a field.
			Check: all(wantChange("net.ipv4.tcp_rmem", "4096 131072 16777216"), wantCurrent("net.ipv4.tcp_rmem", "4096 131072 6291456"))},
		ruleCase{Rule: "NET-TCP-RMEM", Name: "kernel without tcp_rmem", Tree: "metal", Want: NA,
			Edits: map[string]string{"/proc/sys/net/ipv4/tcp_rmem": fixture.Delete}},
		ruleCase{Rule: "NET-TCP-WMEM", Name: "Linux default for general", Tree: "metal", Want: Pass},
		ruleCase{Rule: "NET-TCP-WMEM", Name: "Linux default for web", Tree: "metal", Workload: "web", Want: Fail,
			Check: wantChange("net.ipv4.tcp_wmem", "4096 65536 16777216")},
		ruleCase{Rule: "NET-TCP-WMEM", Name: "kernel without tcp_wmem", Tree: "metal", Want: NA,
			Edits: map[string]string{"/proc/sys/net/ipv4/tcp_wmem": fixture.Delete}},
	)
	addRuleCases(sysctlRuleCases("NET-TCP-TW-REUSE", "net.ipv4.tcp_tw_reuse", "web", "1", "2", "1")...)
	addRuleCases(sysctlRuleCases("NET-TCP-FIN-TIMEOUT", "net.ipv4.tcp_fin_timeout", "web", "15", "60", "15")...)
	addRuleCases(sysctlRuleCases("NET-TCP-FASTOPEN", "net.ipv4.tcp_fastopen", "web", "3", "1", "3")...)
	addRuleCases(sysctlRuleCases("NET-TCP-SYNCOOKIES", "net.ipv4.tcp_syncookies", "web", "1", "0", "1")...)
	addRuleCases(sysctlRuleCases("NET-TCP-MAX-SYN-BACKLOG", "net.ipv4.tcp_max_syn_backlog", "kv", "65536", "2048", "65536")...)
	addRuleCases(sysctlRuleCases("NET-TCP-WINDOW-SCALING", "net.ipv4.tcp_window_scaling", "", "1", "0", "1")...)
	addRuleCases(sysctlRuleCases("NET-SOMAXCONN", "net.core.somaxconn", "kv", "65535", "4096", "65535")...)
	addRuleCases(sysctlRuleCases("NET-NETDEV-MAX-BACKLOG", "net.core.netdev_max_backlog", "throughput", "16384", "1000", "16384")...)
}

// twoNodeSnapshot is a hand-built 8-CPU, 2-node host for the cases fixture
// trees do not have: NICs with channel data (live-only), separate rx/tx
// channels, partial masks.
func twoNodeSnapshot() *snapshot.Snapshot {
	return &snapshot.Snapshot{
		CPU: snapshot.CPU{Online: []int{0, 1, 2, 3, 4, 5, 6, 7}, Possible: 8, NUMA: []snapshot.NUMANode{
			{ID: 0, CPUs: []int{0, 1, 2, 3}}, {ID: 1, CPUs: []int{4, 5, 6, 7}},
		}},
		Net: snapshot.Net{Interfaces: []snapshot.NIC{{
			Name: "eth0", OperState: "up", NUMANode: 1,
			RxQueues: []snapshot.Queue{{Name: "rx-0", RPS: "00"}, {Name: "rx-1", RPS: "00"}},
			TxQueues: []snapshot.Queue{{Name: "tx-0", XPS: "00"}, {Name: "tx-1", XPS: "00"}, {Name: "tx-2", XPS: "00"}},
			Channels: &snapshot.Channels{MaxCombined: 3, Combined: 2},
		}}},
		Sysctl:      map[string]string{},
		Services:    map[string]snapshot.Service{},
		Unavailable: map[string]string{},
	}
}

func evalOn(t *testing.T, id, workload string, s *snapshot.Snapshot) Finding {
	t.Helper()
	r, ok := Lookup(id)
	if !ok {
		t.Fatalf("no rule %s", id)
	}
	w, err := LookupWorkload(workload)
	if err != nil {
		t.Fatal(err)
	}
	f := Evaluate(r, &Context{S: s, W: w})
	checkFindingShape(t, f)
	return f
}

func TestNICQueuesHardwareMaximum(t *testing.T) {
	// 2 of at most 3 channels for 4 local CPUs: the fix stops at the NIC's
	// maximum, which is known, so the severity stays the rule's.
	s := twoNodeSnapshot()
	f := evalOn(t, "NET-NIC-QUEUES", "general", s)
	if f.Status != Fail || f.Fix != "ethtool -L eth0 combined 3" || f.Severity != Medium {
		t.Fatalf("got %s %s %q", f.Status, f.Severity, f.Fix)
	}
	s.Net.Interfaces[0].Channels.Combined = 3
	if f := evalOn(t, "NET-NIC-QUEUES", "general", s); f.Status != Pass {
		t.Errorf("at the hardware maximum: %s %s", f.Status, f.Observed)
	}
	// A driver with separate rx and tx channels cannot take "combined".
	s.Net.Interfaces[0].Channels = &snapshot.Channels{MaxRx: 8, MaxTx: 8, Rx: 1, Tx: 1}
	f = evalOn(t, "NET-NIC-QUEUES", "general", s)
	if f.Status != Fail || len(f.Changes) != 1 || f.Changes[0].Kind != KindCommand ||
		f.Fix != "ethtool -L eth0 rx 4 tx 4" || f.Revert != "ethtool -L eth0 rx 1 tx 1" {
		t.Errorf("separate channels: %s %+v fix %q revert %q", f.Status, f.Changes, f.Fix, f.Revert)
	}
}

func TestRPSIgnoresUnreadableMasks(t *testing.T) {
	s := twoNodeSnapshot()
	s.Net.Interfaces[0].RxQueues = []snapshot.Queue{{Name: "rx-0"}, {Name: "rx-1"}}
	if f := evalOn(t, "NET-RPS", "general", s); f.Status != NA {
		t.Errorf("rps_cpus unreadable: %s, want na", f.Status)
	}
	// One queue steered, one not: only the unset one is written.
	s.Net.Interfaces[0].RxQueues = []snapshot.Queue{{Name: "rx-0", RPS: "f0"}, {Name: "rx-1", RPS: "00"}}
	f := evalOn(t, "NET-RPS", "general", s)
	if f.Status != Fail || len(f.Changes) != 1 || !strings.HasSuffix(f.Changes[0].Target, "rx-1/rps_cpus") {
		t.Errorf("partial RPS: %s %+v", f.Status, f.Changes)
	}
}

func TestXPSRoundRobinCoversEveryCPUOnce(t *testing.T) {
	s := twoNodeSnapshot()
	f := evalOn(t, "NET-XPS", "general", s)
	if f.Status != Fail || len(f.Changes) != 3 {
		t.Fatalf("got %s %+v", f.Status, f.Changes)
	}
	want := []string{"00000049", "00000092", "00000024"} // {0,3,6} {1,4,7} {2,5}
	for i, c := range f.Changes {
		if c.Value != want[i] || c.Current != "00" {
			t.Errorf("tx-%d: %+v, want value %s", i, c, want[i])
		}
	}
}

func TestTCPBuffersCompareFieldByField(t *testing.T) {
	w, _ := LookupWorkload("web") // 4096 65536 16777216 for wmem
	for _, tc := range []struct {
		have, fix string
		want      Status
	}{
		{"4096\t65536\t16777216", "", Pass},
		{"8192 131072 33554432", "", Pass},
		{"4096 16384 33554432", "4096 65536 33554432", Fail},
		{"4096 65536", "", Error},
		{"a b c", "", Error},
	} {
		s := twoNodeSnapshot()
		s.Sysctl["net.ipv4.tcp_wmem"] = tc.have
		r := checkTCPBuffers(&Context{S: s, W: w}, "net.ipv4.tcp_wmem")
		if r.Status != tc.want {
			t.Errorf("%q: %s, want %s (%s)", tc.have, r.Status, tc.want, r.Reason)
			continue
		}
		if tc.fix != "" && (len(r.Changes) != 1 || r.Changes[0].Value != tc.fix) {
			t.Errorf("%q: changes %+v, want %q", tc.have, r.Changes, tc.fix)
		}
	}
}

func TestConntrackMaxLeavesHeadroom(t *testing.T) {
	e := ParseExpectation("<=80")
	for _, tc := range []struct{ count, max, want int64 }{
		{241877, 262144, 1048576}, // 92% → 23%
		{100, 1024, 65536},        // never below 64 Ki entries
		{30000, 65536, 131072},    // 45.8% → 22.9%
	} {
		got := conntrackMaxFor(tc.count, tc.max, e)
		if got != tc.want {
			t.Errorf("count %d max %d: %d, want %d", tc.count, tc.max, got, tc.want)
		}
		if float64(tc.count)*100/float64(got) > 40 {
			t.Errorf("count %d: new max %d leaves it over half the limit", tc.count, got)
		}
	}
}

func TestLocalPortRangeRejectsGarbage(t *testing.T) {
	s := twoNodeSnapshot()
	s.Sysctl["net.ipv4.ip_local_port_range"] = "60999 32768"
	if f := evalOn(t, "NET-LOCAL-PORT-RANGE", "web", s); f.Status != Error {
		t.Errorf("reversed range: %s", f.Status)
	}
}

// FuzzTCPBuffers feeds arbitrary sysctl text to the tcp_rmem/wmem check:
// it must never panic, and a fix must never lower a field it was given.
func FuzzTCPBuffers(f *testing.F) {
	for _, s := range []string{"4096\t131072\t6291456", "4096 87380 16777216", "1 2", "", "-1 -2 -3", "9223372036854775807 0 1"} {
		f.Add(s)
	}
	w, _ := LookupWorkload("web")
	f.Fuzz(func(t *testing.T, v string) {
		s := &snapshot.Snapshot{Sysctl: map[string]string{"net.ipv4.tcp_rmem": v}, Unavailable: map[string]string{}}
		r := checkTCPBuffers(&Context{S: s, W: w}, "net.ipv4.tcp_rmem")
		if r.Status != Fail {
			return
		}
		have, _ := parseInts(v)
		fix, ok := parseInts(r.Changes[0].Value)
		if !ok || len(fix) != 3 || len(have) != 3 {
			t.Fatalf("fix %q for %q", r.Changes[0].Value, v)
		}
		for i := range fix {
			if fix[i] < have[i] {
				t.Fatalf("fix %q lowers %q", r.Changes[0].Value, v)
			}
		}
	})
}

// FuzzPortRange: a parsed range is never empty or negative.
func FuzzPortRange(f *testing.F) {
	for _, s := range []string{"32768\t60999", "1024 65535", "5 4", "x y", "1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		if n, ok := portRange(v); ok && n < 1 {
			t.Fatalf("%q: %d ports", v, n)
		}
	})
}
