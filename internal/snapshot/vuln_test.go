package snapshot

import (
	"reflect"
	"testing"
)

// The texts Documentation/admin-guide/hw-vuln documents (and bugs.c
// prints) for each state, including itlb_multihit's "KVM: " forms, which
// were classed unknown before (defect 3).
func TestClassifyVulnerability(t *testing.T) {
	for text, want := range map[string]VulnState{
		"Not affected":    VulnNotAffected,
		"Mitigation: PTI": VulnMitigated,
		"Mitigation: Clear CPU buffers; SMT vulnerable":                                                       VulnMitigated,
		"Mitigation: PTE Inversion; VMX: conditional cache flushes, SMT vulnerable":                           VulnMitigated,
		"Mitigation: Retpolines, IBPB: conditional, STIBP: always-on, RSB filling, PBRSB-eIBRS: Not affected": VulnMitigated,
		"KVM: Mitigation: VMX unsupported":                                                                    VulnMitigated,
		"KVM: Mitigation: VMX disabled":                                                                       VulnMitigated,
		"KVM: Mitigation: Split huge pages":                                                                   VulnMitigated,
		"KVM: Vulnerable":                                                                                     VulnVulnerable,
		"Processor vulnerable":                                                                                VulnVulnerable,
		"Vulnerable":                                                                                          VulnVulnerable,
		"Vulnerable: Clear CPU buffers attempted, no microcode":                                               VulnVulnerable,
		"Vulnerable: No microcode":                                                                            VulnVulnerable,
		"Vulnerable: eIBRS with unprivileged eBPF":                                                            VulnVulnerable,
		"Vulnerable, KVM: Not affected":                                                                       VulnVulnerable,
		"Unknown: No mitigations":                                                                             VulnUnknown,
		"Unknown: Dependent on hypervisor status":                                                             VulnUnknown,
		"":              VulnUnknown,
		"something new": VulnUnknown,
	} {
		if got := ClassifyVulnerability(text); got != want {
			t.Errorf("%q: %s, want %s", text, got, want)
		}
	}
}

// On prometheus/procfs's tree 5 of 9 vulnerabilities are mitigated
// (itlb_multihit among them), 2 vulnerable, 1 unknown, 1 not affected.
func TestVulnerabilitiesProcfsTree(t *testing.T) {
	s := runAreas(t, tree(t, "procfs", nil), Options{}, collectKernel)
	k := s.Kernel
	for state, want := range map[VulnState][]string{
		VulnMitigated:   {"itlb_multihit", "retbleed", "spec_store_bypass", "spectre_v1", "spectre_v2"},
		VulnVulnerable:  {"mds", "mmio_stale_data"},
		VulnUnknown:     {"srbds"},
		VulnNotAffected: {"tsx_async_abort"},
	} {
		if got := k.VulnerabilitiesIn(state); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %v, want %v", state, got, want)
		}
	}
}
