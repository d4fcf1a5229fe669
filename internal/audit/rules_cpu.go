package audit

import (
	"github.com/perflab/perflab/internal/knob"
	"sort"
	"strconv"
	"strings"
)

// CPU topology rules. SMT is judged twice: as a security question (does this
// CPU leak between siblings, and is the host shared with untrusted code?) and
// as a latency question (does the workload tolerate a busy sibling?).

func registerCpuRules() {
	register(&Rule{
		ID:       "CPU-SMT",
		Title:    "SMT state fits the workload and the trust policy",
		Area:     "cpu",
		Severity: Medium,
		Knob:     "/sys/devices/system/cpu/smt/control",
		Why: "Two SMT threads share one core's execution units and L1/L2 caches. For security: on CPUs that report " +
			"'SMT vulnerable' (MDS, L1TF, MMIO stale data) a thread can read its sibling's data, and the kernel " +
			"documents that full mitigation needs SMT off when untrusted code shares the host. For latency: with the " +
			"sibling busy a thread gets roughly half to two thirds of the core (Intel rates SMT at up to 30% extra " +
			"throughput for two threads), so tail latency depends on a neighbour's load. Turning SMT off halves the " +
			"logical CPUs; do it only where one of these applies.",
		Source: "https://docs.kernel.org/admin-guide/hw-vuln/mds.html; https://docs.kernel.org/admin-guide/hw-vuln/l1tf.html",
		Check:  checkSMT,
	})
}

func checkSMT(ctx *Context) Result {
	s := ctx.S
	if r, ok := missingFact(s, "cpu.smt"); !ok {
		return r
	}
	ctl := s.CPU.SMT.Control
	switch ctl {
	case "notsupported", "notimplemented", "":
		if !s.CPU.SMT.Active {
			return naResult("the CPU has no SMT (smt/control: " + orNone(ctl) + ")")
		}
	}
	observed := "off"
	if s.CPU.SMT.Active {
		observed = "on"
		if s.CPU.SMT.ThreadsPerCore > 1 {
			observed += " (" + strconv.Itoa(s.CPU.SMT.ThreadsPerCore) + " threads per core)"
		}
	}
	if !s.CPU.SMT.Active {
		return passResult(observed+" (control: "+orNone(ctl)+")", "any")
	}
	// Halving the logical CPUs is a capacity decision, not a knob tune
	// should flip on its own: the fix is an instruction (nosmt at boot; the
	// runtime switch is /sys/devices/system/cpu/smt/control).
	fix := Change{Kind: KindBoot, Target: "nosmt"}
	withText := func(res Result) Result {
		if ctl != "" { // kernels before 4.19 have no runtime switch
			ctlFile := knob.MustLookup("cpu.smt.control").Name()
			res.Fix = "echo off > " + ctlFile + "   # now; and to keep it: " + FixCommands([]Change{fix})
			res.Revert = "echo on > " + ctlFile + "; " + RevertCommands([]Change{fix})
		}
		return res
	}
	if !ctx.W.Trusted {
		if leaks := smtLeaks(s.Kernel.Vulnerabilities); len(leaks) > 0 {
			res := failResult(observed+"; "+strings.Join(leaks, ", ")+" report SMT vulnerable",
				"off on a host shared with untrusted code (or mark it --trusted)", fix)
			res.Reason = "security: siblings can read each other's data on this CPU"
			return withText(res)
		}
	}
	e, r, ok := target(ctx, "cpu.smt")
	if !ok {
		return r
	}
	if e.Matches("on") {
		return passResult(observed, e.String())
	}
	res := failResult(observed, e.String(), fix)
	res.Severity = severityPtr(Low)
	res.Reason = "latency: a busy sibling slows this workload's threads"
	return withText(res)
}

// smtLeaks lists vulnerabilities whose state says SMT siblings can leak.
func smtLeaks(v map[string]string) []string {
	var out []string
	for name, text := range v {
		if strings.Contains(text, "SMT vulnerable") {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}
