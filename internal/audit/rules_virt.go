package audit

import "fmt"

// Virtualisation rules: what a guest loses to its hypervisor.

func registerVirtRules() {
	register(&Rule{
		ID:       "VIRT-STEAL",
		Title:    "The hypervisor does not steal a significant share of CPU time",
		Area:     "virt",
		Severity: Medium,
		Knob:     "/proc/stat (steal column)",
		Why: "Steal time is time a vCPU was ready to run while the host ran something else. It is lost outright: " +
			"10% steal is at least 10% less CPU for the workload, and each steal episode is a host scheduling " +
			"slice (milliseconds) added to whatever request was running. Benchmarks on an oversubscribed host " +
			"are not reproducible. The share here is since boot, so a recent burst can hide in a long uptime; " +
			"`perflab bench` monitors it per run.",
		Source: "https://docs.kernel.org/filesystems/proc.html (/proc/stat steal); https://www.brendangregg.com/blog/2017-11-29/aws-ec2-virtualization-2017.html",
		Check:  checkSteal,
	})
}

func checkSteal(ctx *Context) Result {
	s := ctx.S
	if r, ok := missingFact(s, "load.user_pct", "host.virtualization"); !ok {
		return r
	}
	if v := s.Host.Virtualization; v == "none" {
		return naResult("bare metal: there is no hypervisor to steal time")
	}
	e, r, ok := target(ctx, "steal.max_pct")
	if !ok {
		return r
	}
	obs := fmt.Sprintf("%.1f%% of CPU time since boot", s.Load.StealPct)
	exp := e.String() + " %"
	if e.Matches(fmt.Sprintf("%.3f", s.Load.StealPct)) {
		return passResult(obs, exp)
	}
	res := failResult(obs, exp, Change{
		Kind:  KindCommand,
		Value: "move the VM to a less contended host or a dedicated-core instance type, or ask the provider about oversubscription",
	})
	res.Revert = "nothing to revert (no change to this host)"
	if bound, ok := parseFloat(e.Value()); ok && s.Load.StealPct > 2*bound {
		res.Severity = severityPtr(High)
	}
	return res
}
