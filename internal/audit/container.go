package audit

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/perflab/perflab/internal/snapshot"
)

// A snapshot of a container (Snapshot.Container set) holds the container's
// net sysctls and cgroup and the host's everything else. Findings about a
// network-namespaced sysctl say where the value lives and how to set it
// there, because "host tuned, pod on defaults" is the classic trap: host
// sysctls do not reach a container's namespace.

// Whether a setting belongs to a network namespace is asked here only, so
// that switching to the knob catalogue (internal/knob's SysctlScope and
// NetNSReadOnly) is a change of these two functions' bodies.

// hostWideNet are net sysctls that exist only in the initial network
// namespace: writing them from anywhere changes the whole host (checked on
// Linux 6.x by listing /proc/sys/net/core in a fresh `ip netns add`).
var hostWideNet = []string{
	"net.core.netdev_max_backlog", "net.core.netdev_budget", "net.core.netdev_budget_usecs",
	"net.core.dev_weight", "net.core.busy_poll", "net.core.busy_read", "net.core.default_qdisc",
	"net.core.rps_sock_flow_entries", "net.core.flow_limit_cpu_bitmap", "net.core.flow_limit_table_len",
	"net.core.bpf_jit_enable", "net.core.bpf_jit_harden", "net.core.bpf_jit_kallsyms", "net.core.bpf_jit_limit",
	"net.core.netdev_tstamp_prequeue", "net.core.message_burst", "net.core.message_cost",
	"net.core.optmem_max", "net.ipv4.tcp_mem", "net.ipv4.udp_mem",
}

// readOnlyInNetNS are net sysctls every namespace has but only the initial
// one may write (Linux 6.10 made the socket buffer limits read-only in
// child namespaces).
var readOnlyInNetNS = map[string]bool{
	"net.core.rmem_default": true, "net.core.rmem_max": true, "net.core.wmem_default": true, "net.core.wmem_max": true,
	"net.netfilter.nf_conntrack_max": true, "net.netfilter.nf_conntrack_buckets": true,
}

// NetNamespaced reports whether a sysctl has one value per network namespace.
func NetNamespaced(name string) bool {
	if !strings.HasPrefix(name, "net.") {
		return false
	}
	for _, p := range hostWideNet {
		if name == p || strings.HasPrefix(name, p+".") {
			return false
		}
	}
	return true
}

// ReadOnlyInNetNS reports whether a namespaced sysctl can be written only in
// the host's (initial) network namespace.
func ReadOnlyInNetNS(name string) bool { return readOnlyInNetNS[name] }

// ContainerLabel names a snapshot's container for a person.
func ContainerLabel(c *snapshot.Container) string {
	switch {
	case c.Pod != "" && c.Name != "":
		return "pod/" + c.Pod + "/" + c.Name
	case c.Name != "":
		return c.Name
	case len(c.ID) >= 12:
		return c.ID[:12]
	case c.ID != "":
		return c.ID
	}
	return "pid " + strconv.Itoa(c.PID)
}

// placeInContainer words a finding on a container's snapshot: where each
// sysctl it judges lives, and, for a failing namespaced one, how to set it
// in the container instead of on the host.
func placeInContainer(f *Finding, s *snapshot.Snapshot) {
	c := s.Container
	if c == nil {
		return
	}
	label := ContainerLabel(c)
	var where, fixes []string
	judged := map[string]string{} // sysctl → the value a fix would set ("" none)
	var names []string
	if _, ok := s.Sysctl[f.Knob]; ok && strings.HasPrefix(f.Knob, "net.") {
		judged[f.Knob] = ""
		names = append(names, f.Knob)
	}
	for _, ch := range f.Changes {
		if ch.Kind != KindSysctl {
			continue
		}
		if _, ok := judged[ch.Target]; !ok {
			names = append(names, ch.Target)
		}
		judged[ch.Target] = ch.Value
	}
	for _, name := range names {
		switch {
		case c.HostNetwork || !NetNamespaced(name):
			where = append(where, fmt.Sprintf("%s is host-wide: the container %s runs with the host's value", name, label))
		case ReadOnlyInNetNS(name):
			where = append(where, fmt.Sprintf("%s = %s in container %s's network namespace, where it is read-only (Linux 6.10+): only the host's value can be changed",
				name, s.Sysctl[name], label))
		default:
			w := fmt.Sprintf("%s = %s in container %s's network namespace", name, s.Sysctl[name], label)
			if hv, ok := c.HostSysctl[name]; ok {
				w += fmt.Sprintf("; the host has %s — host sysctls do not reach it", hv)
			}
			where = append(where, w)
			if v := judged[name]; v != "" {
				fixes = append(fixes, containerSysctlFix(c, name, v, label))
			}
		}
	}
	if len(where) == 0 {
		return
	}
	f.Observed = strings.Join(where, "; ") + " (" + f.Observed + ")"
	if f.Status == Fail && len(fixes) > 0 {
		f.Fix = strings.Join(fixes, "\n")
		var undo []string
		for _, ch := range f.Changes {
			if ch.Kind == KindSysctl && NetNamespaced(ch.Target) && !ReadOnlyInNetNS(ch.Target) && !c.HostNetwork {
				undo = append(undo, fmt.Sprintf("nsenter -t %d -n sysctl -w %s=%s", c.PID, ch.Target, shellQuote(ch.Current)))
			}
		}
		f.Revert = strings.Join(undo, "\n")
	}
}

// containerSysctlFix is how to set a namespaced sysctl for a container:
// where it is declared (so it survives a restart) and now.
func containerSysctlFix(c *snapshot.Container, name, v, label string) string {
	kv := name + "=" + v
	var decl string
	switch {
	case c.Pod != "":
		decl = fmt.Sprintf("declare it in the pod spec: securityContext.sysctls: [{name: %s, value: %q}] (an unsafe sysctl also needs kubelet --allowed-unsafe-sysctls)", name, v)
	case c.Runtime == "podman":
		decl = "recreate it with: podman run --sysctl " + kv + " …"
	default:
		decl = "recreate it with: docker run --sysctl " + kv + " … (compose: sysctls:)"
	}
	return fmt.Sprintf("%s; now: nsenter -t %d -n sysctl -w %s, or perflab tune apply WORKLOAD --container %s", decl, c.PID, kv, label)
}

// hostContainerDiff lists the namespaced sysctls whose value in the
// container differs from the host's, sorted: the host-vs-container table.
func hostContainerDiff(s *snapshot.Snapshot) [][3]string {
	var rows [][3]string
	for k, hv := range s.Container.HostSysctl {
		rows = append(rows, [3]string{k, s.Sysctl[k], hv})
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i][0] < rows[j][0] })
	return rows
}
