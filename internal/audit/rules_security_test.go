package audit

import (
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/fixture"
)

// metal: no mitigation opt-out on the command line; the vulnerabilities
// files report several "Mitigation: …" states. The command line of seed 000
// turns them off.

const seed000Cmdline = "nopti nospectre_v2 nospectre_v1 l1tf=off nospec_store_bypass_disable no_stf_barrier mds=off mitigations=off"

func init() {
	addRuleCases(
		// KERNEL-MITIGATIONS
		ruleCase{Rule: "KERNEL-MITIGATIONS", Name: "defaults on an untrusted host", Tree: "metal", Want: Pass},
		// Defect 3: procfs's itlb_multihit "KVM: Mitigation: VMX unsupported"
		// is mitigated (5 of 9, not 4), and "KVM: Vulnerable" is vulnerable.
		ruleCase{Rule: "KERNEL-MITIGATIONS", Name: "procfs tree with itlb_multihit KVM mitigation", Tree: "procfs", Want: Pass,
			Check: all(observedContains("5 of 9 vulnerabilities mitigated"), func(t *testing.T, f Finding) {
				if !strings.HasSuffix(f.Observed, "vulnerable: mds, mmio_stale_data") {
					t.Errorf("observed %q", f.Observed)
				}
			})},
		ruleCase{Rule: "KERNEL-MITIGATIONS", Name: "itlb_multihit KVM: Vulnerable", Tree: "procfs", Want: Pass,
			Edits: map[string]string{"/sys/devices/system/cpu/vulnerabilities/itlb_multihit": "KVM: Vulnerable\n"},
			Check: all(observedContains("4 of 9 vulnerabilities mitigated"), observedContains("vulnerable: itlb_multihit, mds, mmio_stale_data"))},
		ruleCase{Rule: "KERNEL-MITIGATIONS", Name: "seed 000 opt-outs on an untrusted host", Tree: "metal", Want: Fail,
			Edits: metalCmdline(seed000Cmdline),
			Check: all(wantSeverity(High), observedContains("mitigations=off"), wantChange("mitigations", "auto"),
				func(t *testing.T, f Finding) {
					for _, p := range []string{"nopti", "nospectre_v2", "mds=off"} {
						if !strings.Contains(f.Fix, p) || !strings.Contains(f.Revert, p) {
							t.Errorf("fix/revert must name %s: %q / %q", p, f.Fix, f.Revert)
						}
					}
				})},
		ruleCase{Rule: "KERNEL-MITIGATIONS", Name: "one opt-out on an untrusted host", Tree: "metal", Want: Fail,
			Edits: metalCmdline("nospectre_v2"), Check: observedContains("nospectre_v2")},
		ruleCase{Rule: "KERNEL-MITIGATIONS", Name: "defaults on a trusted host cost TPS (seed 000)", Tree: "metal", Trusted: true, Want: Fail,
			Check: all(wantSeverity(Medium), wantChange("mitigations", "off"), observedContains("mitigated"))},
		ruleCase{Rule: "KERNEL-MITIGATIONS", Name: "off on a trusted host", Tree: "metal", Trusted: true, Want: Pass,
			Edits: metalCmdline("mitigations=off")},
		ruleCase{Rule: "KERNEL-MITIGATIONS", Name: "no vulnerabilities directory", Tree: "metal", Want: NA,
			Edits: map[string]string{"/sys/devices/system/cpu/vulnerabilities": fixture.Delete}},
		ruleCase{Rule: "KERNEL-MITIGATIONS", Name: "no command line", Tree: "metal", Want: NA,
			Edits: map[string]string{"/proc/cmdline": fixture.Delete}},

		// KERNEL-AUDIT
		// metal runs auditd as pid 1254.
		ruleCase{Rule: "KERNEL-AUDIT", Name: "auditd on an untrusted host", Tree: "metal", Want: Pass},
		ruleCase{Rule: "KERNEL-AUDIT", Name: "auditd on a trusted host", Tree: "metal", Trusted: true, Want: Fail,
			Check: all(observedContains("auditd running (pid 1254)"), wantChange("audit", "0"),
				wantChange("", "systemctl disable --now auditd"))},
		ruleCase{Rule: "KERNEL-AUDIT", Name: "audit=1 without auditd on a trusted host", Tree: "metal", Trusted: true, Want: Fail,
			Edits: edits(metalCmdline("audit=1"), map[string]string{"/proc/1254": fixture.Delete})},
		ruleCase{Rule: "KERNEL-AUDIT", Name: "audit=0 on a trusted host", Tree: "metal", Trusted: true, Want: Pass,
			Edits: metalCmdline("audit=0")},
		ruleCase{Rule: "KERNEL-AUDIT", Name: "no auditd, no rules, trusted", Tree: "metal", Trusted: true, Want: Pass,
			Edits: map[string]string{"/proc/1254": fixture.Delete}},
		ruleCase{Rule: "KERNEL-AUDIT", Name: "no command line", Tree: "metal", Trusted: true, Want: NA,
			Edits: map[string]string{"/proc/cmdline": fixture.Delete}},
	)
}

func TestMitigationsOf(t *testing.T) {
	for _, tc := range []struct {
		cmdline map[string]string
		state   string
		off     int
	}{
		{map[string]string{}, "auto", 0},
		{map[string]string{"mitigations": "auto,nosmt"}, "auto,nosmt", 0},
		{map[string]string{"mitigations": "off"}, "off", 1},
		{map[string]string{"nopti": "", "quiet": ""}, "partial", 1},
		{map[string]string{"pti": "on"}, "auto", 0},
		{map[string]string{"spectre_v2": "off", "mds": "full"}, "partial", 1},
	} {
		m := MitigationsOf(tc.cmdline, map[string]string{
			"meltdown": "Mitigation: PTI", "mds": "Vulnerable: Clear CPU buffers attempted, no microcode", "l1tf": "Not affected",
		})
		if m.State != tc.state || len(m.Disabled) != tc.off {
			t.Errorf("%v: state %s disabled %v, want %s and %d", tc.cmdline, m.State, m.Disabled, tc.state, tc.off)
		}
		if len(m.Mitigated) != 1 || len(m.Vulnerable) != 1 {
			t.Errorf("mitigated %v vulnerable %v", m.Mitigated, m.Vulnerable)
		}
	}
}
