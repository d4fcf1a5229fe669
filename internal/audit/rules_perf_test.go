package audit

import "github.com/perflab/perflab/internal/fixture"

func init() {
	addRuleCases(
		ruleCase{Rule: "PERF-EVENT-PARANOID", Name: "2", Tree: "metal", Want: Pass},
		ruleCase{Rule: "PERF-EVENT-PARANOID", Name: "3 as in seed 003", Tree: "metal", Want: Fail,
			Edits: map[string]string{"/proc/sys/kernel/perf_event_paranoid": "3\n"},
			Check: wantChange("kernel.perf_event_paranoid", "2")},
		ruleCase{Rule: "PERF-EVENT-PARANOID", Name: "kernel without perf events", Tree: "metal", Want: NA,
			Edits: map[string]string{"/proc/sys/kernel/perf_event_paranoid": fixture.Delete}},

		ruleCase{Rule: "PERF-KPTR-RESTRICT", Name: "0", Tree: "kvm", Want: Pass},
		ruleCase{Rule: "PERF-KPTR-RESTRICT", Name: "2 hides symbols from root", Tree: "kvm", Want: Fail,
			Edits: map[string]string{"/proc/sys/kernel/kptr_restrict": "2\n"},
			Check: wantChange("kernel.kptr_restrict", "0")},
		ruleCase{Rule: "PERF-KPTR-RESTRICT", Name: "absent", Tree: "kvm", Want: NA,
			Edits: map[string]string{"/proc/sys/kernel/kptr_restrict": fixture.Delete}},
	)
}
