package audit

import (
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/snapshot"
)

// metal as a container: the collecting process's cgroup
// (/system.slice/app.service, v2) stands for the container's; eth0 is on
// node 1 (CPUs 4-7) and its queue IRQs 101-104 land on CPUs 0, 1, 2, 3.

func web1(hostSysctl map[string]string) *snapshot.Container {
	return &snapshot.Container{Runtime: "podman", ID: strings.Repeat("ab", 32), Name: "web1", PID: 4242, HostSysctl: hostSysctl}
}

func changeTo(target, value string) func(*testing.T, Finding) {
	return func(t *testing.T, f Finding) {
		t.Helper()
		for _, c := range f.Changes {
			if c.Target == target {
				if c.Value != value || c.Kind != KindFile {
					t.Errorf("%s: %s %q, want file %q", target, c.Kind, c.Value, value)
				}
				return
			}
		}
		t.Errorf("no change of %s in %+v", target, f.Changes)
	}
}

func init() {
	const cg = appCgroup
	addRuleCases(
		// CONTAINER-NETNS-SYSCTL: the host-vs-container table.
		ruleCase{Rule: "CONTAINER-NETNS-SYSCTL", Name: "somaxconn 128 inside, 4096 on the host", Tree: "metal", Want: Fail,
			Edits:     map[string]string{"/proc/sys/net/core/somaxconn": "128\n"},
			Container: web1(map[string]string{"net.core.somaxconn": "4096"}),
			Check:     all(observedContains("net.core.somaxconn: container 128, host 4096"), observedContains("host sysctls do not reach it"), fixContains("--container web1"))},
		ruleCase{Rule: "CONTAINER-NETNS-SYSCTL", Name: "nothing differs", Tree: "metal", Want: Pass, Container: web1(nil)},
		ruleCase{Rule: "CONTAINER-NETNS-SYSCTL", Name: "a host snapshot", Tree: "metal", Want: NA},
		ruleCase{Rule: "CONTAINER-NETNS-SYSCTL", Name: "host network", Tree: "metal", Want: NA,
			Container: &snapshot.Container{Runtime: "docker", Name: "h", PID: 4242, HostNetwork: true}},

		// A namespaced sysctl rule says where the value lives and how to set it there.
		ruleCase{Rule: "NET-SOMAXCONN", Name: "in a container's namespace", Tree: "metal", Workload: "web", Want: Fail,
			Edits:     map[string]string{"/proc/sys/net/core/somaxconn": "128\n"},
			Container: web1(map[string]string{"net.core.somaxconn": "4096"}),
			Check: all(observedContains("net.core.somaxconn = 128 in container web1's network namespace; the host has 4096 — host sysctls do not reach it"),
				fixContains("podman run --sysctl net.core.somaxconn=65535"), fixContains("nsenter -t 4242 -n sysctl -w net.core.somaxconn=65535"),
				func(t *testing.T, f Finding) {
					if f.Revert != "nsenter -t 4242 -n sysctl -w net.core.somaxconn=128" {
						t.Errorf("revert %q", f.Revert)
					}
				})},
		ruleCase{Rule: "NET-SOMAXCONN", Name: "in a pod", Tree: "metal", Workload: "web", Want: Fail,
			Edits:     map[string]string{"/proc/sys/net/core/somaxconn": "128\n"},
			Container: &snapshot.Container{Runtime: "containerd", Name: "nginx", Pod: "shop/web-0", PID: 4242},
			Check:     fixContains("securityContext.sysctls: [{name: net.core.somaxconn, value: \"65535\"}]")},

		// CONTAINER-CPUSET-NIC-NUMA (seed 002)
		ruleCase{Rule: "CONTAINER-CPUSET-NIC-NUMA", Name: "pinned to node 0, NIC on node 1", Tree: "metal", Want: Fail, Container: web1(nil),
			Edits: map[string]string{cg + "cpuset.cpus.effective": "0-1\n", cg + "cpuset.mems.effective": "0\n"},
			Check: all(observedContains("eth0 (node 1)"), changeTo(cg+"cpuset.cpus", "4-5"), changeTo(cg+"cpuset.mems", "1"))},
		ruleCase{Rule: "CONTAINER-CPUSET-NIC-NUMA", Name: "on the NIC's node", Tree: "metal", Want: Pass, Container: web1(nil),
			Edits: map[string]string{cg + "cpuset.cpus.effective": "4-5\n", cg + "cpuset.mems.effective": "1\n"}},
		ruleCase{Rule: "CONTAINER-CPUSET-NIC-NUMA", Name: "a host snapshot", Tree: "metal", Want: NA,
			Edits: map[string]string{cg + "cpuset.cpus.effective": "0-1\n"}},
		ruleCase{Rule: "CONTAINER-CPUSET-NIC-NUMA", Name: "one node", Tree: "kvm", Want: NA, Container: web1(nil)},

		// CONTAINER-NIC-IRQ-CPUS
		ruleCase{Rule: "CONTAINER-NIC-IRQ-CPUS", Name: "eth0 queues 0 and 1 land on the container's CPUs", Tree: "metal", Want: Fail, Container: web1(nil),
			Edits: map[string]string{cg + "cpuset.cpus.effective": "0-1\n"},
			Check: all(observedContains("eth0 IRQ 101 → cpus 0"), observedContains("eth0 IRQ 102 → cpus 1"), fixContains("(2-7)"))},
		ruleCase{Rule: "CONTAINER-NIC-IRQ-CPUS", Name: "IRQs elsewhere", Tree: "metal", Want: Pass, Container: web1(nil),
			Edits: map[string]string{cg + "cpuset.cpus.effective": "6-7\n"}},
		ruleCase{Rule: "CONTAINER-NIC-IRQ-CPUS", Name: "owns no CPU", Tree: "metal", Want: NA, Container: web1(nil)},

		// CONTAINER-MEMORY-NEAR-LIMIT: 16 GiB limit.
		ruleCase{Rule: "CONTAINER-MEMORY-NEAR-LIMIT", Name: "15 GiB working set", Tree: "metal", Want: Fail, Container: web1(nil),
			Edits: map[string]string{cg + "memory.current": "17179869184\n", cg + "memory.stat": "anon 15032385536\nfile 2147483648\ninactive_file 1073741824\n"},
			Check: observedContains("working set 15360.0 MiB of a 16384.0 MiB limit (94 %)")},
		ruleCase{Rule: "CONTAINER-MEMORY-NEAR-LIMIT", Name: "cache counts out", Tree: "metal", Want: Pass, Container: web1(nil),
			Edits: map[string]string{cg + "memory.current": "17179869184\n", cg + "memory.stat": "anon 1073741824\ninactive_file 16106127360\n"}},
		ruleCase{Rule: "CONTAINER-MEMORY-NEAR-LIMIT", Name: "usage unknown", Tree: "metal", Want: NA, Container: web1(nil)},
	)
}
