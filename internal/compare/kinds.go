package compare

import "strings"

// CauseKind says what a likely cause is: a setting someone can change back,
// the machine's identity, or the host drifting during the runs.
type CauseKind string

const (
	KindSetting   CauseKind = "setting"
	KindIdentity  CauseKind = "identity"
	KindHostDrift CauseKind = "host-drift"
	// kindState marks facts that are conditions during the runs (free
	// memory, runtime mounts, dirty pages, load): never likely causes.
	kindState CauseKind = "state"
)

// factKind classifies a snapshot fact path. INTERIM: replaced by the fact
// catalogue's factpath.KindOf at merge.
var factKind = func(path string) CauseKind {
	switch {
	case strings.HasPrefix(path, "run["):
		return KindSetting
	case strings.HasPrefix(path, "memory.thp"), strings.HasPrefix(path, "memory.hugepage"), strings.HasPrefix(path, "memory.ksm"), strings.HasPrefix(path, "memory.swap_total"):
		return KindSetting
	case strings.HasPrefix(path, "memory."), strings.HasPrefix(path, "load."), strings.HasPrefix(path, "host.boot_id"), strings.HasPrefix(path, "host.uptime"),
		strings.Contains(path, "mem_total_kib"), strings.Contains(path, "mem_free_kib"), strings.HasPrefix(path, "cpu.cur_khz"),
		strings.HasPrefix(path, "mounts[/run"), strings.HasPrefix(path, "net.sockets"):
		return kindState
	case strings.HasPrefix(path, "host."), strings.HasPrefix(path, "kernel.release"), strings.HasPrefix(path, "kernel.version"),
		strings.HasPrefix(path, "cpu.model"), strings.HasPrefix(path, "cpu.microcode"), strings.HasPrefix(path, "cpu.vendor"), strings.HasPrefix(path, "cpu.family"), strings.HasPrefix(path, "cpu.stepping"), strings.HasPrefix(path, "cpu.caches"), strings.HasPrefix(path, "cpu.flags"):
		return KindIdentity
	}
	return KindSetting
}

// IsStateFact reports whether a snapshot fact is state (what the host was
// doing), not a setting or identity.
func IsStateFact(path string) bool { return factKind(path) == kindState }
