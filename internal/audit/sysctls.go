package audit

import (
	"sort"
	"strings"

	"github.com/perflab/perflab/internal/knob"
)

// Sysctls names every sysctl the audit of workload w can read: the knob
// catalogue's sysctls and each of w's targets named like a sysctl. `perflab
// audit` collects only these (snapshot.Options.Sysctls) instead of all of
// /proc/sys, most of a live snapshot's cost; TestSysctlSubsetSameFindings
// proves the findings equal a full snapshot's on every fixture tree, and
// TestSysctlsNamesEveryLiteral that no rule reads a sysctl outside them.
func Sysctls(w *Workload) []string {
	seen := map[string]bool{}
	for _, k := range knob.All() {
		if k.Method == knob.Sysctl {
			seen[strings.TrimPrefix(k.Path, "sysctl.")] = true
		}
	}
	if w != nil {
		for name := range w.Targets {
			if sysctlLike(name) {
				seen[name] = true
			}
		}
	}
	out := make([]string, 0, len(seen))
	for n := range seen {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// sysctlLike reports whether a target's knob name is a sysctl's: it lies
// under one of the /proc/sys subtrees a snapshot records.
func sysctlLike(name string) bool {
	top, rest, ok := strings.Cut(name, ".")
	if !ok || rest == "" {
		return false
	}
	switch top {
	case "kernel", "vm", "fs", "net":
		return true
	}
	return false
}
