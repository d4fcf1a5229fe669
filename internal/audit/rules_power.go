package audit

import (
	"fmt"
	"github.com/perflab/perflab/internal/knob"
	"sort"
	"strconv"
	"strings"

	"github.com/perflab/perflab/internal/snapshot"
)

// Power management: how fast the CPUs are allowed to run (P-states) and how
// deep they may sleep (C-states). In a guest these are usually absent (the
// hypervisor owns them) and the rules are na with the snapshot's reason.

func registerPowerRules() {
	register(
		&Rule{
			ID:       "CPU-GOVERNOR",
			Title:    "The cpufreq governor lets the CPU run at its rated speed",
			Area:     "power",
			Severity: High,
			Knob:     "/sys/devices/system/cpu/cpu*/cpufreq/scaling_governor",
			Why: "The powersave governor (and conservative or a fixed userspace frequency) keeps cores near their minimum " +
				"frequency: in seed 004 a container on the same physical model as a VM served half the TPS, with `CPU MHz` " +
				"sitting at `CPU min MHz`, until `cpupower frequency-set -g performance` fixed it; its authors then alerted on " +
				"any governor other than performance. Only where the hardware manages P-states (intel_pstate active with " +
				"HWP, which shows as an energy_performance_preference file) is powersave a dynamic policy comparable to " +
				"schedutil, accepted where the workload accepts a dynamic governor; latency, database, kv, web, jvm and " +
				"container hosts (seed 004 is one) want performance, which also removes the frequency ramp-up after every " +
				"idle period.",
			Source: "seed 004_1dfc2b4c4718b7c2.txt; https://docs.kernel.org/admin-guide/pm/cpufreq.html",
			Check:  checkGovernor,
		},
		&Rule{
			ID:       "CPU-SCALING-DRIVER",
			Title:    "The CPU's native frequency driver is in use",
			Area:     "power",
			Severity: Low,
			Knob:     "/sys/devices/system/cpu/cpu0/cpufreq/scaling_driver",
			Why: "acpi-cpufreq drives the CPU through the firmware's ACPI P-state table: on current AMD CPUs that is only 3 " +
				"P-states, against the continuous range CPPC gives amd-pstate, and on Intel CPUs with HWP it leaves the " +
				"hardware's own fast frequency selection unused (intel_pstate=disable on the command line is the usual " +
				"cause). The native driver reacts faster to load and reaches every frequency the part supports.",
			Source: "https://docs.kernel.org/admin-guide/pm/amd-pstate.html; https://docs.kernel.org/admin-guide/pm/intel_pstate.html",
			Check:  checkScalingDriver,
		},
		&Rule{
			ID:       "CPU-BOOST",
			Title:    "Turbo/boost frequencies are enabled",
			Area:     "power",
			Severity: Medium,
			Knob:     "/sys/devices/system/cpu/cpufreq/boost (intel_pstate: /sys/devices/system/cpu/intel_pstate/no_turbo)",
			Why: "With boost off a core never runs above its base frequency: a Xeon Gold 6248 is then held at 2.5 GHz " +
				"instead of up to 3.9 GHz, 36% less clock for every CPU-bound request. Boost is switched off by BIOS " +
				"'power saving' profiles, by tuning scripts chasing determinism, or by no_turbo left behind after a test.",
			Source: "https://docs.kernel.org/admin-guide/pm/cpufreq.html#frequency-boost-support; https://www.intel.com/content/www/us/en/products/sku/192446/intel-xeon-gold-6248-processor-27-5m-cache-2-50-ghz/specifications.html",
			Check:  checkBoost,
		},
		&Rule{
			ID:       "CPU-FREQ-CAPPED",
			Title:    "No CPU has its maximum frequency capped below the hardware maximum",
			Area:     "power",
			Severity: Medium,
			Knob:     "/sys/devices/system/cpu/cpu*/cpufreq/scaling_max_freq",
			Why: "scaling_max_freq below cpuinfo_max_freq is a cap that no governor will exceed: a cap of 1.2 GHz on a " +
				"3.5 GHz part runs CPU-bound code at 34% of its speed, and nothing in top or load averages shows why. " +
				"Caps are left by `cpupower frequency-set -u`, power-capping daemons and thermal experiments.",
			Source: "https://docs.kernel.org/admin-guide/pm/cpufreq.html#policy-interface-in-sysfs",
			Check:  checkFreqCapped,
		},
		&Rule{
			ID:       "CPU-EPP",
			Title:    "Energy-performance preference favours performance",
			Area:     "power",
			Severity: Medium,
			Knob:     "/sys/devices/system/cpu/cpu*/cpufreq/energy_performance_preference",
			Why: "With HWP (Intel) or CPPC (AMD) the hardware picks the frequency itself and the EPP hint decides how " +
				"eagerly: intel_pstate maps performance to 0, balance_performance to 128, balance_power to 192 and power " +
				"to 255 on a 0-255 scale, and the higher the value the later and lower the core ramps up. A power-leaning " +
				"hint on a server costs single-thread speed and adds ramp-up latency to every burst of requests.",
			Source: "https://docs.kernel.org/admin-guide/pm/intel_pstate.html#energy-vs-performance-hints",
			Check:  checkEPP,
		},
		&Rule{
			ID:       "CPU-CSTATE-LATENCY",
			Title:    "Idle states deeper than the workload tolerates are disabled",
			Area:     "power",
			Severity: Medium,
			Knob:     "/sys/devices/system/cpu/cpu*/cpuidle/state*/disable",
			Why: "A core in a deep C-state must wake before it can run the thread a packet or timer woke: on Skylake-SP " +
				"C6 has an exit latency of 133 us against 2 us for C1, and that latency lands on the request that woke " +
				"it. Latency-sensitive services disable states whose exit latency exceeds their budget " +
				"(cpu.max_cstate_latency_us); the cost is idle power.",
			Source: "https://github.com/torvalds/linux/blob/master/drivers/idle/intel_idle.c (skx_cstates); https://docs.kernel.org/admin-guide/pm/cpuidle.html",
			Check:  checkCStateLatency,
		},
		&Rule{
			ID:       "CPU-IDLE-DRIVER",
			Title:    "The idle driver suits the platform (haltpoll in latency-sensitive KVM guests)",
			Area:     "power",
			Severity: Low,
			Knob:     "/sys/devices/system/cpu/cpuidle/current_driver",
			Why: "In a KVM guest an idle vCPU executes HLT, which exits to the host; waking it needs an IPI and a VM " +
				"entry. The haltpoll idle driver polls briefly before halting, avoiding both: its authors measured a " +
				"single-thread SAP HANA update benchmark 12% faster (4.72 to 4.18) and a ping-pong test within 96% " +
				"of host-side polling. Worth it where the workload's C-state latency budget is tight; it costs host " +
				"CPU while polling.",
			Source: "https://docs.kernel.org/virt/guest-halt-polling.html; https://git.kernel.org/torvalds/c/2cffe9f6b96fece065ee8522673c90e92ef2085d",
			Check:  checkIdleDriver,
		},
	)
}

func checkGovernor(ctx *Context) Result {
	s := ctx.S
	if r, ok := missingFact(s, "cpu.governors"); !ok {
		return r
	}
	if len(s.CPU.Governors) == 0 {
		return naResult("no cpufreq governor: the firmware or hypervisor controls CPU frequency")
	}
	e, r, ok := target(ctx, "cpu.governor")
	if !ok {
		return r
	}
	pstateActive := s.CPU.ScalingDriver == "intel_pstate" && s.CPU.PstateStatus == "active"
	// HWP is claimed only on evidence: intel_pstate exposes
	// energy_performance_preference only when the hardware manages P-states.
	hwp := pstateActive && len(s.CPU.EPP) > 0
	// intel_pstate's active-mode powersave under HWP is hardware-driven and
	// dynamic, so it is as good as schedutil for a workload that accepts a
	// dynamic governor.
	dynamicOK := hwp && (e.Matches("schedutil") || e.Matches("ondemand"))
	good := func(g string) bool { return e.Matches(g) || (dynamicOK && g == "powersave") }
	observed := valuesByCPU(s.CPU.Governors, s.CPU.Online)
	if s.CPU.ScalingDriver != "" {
		observed += ", driver " + s.CPU.ScalingDriver
		switch {
		case hwp:
			observed += " (" + s.CPU.PstateStatus + ", HWP)"
		case pstateActive:
			observed += " (" + s.CPU.PstateStatus + ", no HWP)"
		case s.CPU.PstateStatus != "":
			observed += " (" + s.CPU.PstateStatus + ")"
		}
	}
	_, powersave := s.CPU.Governors["powersave"]
	atMin := governorAtMinimum(s, good)
	cs := perCPUChanges(s.CPU.Governors, good, e.Value(), "cpu.governors")
	if len(cs) == 0 {
		res := passResult(observed, e.String())
		if powersave && dynamicOK {
			res.Reason = "intel_pstate in active mode with HWP (energy_performance_preference is present): its powersave is a dynamic, hardware-managed policy, which this workload accepts"
		}
		return res
	}
	res := failPerCPU(observed, e.String(), cs, s.CPU.Online)
	switch {
	case powersave && hwp:
		res.Reason = "intel_pstate powersave is dynamic under HWP, but workload " + ctx.W.Name + " wants the frequency held high"
	case powersave && s.CPU.ScalingDriver == "intel_pstate":
		res.Reason = "intel_pstate shows no HWP (no energy_performance_preference, or not in active mode): its powersave is not a hardware-managed policy, and workload " + ctx.W.Name + " wants " + e.String()
	}
	if atMin != "" {
		res.Reason = joinReasons(res.Reason, atMin)
	}
	return res
}

// governorAtMinimum explains CPUs on a failing governor whose
// scaling_cur_freq was at the hardware minimum (cpuinfo_min_freq) when the
// snapshot was taken; "" when there are none or the facts are missing.
func governorAtMinimum(s *snapshot.Snapshot, good func(string) bool) string {
	if s.Missing("cpu.min_khz") != "" || s.Missing("cpu.cur_khz") != "" || s.CPU.MinKHz <= 0 {
		return ""
	}
	var low []int
	for g, cpus := range s.CPU.Governors {
		if good(g) {
			continue
		}
		for _, c := range cpus {
			if cur, ok := s.CPU.CurKHz[strconv.Itoa(c)]; ok && cur <= s.CPU.MinKHz {
				low = append(low, c)
			}
		}
	}
	if len(low) == 0 {
		return ""
	}
	sort.Ints(low)
	return fmt.Sprintf("scaling_cur_freq is at the hardware minimum (%.2f GHz) on CPU %s: those CPUs ran at their lowest "+
		"frequency when the snapshot was taken; under load that is the governor holding them down (seed 004: `CPU MHz` at "+
		"`CPU min MHz`, half the TPS), on an idle host it only shows they were idle, so read it again under load",
		float64(s.CPU.MinKHz)/1e6, cpuList(low))
}

// joinReasons joins two reason sentences.
func joinReasons(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

func checkScalingDriver(ctx *Context) Result {
	s := ctx.S
	if r, ok := missingFact(s, "cpu.scaling_driver"); !ok {
		return r
	}
	d := s.CPU.ScalingDriver
	virt := s.Host.Virtualization
	if d == "" {
		if virt != "" && virt != "none" {
			return naResult("no cpufreq driver in this " + virt + " guest: the hypervisor controls frequency")
		}
		return naResult("no cpufreq driver: the firmware controls frequency (BIOS power profile)")
	}
	has := func(flag string) bool {
		for _, f := range s.CPU.Flags {
			if f == flag {
				return true
			}
		}
		return false
	}
	// The CPU flags that prove native support (hwp, cppc) are used when the
	// snapshot records them; an explicit "=disable" on the command line is
	// proof enough that the native driver was turned away.
	switch {
	case d == "acpi-cpufreq" && s.CPU.Vendor == "GenuineIntel" && (s.Kernel.Params["intel_pstate"] == "disable" || has("hwp")):
		return nativeDriverFail(s.Kernel.Params, d, "intel_pstate", "intel_pstate")
	case d == "acpi-cpufreq" && s.CPU.Vendor == "AuthenticAMD" && (s.Kernel.Params["amd_pstate"] == "disable" || has("cppc")):
		return nativeDriverFail(s.Kernel.Params, d, "amd_pstate", "amd-pstate or amd-pstate-epp")
	}
	res := passResult(d, "the native driver (intel_pstate, amd-pstate, cppc_cpufreq …) where the CPU supports one")
	if d == "acpi-cpufreq" {
		res.Reason = "nothing shows the CPU supports a native driver (no hwp/cppc flag, no " + d + " opt-out on the command line)"
	}
	return res
}

// nativeDriverFail proposes the native driver in active mode; when the
// command line disables it, the fix is to remove that parameter.
func nativeDriverFail(params map[string]string, observed, param, expected string) Result {
	cur := params[param]
	if cur != "" {
		observed += " (" + param + "=" + cur + " on the command line)"
	} else {
		observed += " although the CPU supports " + expected
	}
	res := failResult(observed, expected, Change{Kind: KindBoot, Target: param, Value: "active", Current: cur})
	if cur != "" {
		res.Fix = fmt.Sprintf("replace %s=%s with %s=active on the kernel command line (GRUB_CMDLINE_LINUX in /etc/default/grub, then update-grub) and reboot", param, cur, param)
		res.Revert = fmt.Sprintf("restore %s=%s on the kernel command line and reboot", param, cur)
	}
	return res
}

func checkBoost(ctx *Context) Result {
	s := ctx.S
	if r, ok := missingFact(s, "cpu.boost"); !ok {
		return r
	}
	if s.CPU.Boost == nil {
		return naResult("no boost control (neither cpufreq/boost nor intel_pstate/no_turbo exists)")
	}
	e, r, ok := target(ctx, "cpu.boost")
	if !ok {
		return r
	}
	obs := "0"
	if *s.CPU.Boost {
		obs = "1"
	}
	if e.Matches(obs) {
		return passResult(boostWord(obs), boostWord(e.Value()))
	}
	// intel_pstate's no_turbo inverts the knob: no_turbo=1 means boost off.
	k := BoostKnob(s)
	c := knobChange(k, e.Value(), obs)
	if k.Sources[0].Format == knob.NotBool {
		c = knobChange(k, invert01(e.Value()), invert01(obs))
	}
	return failResult(boostWord(obs), boostWord(e.Value()), c)
}

func boostWord(v string) string {
	if v == "1" {
		return "boost on"
	}
	return "boost off"
}

func invert01(v string) string {
	if v == "1" {
		return "0"
	}
	return "1"
}

func checkFreqCapped(ctx *Context) Result {
	s := ctx.S
	if r, ok := missingFact(s, "cpu.scaling_max_khz", "cpu.max_khz"); !ok {
		return r
	}
	if s.CPU.MaxKHz <= 0 || len(s.CPU.ScalingMaxKHz) == 0 {
		return naResult("no cpufreq limits (scaling_max_freq/cpuinfo_max_freq) on this host")
	}
	if s.CPU.ScalingDriver == "intel_pstate" && s.CPU.Boost != nil && !*s.CPU.Boost {
		return naResult("turbo is off, and intel_pstate then caps scaling_max_freq at the base frequency: see CPU-BOOST")
	}
	max := s.CPU.MaxKHz
	capped := map[string][]int{}
	for id, v := range s.CPU.ScalingMaxKHz {
		cpu, err := strconv.Atoi(id)
		if err != nil {
			return errorResult("scaling_max_khz has a non-numeric CPU id " + strconv.Quote(id))
		}
		if v < max {
			k := strconv.FormatInt(v, 10)
			capped[k] = append(capped[k], cpu)
		}
	}
	expected := "scaling_max_freq = cpuinfo_max_freq (" + ghz(max) + ")"
	if len(capped) == 0 {
		return passResult("no cap: all CPUs may reach "+ghz(max), expected)
	}
	var parts []string
	worst := max
	for k, cpus := range capped {
		sort.Ints(cpus)
		v, _ := strconv.ParseInt(k, 10, 64)
		if v < worst {
			worst = v
		}
		parts = append(parts, fmt.Sprintf("%s on CPU %s", ghz(v), cpuList(cpus)))
	}
	sort.Strings(parts)
	cs := perCPUChanges(capped, func(string) bool { return false }, strconv.FormatInt(max, 10), "cpu.scaling_max_khz")
	res := failPerCPU("capped at "+strings.Join(parts, ", ")+fmt.Sprintf(" (%.0f%% of max)", 100*float64(worst)/float64(max)), expected, cs, s.CPU.Online)
	if float64(worst) < 0.7*float64(max) {
		res.Severity = severityPtr(High)
	}
	return res
}

// ghz renders a kHz frequency as GHz with its unit.
func ghz(khz int64) string { return fmt.Sprintf("%.2f GHz", float64(khz)/1e6) }

func checkEPP(ctx *Context) Result {
	s := ctx.S
	if r, ok := missingFact(s, "cpu.epp"); !ok {
		return r
	}
	if len(s.CPU.EPP) == 0 {
		return naResult("no energy_performance_preference: the CPU or driver has no HWP/CPPC hint")
	}
	e, r, ok := target(ctx, "cpu.epp")
	if !ok {
		return r
	}
	obs := valuesByCPU(s.CPU.EPP, s.CPU.Online)
	cs := perCPUChanges(s.CPU.EPP, e.Matches, e.Value(), "cpu.epp")
	if len(cs) == 0 {
		return passResult(obs, e.String())
	}
	res := failPerCPU(obs, e.String(), cs, s.CPU.Online)
	if _, perf := s.CPU.Governors["performance"]; perf && s.CPU.ScalingDriver == "intel_pstate" {
		res.Reason = "intel_pstate forces EPP to performance under the performance governor; fixing CPU-GOVERNOR may fix this too"
	}
	return res
}

func checkCStateLatency(ctx *Context) Result {
	s := ctx.S
	if r, ok := missingFact(s, "cpu.cstates", "cpu.online"); !ok {
		return r
	}
	if len(s.CPU.CStates) == 0 {
		return naResult("no cpuidle states: idle is handled by the " + orNone(s.CPU.IdleDriver) + " idle driver or the hypervisor")
	}
	if len(s.CPU.Online) == 0 {
		return errorResult("the snapshot lists C-states but no online CPUs")
	}
	e, r, ok := target(ctx, "cpu.max_cstate_latency_us")
	if !ok {
		return r
	}
	var bad []string
	var cs []Change
	deepest := ""
	for i, st := range s.CPU.CStates {
		disabled := map[int]bool{}
		for _, c := range st.DisabledOn {
			disabled[c] = true
		}
		var on []int
		for _, c := range s.CPU.Online {
			if !disabled[c] {
				on = append(on, c)
			}
		}
		if len(on) == 0 {
			continue
		}
		deepest = fmt.Sprintf("%s (%d us)", st.Name, st.LatencyUS)
		if e.Matches(strconv.FormatInt(st.LatencyUS, 10)) {
			continue
		}
		bad = append(bad, fmt.Sprintf("%s (%d us exit latency) enabled on CPU %s", st.Name, st.LatencyUS, cpuList(on)))
		for _, c := range on {
			cs = append(cs, factChange("cpu.cstates[*].disabled_on", "1", "0", strconv.Itoa(c), strconv.Itoa(i)))
		}
	}
	expected := "no enabled C-state with exit latency above " + strings.TrimPrefix(e.String(), "<= ") + " us"
	if len(bad) == 0 {
		if deepest == "" {
			return passResult("all C-states disabled", expected)
		}
		return passResult("deepest enabled: "+deepest, expected)
	}
	return failPerCPU(strings.Join(bad, "; "), expected, cs, s.CPU.Online)
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// haltpollBudgetUS is the C-state latency budget at or below which a KVM
// guest should poll before halting: a halted vCPU's wake-up (IPI, VM exit
// and entry) costs tens of microseconds, more than such a budget allows.
const haltpollBudgetUS = 50

func checkIdleDriver(ctx *Context) Result {
	s := ctx.S
	if r, ok := missingFact(s, "cpu.idle_driver", "host.virtualization"); !ok {
		return r
	}
	d := orNone(s.CPU.IdleDriver)
	virt := s.Host.Virtualization
	if virt == "" || virt == "none" {
		return passResult(d+" on bare metal", "the platform's idle driver (intel_idle, acpi_idle, psci …)")
	}
	if virt != "kvm" && virt != "qemu" {
		return naResult("haltpoll exists only for KVM guests; this guest runs on " + virt)
	}
	e, r, ok := target(ctx, "cpu.max_cstate_latency_us")
	if !ok {
		return r
	}
	if e.Matches(strconv.Itoa(haltpollBudgetUS + 1)) {
		return passResult(d+" in a KVM guest", "any idle driver (C-state budget "+e.String()+" us is loose)")
	}
	expected := "haltpoll (C-state budget " + e.String() + " us)"
	if d == "haltpoll" {
		return passResult(d+" in a KVM guest", expected)
	}
	c := Change{Kind: KindBoot, Target: "cpuidle_haltpoll.force", Value: "1", Current: s.Kernel.Params["cpuidle_haltpoll.force"]}
	return failResult(d+" in a KVM guest", expected, c)
}
