package audit

import (
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/fixture"
)

// metal: SMT on (2 threads per core), mmio_stale_data "Mitigation: Clear CPU
// buffers; SMT vulnerable". kvm: smt/control notsupported.

func init() {
	addRuleCases(
		ruleCase{Rule: "CPU-SMT", Name: "SMT vulnerable on an untrusted host", Tree: "metal", Want: Fail,
			Check: all(wantSeverity(Medium), observedContains("mmio_stale_data"),
				wantChange("nosmt", ""), fixContains("echo off > /sys/devices/system/cpu/smt/control"), notApplicable)},
		ruleCase{Rule: "CPU-SMT", Name: "SMT on a trusted general host", Tree: "metal", Trusted: true, Want: Pass},
		ruleCase{Rule: "CPU-SMT", Name: "SMT on, no leak, untrusted", Tree: "metal", Want: Pass,
			Edits: map[string]string{"/sys/devices/system/cpu/vulnerabilities/mmio_stale_data": "Not affected\n"}},
		ruleCase{Rule: "CPU-SMT", Name: "SMT on a trusted latency host", Tree: "metal", Trusted: true, Workload: "latency", Want: Fail,
			Check: wantSeverity(Low)},
		ruleCase{Rule: "CPU-SMT", Name: "SMT off for latency", Tree: "metal", Workload: "latency", Want: Pass,
			Edits: map[string]string{"/sys/devices/system/cpu/smt/control": "off\n", "/sys/devices/system/cpu/smt/active": "0\n"}},
		ruleCase{Rule: "CPU-SMT", Name: "no SMT in the VM", Tree: "kvm", Want: NA},
		ruleCase{Rule: "CPU-SMT", Name: "no runtime SMT control (kernel < 4.19)", Tree: "metal", Want: Fail,
			Edits: map[string]string{"/sys/devices/system/cpu/smt": fixture.Delete},
			Check: wantChange("nosmt", "")},
	)
}

// fixContains asserts the rendered fix command contains s.
func fixContains(s string) func(*testing.T, Finding) {
	return func(t *testing.T, f Finding) {
		t.Helper()
		if !strings.Contains(f.Fix, s) {
			t.Errorf("fix %q does not contain %q", f.Fix, s)
		}
	}
}

// notApplicable asserts tune would print, never apply, the finding's changes.
func notApplicable(t *testing.T, f Finding) {
	t.Helper()
	for _, c := range f.Changes {
		if c.Applicable() {
			t.Errorf("change %+v would be applied by tune", c)
		}
	}
}
