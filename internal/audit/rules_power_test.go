package audit

import (
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/fixture"
)

// metal: intel_pstate active, governor powersave and EPP balance_performance
// on CPUs 0-7, turbo on, cpuinfo_max 4.0 GHz, intel_idle POLL/C1/C1E/C6 (133
// us). kvm: no cpufreq, haltpoll idle driver.

const metalCPUs = 8

func init() {
	addRuleCases(
		// CPU-GOVERNOR
		ruleCase{Rule: "CPU-GOVERNOR", Name: "intel_pstate powersave accepted as dynamic", Tree: "metal", Want: Pass,
			Check: func(t *testing.T, f Finding) {
				if !strings.Contains(f.Reason, "dynamic") {
					t.Errorf("pass on powersave should say why: reason %q", f.Reason)
				}
			}},
		ruleCase{Rule: "CPU-GOVERNOR", Name: "intel_pstate powersave for web", Tree: "metal", Workload: "web", Want: Fail,
			Check: all(wantSeverity(High), observedContains("powersave"),
				wantChange("/sys/devices/system/cpu/cpu5/cpufreq/scaling_governor", "performance"),
				func(t *testing.T, f Finding) {
					if len(f.Changes) != metalCPUs {
						t.Errorf("%d changes, want one per CPU (%d)", len(f.Changes), metalCPUs)
					}
					if !strings.Contains(f.Fix, "for f in /sys/devices/system/cpu/cpu[0-9]*/cpufreq/scaling_governor") ||
						!strings.Contains(f.Revert, "echo powersave") {
						t.Errorf("fix/revert not a loop over all CPUs: %q / %q", f.Fix, f.Revert)
					}
				})},
		ruleCase{Rule: "CPU-GOVERNOR", Name: "performance for web", Tree: "metal", Workload: "web", Want: Pass,
			Edits: eachPolicy(metalCPUs, "scaling_governor", "performance\n")},
		ruleCase{Rule: "CPU-GOVERNOR", Name: "acpi-cpufreq powersave is not dynamic", Tree: "metal", Want: Fail,
			Edits: eachPolicy(metalCPUs, "scaling_driver", "acpi-cpufreq\n")},
		ruleCase{Rule: "CPU-GOVERNOR", Name: "one CPU left on powersave", Tree: "metal", Workload: "latency", Want: Fail,
			Edits: edits(eachPolicy(metalCPUs, "scaling_governor", "performance\n"),
				map[string]string{"/sys/devices/system/cpu/cpufreq/policy3/scaling_governor": "powersave\n"}),
			Check: func(t *testing.T, f Finding) {
				if len(f.Changes) != 1 || f.Changes[0].Current != "powersave" || strings.Contains(f.Fix, "for f in") {
					t.Errorf("want one per-CPU change for cpu3, got %+v fix %q", f.Changes, f.Fix)
				}
			}},
		ruleCase{Rule: "CPU-GOVERNOR", Name: "no cpufreq in a VM", Tree: "kvm", Want: NA},
		// Defect 1: node_exporter's tree has cpuN/cpufreq directories and no
		// cpufreq/policy*, as older kernels do; its governor is powersave.
		ruleCase{Rule: "CPU-GOVERNOR", Name: "per-CPU cpufreq layout on powersave", Tree: "node_exporter", Want: Fail,
			Check: all(observedContains("powersave (all 4 CPUs), driver intel_pstate"),
				wantChange("/sys/devices/system/cpu/cpu3/cpufreq/scaling_governor", "performance"))},
		// procfs's tree: governors known for CPUs 0-1 of 8 online; "all" would be wrong.
		ruleCase{Rule: "CPU-GOVERNOR", Name: "procfs tree, governor of 2 of 8 CPUs", Tree: "procfs", Want: Fail,
			Check: all(observedContains("powersave on CPU 0-1, driver intel_pstate"), changeCount(2))},
		// Defect 2: intel_pstate active without energy_performance_preference
		// has no HWP, so powersave is not accepted as a dynamic HWP policy.
		ruleCase{Rule: "CPU-GOVERNOR", Name: "intel_pstate active without HWP", Tree: "metal", Want: Fail,
			Edits: eachPolicy(metalCPUs, "energy_performance_preference", fixture.Delete),
			Check: all(observedContains("(active, no HWP)"), reasonContains("no HWP"),
				func(t *testing.T, f Finding) {
					if strings.Contains(f.Reason, "HWP policy") || strings.Contains(f.Reason, "under HWP") {
						t.Errorf("reason claims HWP without evidence: %q", f.Reason)
					}
				})},
		// Defect 2: seed 004 is a container host on powersave at half the TPS.
		ruleCase{Rule: "CPU-GOVERNOR", Name: "container host on HWP powersave", Tree: "metal", Workload: "container-host", Want: Fail,
			Check: all(observedContains("(active, HWP)"), wantChange("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", "performance"),
				// metal's scaling_cur_freq is cpuinfo_min_freq (1.2 GHz) or below on CPUs 0, 2, 4 and 7.
				reasonContains("scaling_cur_freq is at the hardware minimum (1.20 GHz) on CPU 0,2,4,7"),
				reasonContains("under load"))},

		// CPU-SCALING-DRIVER
		ruleCase{Rule: "CPU-SCALING-DRIVER", Name: "intel_pstate", Tree: "metal", Want: Pass},
		ruleCase{Rule: "CPU-SCALING-DRIVER", Name: "intel_pstate=disable", Tree: "metal", Want: Fail,
			Edits: edits(eachPolicy(metalCPUs, "scaling_driver", "acpi-cpufreq\n"), map[string]string{
				"/proc/cmdline":                        "BOOT_IMAGE=/boot/vmlinuz-6.1.0-28-amd64 ro quiet intel_pstate=disable\n",
				"/sys/devices/system/cpu/intel_pstate": fixture.Delete,
			}),
			Check: func(t *testing.T, f Finding) {
				if !strings.Contains(f.Fix, "replace intel_pstate=disable with intel_pstate=active") {
					t.Errorf("fix %q", f.Fix)
				}
			}},
		ruleCase{Rule: "CPU-SCALING-DRIVER", Name: "acpi-cpufreq without proof of HWP", Tree: "metal", Want: Pass,
			Edits: eachPolicy(metalCPUs, "scaling_driver", "acpi-cpufreq\n")},
		ruleCase{Rule: "CPU-SCALING-DRIVER", Name: "no cpufreq in a VM", Tree: "kvm", Want: NA},

		// CPU-BOOST
		ruleCase{Rule: "CPU-BOOST", Name: "turbo on", Tree: "metal", Want: Pass},
		ruleCase{Rule: "CPU-BOOST", Name: "no_turbo=1", Tree: "metal", Want: Fail,
			Edits: map[string]string{"/sys/devices/system/cpu/intel_pstate/no_turbo": "1\n"},
			Check: wantChange("/sys/devices/system/cpu/intel_pstate/no_turbo", "0")},
		ruleCase{Rule: "CPU-BOOST", Name: "acpi-cpufreq boost=0", Tree: "metal", Want: Fail,
			Edits: edits(eachPolicy(metalCPUs, "scaling_driver", "acpi-cpufreq\n"), map[string]string{
				"/sys/devices/system/cpu/intel_pstate":  fixture.Delete,
				"/sys/devices/system/cpu/cpufreq/boost": "0\n",
			}),
			Check: wantChange("/sys/devices/system/cpu/cpufreq/boost", "1")},
		ruleCase{Rule: "CPU-BOOST", Name: "no cpufreq in a VM", Tree: "kvm", Want: NA},

		// CPU-FREQ-CAPPED
		ruleCase{Rule: "CPU-FREQ-CAPPED", Name: "uncapped", Tree: "metal", Want: Pass},
		ruleCase{Rule: "CPU-FREQ-CAPPED", Name: "cpu3 capped at 1.2 GHz", Tree: "metal", Want: Fail,
			Edits: map[string]string{"/sys/devices/system/cpu/cpufreq/policy3/scaling_max_freq": "1200000\n"},
			Check: all(wantSeverity(High), observedContains("1.20 GHz on CPU 3"),
				wantChange("/sys/devices/system/cpu/cpu3/cpufreq/scaling_max_freq", "4000000"))},
		ruleCase{Rule: "CPU-FREQ-CAPPED", Name: "all capped slightly", Tree: "metal", Want: Fail,
			Edits: eachPolicy(metalCPUs, "scaling_max_freq", "3600000\n"),
			Check: wantSeverity(Medium)},
		ruleCase{Rule: "CPU-FREQ-CAPPED", Name: "turbo off explains the cap", Tree: "metal", Want: NA,
			Edits: edits(eachPolicy(metalCPUs, "scaling_max_freq", "3100000\n"),
				map[string]string{"/sys/devices/system/cpu/intel_pstate/no_turbo": "1\n"})},
		ruleCase{Rule: "CPU-FREQ-CAPPED", Name: "no cpufreq in a VM", Tree: "kvm", Want: NA},

		// CPU-EPP
		ruleCase{Rule: "CPU-EPP", Name: "balance_performance for general", Tree: "metal", Want: Pass},
		ruleCase{Rule: "CPU-EPP", Name: "balance_performance for kv", Tree: "metal", Workload: "kv", Want: Fail,
			Check: wantChange("/sys/devices/system/cpu/cpu0/cpufreq/energy_performance_preference", "performance")},
		ruleCase{Rule: "CPU-EPP", Name: "power for general", Tree: "metal", Want: Fail,
			Edits: eachPolicy(metalCPUs, "energy_performance_preference", "power\n")},
		ruleCase{Rule: "CPU-EPP", Name: "performance for kv", Tree: "metal", Workload: "kv", Want: Pass,
			Edits: eachPolicy(metalCPUs, "energy_performance_preference", "performance\n")},
		ruleCase{Rule: "CPU-EPP", Name: "no cpufreq in a VM", Tree: "kvm", Want: NA},

		// CPU-CSTATE-LATENCY
		ruleCase{Rule: "CPU-CSTATE-LATENCY", Name: "C6 within general budget", Tree: "metal", Want: Pass},
		ruleCase{Rule: "CPU-CSTATE-LATENCY", Name: "C6 enabled for latency", Tree: "metal", Workload: "latency", Want: Fail,
			Check: all(observedContains("C6 (133 us"),
				wantChange("/sys/devices/system/cpu/cpu7/cpuidle/state3/disable", "1"),
				func(t *testing.T, f Finding) {
					// C1E (10 us) is within the 20 us budget and must stay.
					for _, c := range f.Changes {
						if strings.Contains(c.Target, "state2") {
							t.Errorf("disables C1E: %+v", c)
						}
					}
				})},
		ruleCase{Rule: "CPU-CSTATE-LATENCY", Name: "C6 disabled everywhere for latency", Tree: "metal", Workload: "latency", Want: Pass,
			Edits: eachCPU(metalCPUs, "cpuidle/state3/disable", "1\n")},
		ruleCase{Rule: "CPU-CSTATE-LATENCY", Name: "C6 disabled on all but cpu6", Tree: "metal", Workload: "latency", Want: Fail,
			Edits: edits(eachCPU(metalCPUs, "cpuidle/state3/disable", "1\n"),
				map[string]string{"/sys/devices/system/cpu/cpu6/cpuidle/state3/disable": "0\n"}),
			Check: func(t *testing.T, f Finding) {
				if len(f.Changes) != 1 || f.Changes[0].Target != "/sys/devices/system/cpu/cpu6/cpuidle/state3/disable" {
					t.Errorf("changes %+v", f.Changes)
				}
			}},
		ruleCase{Rule: "CPU-CSTATE-LATENCY", Name: "no cpuidle", Tree: "metal",
			Edits: map[string]string{"/sys/devices/system/cpu/cpuidle": fixture.Delete}, Want: NA},

		// CPU-IDLE-DRIVER
		ruleCase{Rule: "CPU-IDLE-DRIVER", Name: "haltpoll for latency", Tree: "kvm", Workload: "latency", Want: Pass},
		ruleCase{Rule: "CPU-IDLE-DRIVER", Name: "acpi_idle guest for latency", Tree: "kvm", Workload: "latency", Want: Fail,
			Edits: map[string]string{"/sys/devices/system/cpu/cpuidle/current_driver": "acpi_idle\n"},
			Check: wantChange("cpuidle_haltpoll.force", "1")},
		ruleCase{Rule: "CPU-IDLE-DRIVER", Name: "acpi_idle guest, loose budget", Tree: "kvm", Want: Pass,
			Edits: map[string]string{"/sys/devices/system/cpu/cpuidle/current_driver": "acpi_idle\n"}},
		ruleCase{Rule: "CPU-IDLE-DRIVER", Name: "intel_idle on metal", Tree: "metal", Workload: "latency", Want: Pass},
		ruleCase{Rule: "CPU-IDLE-DRIVER", Name: "xen guest", Tree: "kvm", Workload: "latency", Want: NA,
			Edits: map[string]string{"/sys/hypervisor/type": "xen\n"}},
		ruleCase{Rule: "CPU-IDLE-DRIVER", Name: "no cpuidle", Tree: "kvm", Workload: "latency", Want: NA,
			Edits: map[string]string{"/sys/devices/system/cpu/cpuidle": fixture.Delete}},
	)
}
