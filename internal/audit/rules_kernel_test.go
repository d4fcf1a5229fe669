package audit

import (
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/fixture"
)

// metal and kvm: clocksource tsc (metal offers tsc hpet acpi_pm), a
// PREEMPT_DYNAMIC kernel without debugfs, nmi_watchdog 0.

const clk = "/sys/devices/system/clocksource/clocksource0/"

func metalCmdline(extra string) map[string]string {
	return map[string]string{"/proc/cmdline": patched("metal", "/proc/cmdline", func(s string) string {
		return strings.TrimSpace(s) + " " + extra + "\n"
	})}
}

func init() {
	addRuleCases(
		// KERNEL-CLOCKSOURCE
		ruleCase{Rule: "KERNEL-CLOCKSOURCE", Name: "tsc", Tree: "metal", Want: Pass},
		ruleCase{Rule: "KERNEL-CLOCKSOURCE", Name: "kvm-clock in a guest", Tree: "kvm", Want: Pass,
			Edits: map[string]string{clk + "current_clocksource": "kvm-clock\n"}},
		ruleCase{Rule: "KERNEL-CLOCKSOURCE", Name: "hpet with tsc available", Tree: "metal", Want: Fail,
			Edits: map[string]string{clk + "current_clocksource": "hpet\n"},
			Check: all(observedContains("hpet"), wantChange(clk+"current_clocksource", "tsc"))},
		ruleCase{Rule: "KERNEL-CLOCKSOURCE", Name: "acpi_pm, tsc rejected", Tree: "metal", Want: Fail,
			Edits: map[string]string{clk + "current_clocksource": "acpi_pm\n", clk + "available_clocksource": "hpet acpi_pm\n"},
			Check: func(t *testing.T, f Finding) {
				if len(f.Changes) != 1 || f.Changes[0].Kind != KindCommand || !strings.Contains(f.Fix, "tsc=reliable") {
					t.Errorf("want a diagnosis command, got %+v", f.Changes)
				}
			}},
		ruleCase{Rule: "KERNEL-CLOCKSOURCE", Name: "no clocksource in sysfs", Tree: "metal", Want: NA,
			Edits: map[string]string{"/sys/devices/system/clocksource": fixture.Delete}},

		// KERNEL-PREEMPT
		ruleCase{Rule: "KERNEL-PREEMPT", Name: "preempt=full for latency", Tree: "metal", Workload: "latency", Want: Pass,
			Edits: metalCmdline("preempt=full")},
		ruleCase{Rule: "KERNEL-PREEMPT", Name: "dynamic, model unknown, for latency", Tree: "metal", Workload: "latency", Want: Fail,
			Check: wantChange("preempt", "full")},
		ruleCase{Rule: "KERNEL-PREEMPT", Name: "preempt=full for throughput", Tree: "metal", Workload: "throughput", Want: Fail,
			Edits: metalCmdline("preempt=full"), Check: all(observedContains("full"), wantChange("preempt", "none"))},
		ruleCase{Rule: "KERNEL-PREEMPT", Name: "preempt=voluntary for throughput", Tree: "metal", Workload: "throughput", Want: Pass,
			Edits: metalCmdline("preempt=voluntary")},
		ruleCase{Rule: "KERNEL-PREEMPT", Name: "not a latency or throughput workload", Tree: "metal", Workload: "web", Want: NA},
		ruleCase{Rule: "KERNEL-PREEMPT", Name: "non-preemptible build", Tree: "metal", Workload: "latency", Want: NA,
			Edits: map[string]string{"/proc/sys/kernel/version": "#1 SMP Debian 6.1.119-1 (2024-11-22)\n"}},

		// KERNEL-NMI-WATCHDOG
		ruleCase{Rule: "KERNEL-NMI-WATCHDOG", Name: "off for latency", Tree: "metal", Workload: "latency", Want: Pass},
		ruleCase{Rule: "KERNEL-NMI-WATCHDOG", Name: "on for latency", Tree: "metal", Workload: "latency", Want: Fail,
			Edits: map[string]string{"/proc/sys/kernel/nmi_watchdog": "1\n"}, Check: wantChange("kernel.nmi_watchdog", "0")},
		ruleCase{Rule: "KERNEL-NMI-WATCHDOG", Name: "on for general", Tree: "metal", Want: Pass,
			Edits: map[string]string{"/proc/sys/kernel/nmi_watchdog": "1\n"}},
		ruleCase{Rule: "KERNEL-NMI-WATCHDOG", Name: "kernel without the watchdog", Tree: "metal", Want: NA,
			Edits: map[string]string{"/proc/sys/kernel/nmi_watchdog": fixture.Delete}},
	)
}
