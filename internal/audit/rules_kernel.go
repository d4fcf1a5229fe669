package audit

import (
	"strings"
)

// Kernel rules: timekeeping, preemption model and the NMI watchdog.

func registerKernelRules() {
	register(
		&Rule{
			ID:       "KERNEL-CLOCKSOURCE",
			Title:    "The clocksource can be read without a system call",
			Area:     "kernel",
			Severity: Medium,
			Knob:     "/sys/devices/system/clocksource/clocksource0/current_clocksource",
			Why: "clock_gettime and gettimeofday run in the vDSO, without entering the kernel, only when the " +
				"clocksource can be read from user space (tsc, kvm-clock, arch_sys_counter, the Hyper-V TSC page). " +
				"With hpet, acpi_pm or (older) xen every call becomes a real system call that reads a device: about " +
				"1-2 us instead of 20-50 ns, 10-50 times slower, and servers read the clock on every request and log " +
				"line. On EC2 Xen guests the two calls measured 77% slower for this reason; seed 002 counts " +
				"gettimeofday among Redis's tuned hot spots.",
			Source: "https://blog.packagecloud.io/two-frequently-used-system-calls-are-77-percent-slower-on-aws-ec2/; seed 002_207da5cc69ba67a4.txt",
			Check:  checkClocksource,
		},
		&Rule{
			ID:        "KERNEL-PREEMPT",
			Title:     "The kernel preemption model suits the workload",
			Area:      "kernel",
			Severity:  Info,
			Workloads: []string{"latency", "throughput"},
			Knob:      "/sys/kernel/debug/sched/preempt (boot: preempt=)",
			Why: "The preemption model bounds how long a running kernel path can delay a woken task. With none or " +
				"voluntary, a long syscall or softirq can hold a CPU for milliseconds before the woken thread runs; " +
				"full (or lazy, or PREEMPT_RT) bounds it at the cost of more context switches. In cyclictest runs under " +
				"load a non-preemptible kernel's worst-case wake-up latency reaches several milliseconds, while " +
				"PREEMPT_RT keeps it below 100 us (OSADL latency plots). Latency services want full, batch throughput wants fewer preemptions. Kernels built with " +
				"PREEMPT_DYNAMIC switch at boot with preempt=.",
			Source: "https://docs.kernel.org/admin-guide/kernel-parameters.html (preempt=); https://wiki.linuxfoundation.org/realtime/documentation/technical_basics/preemption_models; https://www.osadl.org/Latency-plots.latency-plots.0.html",
			Check:  checkPreempt,
		},
		&Rule{
			ID:       "KERNEL-NMI-WATCHDOG",
			Title:    "The NMI watchdog is off where it costs",
			Area:     "kernel",
			Severity: Info,
			Knob:     "kernel.nmi_watchdog",
			Why: "The hard-lockup detector keeps one hardware performance counter per CPU busy and fires an NMI on " +
				"every CPU each watchdog_thresh (10 s). On Intel cores with SMT on that is one of only 4 general " +
				"counters, so perf multiplexes events and says 'Some events weren't counted. Try disabling the NMI " +
				"watchdog'; and the NMIs are jitter for latency-critical cores. Latency profiles turn it off.",
			Source: "https://docs.kernel.org/admin-guide/lockup-watchdogs.html; https://docs.kernel.org/admin-guide/sysctl/kernel.html#nmi-watchdog",
			Check: func(ctx *Context) Result {
				return checkSysctl(ctx, "kernel.nmi_watchdog", "kernel.nmi_watchdog")
			},
		},
	)
}

// vdsoClocksources can be read from user space, so time calls stay in the
// vDSO. Anything else makes clock_gettime a system call.
var vdsoClocksources = []string{"tsc", "kvm-clock", "arch_sys_counter", "hyperv_clocksource_tsc_page", "timebase", "riscv_clocksource"}

func isVDSOClock(c string) bool {
	for _, v := range vdsoClocksources {
		if c == v {
			return true
		}
	}
	return false
}

func checkClocksource(ctx *Context) Result {
	s := ctx.S
	if r, ok := missingFact(s, "kernel.clocksource"); !ok {
		return r
	}
	cur := s.Kernel.Clocksource
	if cur == "" {
		return naResult("the kernel reports no current clocksource")
	}
	expected := "a vDSO-readable clocksource (" + strings.Join(vdsoClocksources[:3], ", ") + " …)"
	if isVDSOClock(cur) {
		return passResult(cur, expected)
	}
	// Prefer tsc (fastest) among what this kernel offers, then the rest.
	best := ""
	for _, want := range vdsoClocksources {
		for _, a := range s.Kernel.Clocksources {
			if a == want && best == "" {
				best = a
			}
		}
	}
	obs := cur + " (time calls are system calls)"
	if len(s.Kernel.Clocksources) > 0 {
		obs += "; available: " + strings.Join(s.Kernel.Clocksources, " ")
	}
	if best == "" {
		res := failResult(obs, expected, Change{
			Kind:  KindCommand,
			Value: "find why tsc was rejected: dmesg | grep -i -E 'clocksource|tsc'; if the CPU has constant_tsc and nonstop_tsc, boot with tsc=reliable",
		})
		res.Revert = "nothing to revert (diagnosis only)"
		return res
	}
	return failResult(obs, best, Change{
		Kind: KindFile, Target: "/sys/devices/system/clocksource/clocksource0/current_clocksource", Value: best, Current: cur,
	})
}

// preemptModel extracts the active model from the kernel's wording:
// "dynamic (voluntary)" or "voluntary" → "voluntary".
// A bare "dynamic" (PREEMPT_DYNAMIC without debugfs or preempt=) has no
// known model and matches no target.
func preemptModel(p string) (model string, dynamic bool) {
	p = strings.TrimSpace(p)
	if !strings.HasPrefix(p, "dynamic") {
		return p, false
	}
	if i := strings.IndexByte(p, '('); i >= 0 {
		return strings.Trim(strings.TrimSpace(p[i+1:]), ")"), true
	}
	return "", true
}

func checkPreempt(ctx *Context) Result {
	s := ctx.S
	if r, ok := missingFact(s, "kernel.preempt"); !ok {
		return r
	}
	if strings.TrimSpace(s.Kernel.Preempt) == "" {
		return naResult("the preemption model is unknown (no preempt= in the kernel version string or debugfs)")
	}
	model, dynamic := preemptModel(s.Kernel.Preempt)
	e, r, ok := target(ctx, "kernel.preempt")
	if !ok {
		return r
	}
	if e.Matches(model) {
		return passResult(s.Kernel.Preempt, e.String())
	}
	if dynamic {
		res := failResult(s.Kernel.Preempt, e.String(), Change{Kind: KindBoot, Target: "preempt", Value: e.Value(), Current: s.Kernel.Params["preempt"]})
		if model == "" {
			res.Observed += " (current model unknown without debugfs)"
			res.Reason = "preempt=" + e.Value() + " makes the model certain"
		}
		return res
	}
	res := failResult(s.Kernel.Preempt, e.String(), Change{
		Kind:  KindCommand,
		Value: "install and boot a kernel built with PREEMPT_DYNAMIC or the " + e.Value() + " model (this one is fixed at build time)",
	})
	res.Revert = "boot the previous kernel"
	return res
}
