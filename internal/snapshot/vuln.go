package snapshot

import (
	"sort"
	"strings"
)

// VulnState is what a /sys/devices/system/cpu/vulnerabilities file says
// about the CPU: one of the VulnStates.
type VulnState string

// The states a vulnerability file is classed into.
const (
	VulnNotAffected VulnState = "not_affected"
	VulnMitigated   VulnState = "mitigated"
	VulnVulnerable  VulnState = "vulnerable"
	VulnUnknown     VulnState = "unknown"
)

// VulnStates lists the states in a stable order (the exporter's enum).
var VulnStates = []VulnState{VulnNotAffected, VulnMitigated, VulnVulnerable, VulnUnknown}

// ClassifyVulnerability classes a vulnerability file's text by the forms
// Documentation/admin-guide/hw-vuln documents and arch/x86/kernel/cpu/bugs.c
// prints: "Not affected"; "Mitigation: …" (possibly with a remainder such as
// "; SMT vulnerable"); "Vulnerable" or "Vulnerable: …" (also "Vulnerable, KVM:
// …" for indirect_target_selection); "Processor vulnerable"
// (itlb_multihit on a kernel built without KVM_INTEL); "Unknown: …" (mmio_stale_data, srbds and gather_data_sampling when
// the state depends on the hypervisor). itlb_multihit prefixes its text with
// "KVM: " ("KVM: Mitigation: VMX unsupported", "KVM: Mitigation: Split huge
// pages", "KVM: Vulnerable"): the prefix names the component, not the state.
// Anything else is unknown. procfs's sysfs.CPUVulnerabilities classes by
// prefix too, but without the "KVM: " and "Processor vulnerable" forms, so
// it calls itlb_multihit unknown on most Intel servers.
func ClassifyVulnerability(text string) VulnState {
	t := strings.TrimSpace(text)
	t = strings.TrimPrefix(t, "KVM: ")
	switch {
	case strings.HasPrefix(t, "Not affected"):
		return VulnNotAffected
	case strings.HasPrefix(t, "Mitigation"):
		return VulnMitigated
	case strings.HasPrefix(t, "Vulnerable"), strings.HasPrefix(t, "Processor vulnerable"):
		return VulnVulnerable
	}
	return VulnUnknown
}

// VulnerabilitiesIn returns the names of the vulnerability files (sorted)
// whose text classes as state.
func (k Kernel) VulnerabilitiesIn(state VulnState) []string {
	var out []string
	for name, text := range k.Vulnerabilities {
		if ClassifyVulnerability(text) == state {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}
