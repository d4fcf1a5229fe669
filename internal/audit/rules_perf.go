package audit

// Rules that decide whether perflab (and perf) can profile this host. Their
// IDs are stable: `perflab profile` cites them when perf is refused.

func registerPerfRules() {
	register(
		&Rule{
			ID:       "PERF-EVENT-PARANOID",
			Title:    "Perf events are usable for profiling",
			Area:     "kernel",
			Severity: Low,
			Knob:     "kernel.perf_event_paranoid",
			Why: "perf_event_paranoid 3 (Debian and Ubuntu patch it in) refuses perf_event_open to every user without " +
				"CAP_PERFMON, and 2 hides kernel stacks from them. Seed 003 is exactly that: 'perf_event_open(...) " +
				"failed with unexpected error 13 (Permission denied) … The current value is 3', and no flame graph " +
				"until the value went down. 2 lets users profile their own processes in user space; 1 adds CPU-wide " +
				"events, -1 everything.",
			Source: "seed 003_cc405e99d688f6f5.txt; https://docs.kernel.org/admin-guide/perf-security.html",
			Check: func(ctx *Context) Result {
				return checkSysctl(ctx, "kernel.perf_event_paranoid", "kernel.perf_event_paranoid")
			},
		},
		&Rule{
			ID:       "PERF-KPTR-RESTRICT",
			Title:    "Kernel symbols are readable for profiling",
			Area:     "kernel",
			Severity: Low,
			Knob:     "kernel.kptr_restrict",
			Why: "With kptr_restrict=2 /proc/kallsyms shows zero addresses even to root, so perf cannot name kernel " +
				"functions: every kernel frame in a flame graph becomes [unknown] and time spent in the kernel (often " +
				"the point, e.g. in seed 000's network-bound proxy) cannot be attributed. Seed 003 resets it to 0 " +
				"before profiling; 1 already lets root and CAP_SYSLOG read the symbols.",
			Source: "seed 003_cc405e99d688f6f5.txt; https://docs.kernel.org/admin-guide/sysctl/kernel.html#kptr-restrict",
			Check: func(ctx *Context) Result {
				return checkSysctl(ctx, "kernel.kptr_restrict", "kernel.kptr_restrict")
			},
		},
	)
}
