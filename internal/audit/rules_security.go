package audit

import (
	"fmt"
	"sort"
	"strings"

	"github.com/perflab/perflab/internal/snapshot"
)

// Security trade-offs that cost performance. Each is judged against the
// workload's trust policy (Workload.Trusted, `--trusted`): on a host shared
// with untrusted code a disabled protection is the finding; on a trusted
// single-tenant host the protection's cost is.

func registerSecurityRules() {
	register(
		&Rule{
			ID:       "KERNEL-MITIGATIONS",
			Title:    "CPU vulnerability mitigations match the trust policy",
			Area:     "security",
			Severity: High,
			Knob:     "/proc/cmdline (mitigations=, nopti, nospectre_v2 …); /sys/devices/system/cpu/vulnerabilities/*",
			Why: "Spectre/Meltdown-class mitigations (page-table isolation, retpolines, buffer clearing on every kernel " +
				"exit) tax system calls, context switches and interrupts. Seed 000: a Java proxy on kernel 4.19 went from " +
				"16000 to 20000 TPS with meltdown/spectre mitigations off and to 21000 with the rest off (+25-31%); the " +
				"vendor turned them off because only its own code ran on the host. On a host that runs untrusted code " +
				"(other tenants, customer workloads) mitigations off lets that code read kernel and neighbour memory: " +
				"a high-severity security finding. Mark a dedicated host --trusted to get the performance verdict.",
			Source: "seed 000_6e19edf94e0f8be9.txt; https://docs.kernel.org/admin-guide/hw-vuln/index.html",
			Check:  checkMitigations,
		},
		&Rule{
			ID:       "KERNEL-AUDIT",
			Title:    "Kernel audit is off on a trusted host dedicated to the workload",
			Area:     "security",
			Severity: Low,
			Knob:     "/proc/cmdline (audit=); auditd service",
			Why: "With audit rules loaded every matching system call builds and queues an audit record: Red Hat measured " +
				"a syscall loop going from 0.6 s to 4.4 s (7x) with one syscall rule loaded, and auditd itself uses CPU " +
				"and disk. Seed 002 boots with audit=0 for its nginx/redis performance runs. On a shared or regulated " +
				"host the audit trail is worth its cost, so this fails only on hosts marked --trusted.",
			Source: "https://access.redhat.com/node/666333; seed 002_207da5cc69ba67a4.txt",
			Check:  checkAudit,
		},
	)
}

// mitigationOffParams are command-line parameters that turn a mitigation off
// (documented in kernel-parameters.txt). mitigations=off covers them all.
var mitigationOffParams = map[string]string{
	"nopti": "", "pti": "off", "kpti": "0", "nospectre_v1": "", "nospectre_v2": "", "spectre_v2": "off",
	"spectre_v2_user": "off", "nospec_store_bypass_disable": "", "spec_store_bypass_disable": "off",
	"no_stf_barrier": "", "l1tf": "off", "mds": "off", "tsx_async_abort": "off", "mmio_stale_data": "off",
	"retbleed": "off", "srbds": "off", "spectre_bhi": "off", "nospectre_bhb": "", "gather_data_sampling": "off",
	"reg_file_data_sampling": "off", "spec_rstack_overflow": "off",
}

// Mitigations summarises the kernel's mitigation state from a snapshot: what
// the command line turned off and what the vulnerabilities files report. The
// exporter publishes State as an enum.
type Mitigations struct {
	State      string   // "off" (mitigations=off), "partial" (some turned off), "auto" (kernel default), "auto,nosmt"
	Disabled   []string // command-line parameters that turn mitigations off, as written
	Vulnerable []string // vulnerabilities snapshot.ClassifyVulnerability classes vulnerable
	Mitigated  []string // vulnerabilities it classes mitigated
}

// MitigationStates are the values Mitigations.State takes.
var MitigationStates = []string{"auto", "auto,nosmt", "partial", "off"}

// MitigationsOf reads the mitigation state of a snapshot.
func MitigationsOf(params, vulns map[string]string) Mitigations {
	var m Mitigations
	for k, v := range params {
		if want, ok := mitigationOffParams[k]; ok && (want == "" || v == want) {
			m.Disabled = append(m.Disabled, paramText(k, v))
		}
	}
	mv, hasMode := params["mitigations"]
	if hasMode && strings.HasPrefix(mv, "off") {
		m.Disabled = append(m.Disabled, paramText("mitigations", mv))
	}
	sort.Strings(m.Disabled)
	k := snapshot.Kernel{Vulnerabilities: vulns}
	m.Vulnerable = k.VulnerabilitiesIn(snapshot.VulnVulnerable)
	m.Mitigated = k.VulnerabilitiesIn(snapshot.VulnMitigated)
	switch {
	case hasMode && strings.HasPrefix(mv, "off"):
		m.State = "off"
	case len(m.Disabled) > 0:
		m.State = "partial"
	case hasMode && strings.Contains(mv, "nosmt"):
		m.State = "auto,nosmt"
	default:
		m.State = "auto"
	}
	return m
}

func paramText(k, v string) string {
	if v == "" {
		return k
	}
	return k + "=" + v
}

func checkMitigations(ctx *Context) Result {
	s := ctx.S
	if r, ok := missingFact(s, "kernel.params"); !ok {
		return r
	}
	vulnReason := s.Missing("kernel.vulnerabilities")
	m := MitigationsOf(s.Kernel.Params, s.Kernel.Vulnerabilities)
	if vulnReason != "" && len(m.Disabled) == 0 {
		return naResult("kernel.vulnerabilities unavailable (" + vulnReason + ") and no mitigation is turned off on the command line")
	}
	observed := describeMitigations(m, len(s.Kernel.Vulnerabilities))
	if !ctx.W.Trusted {
		expected := "mitigations on (kernel default) on a host that may run untrusted code"
		if len(m.Disabled) == 0 {
			res := passResult(observed, expected)
			if len(m.Vulnerable) > 0 {
				res.Reason = "still vulnerable without a command-line opt-out (needs microcode, hypervisor or kernel support): " + strings.Join(m.Vulnerable, ", ")
			}
			return res
		}
		res := failResult(observed, expected, mitigationsOnChanges(s.Kernel.Params, m)...)
		res.Fix = fmt.Sprintf("remove %s from the kernel command line (GRUB_CMDLINE_LINUX in /etc/default/grub, then update-grub) and reboot; or, if only your own code runs here, rerun with --trusted", strings.Join(m.Disabled, " "))
		res.Revert = fmt.Sprintf("add %s back to the kernel command line and reboot", strings.Join(m.Disabled, " "))
		res.Reason = "security: the host is not marked --trusted"
		return res
	}
	expected := "mitigations=off (trusted single-tenant host)"
	switch {
	case m.State == "off":
		return passResult(observed, expected)
	case vulnReason != "":
		return naResult("cannot tell which mitigations are active: kernel.vulnerabilities unavailable (" + vulnReason + ")")
	case len(m.Mitigated) == 0:
		res := passResult(observed, expected)
		res.Reason = "no mitigation is active on this CPU, so none costs anything"
		return res
	}
	res := failResult(observed, expected, Change{Kind: KindBoot, Target: "mitigations", Value: "off", Current: s.Kernel.Params["mitigations"]})
	res.Severity = severityPtr(Medium)
	res.Reason = "performance: the host is marked --trusted, so mitigations only cost"
	return res
}

func describeMitigations(m Mitigations, total int) string {
	var parts []string
	if len(m.Disabled) > 0 {
		parts = append(parts, "turned off on the command line: "+strings.Join(m.Disabled, " "))
	} else {
		parts = append(parts, "kernel default ("+m.State+")")
	}
	if total > 0 {
		parts = append(parts, fmt.Sprintf("%d of %d vulnerabilities mitigated", len(m.Mitigated), total))
		if len(m.Vulnerable) > 0 {
			parts = append(parts, "vulnerable: "+strings.Join(m.Vulnerable, ", "))
		}
	}
	return strings.Join(parts, "; ")
}

// mitigationsOnChanges are the boot changes that restore the defaults: drop
// each opt-out. KindBoot can only add parameters, so removals are commands.
func mitigationsOnChanges(params map[string]string, m Mitigations) []Change {
	var cs []Change
	for _, d := range m.Disabled {
		if strings.HasPrefix(d, "mitigations=") {
			cs = append(cs, Change{Kind: KindBoot, Target: "mitigations", Value: "auto", Current: params["mitigations"]})
			continue
		}
		cs = append(cs, Change{Kind: KindCommand, Value: "remove " + d + " from the kernel command line", Current: "add " + d + " to the kernel command line"})
	}
	return cs
}

func checkAudit(ctx *Context) Result {
	s := ctx.S
	if r, ok := missingFact(s, "kernel.params", "services"); !ok {
		return r
	}
	param, set := s.Kernel.Params["audit"]
	auditd, known := s.Services["auditd"]
	running := known && auditd.Running
	var obs []string
	switch {
	case set:
		obs = append(obs, "audit="+param+" on the command line")
	default:
		obs = append(obs, "no audit= on the command line")
	}
	if running {
		obs = append(obs, fmt.Sprintf("auditd running (pid %s)", pidList(auditd.PIDs)))
	} else {
		obs = append(obs, "auditd not running")
	}
	observed := strings.Join(obs, ", ")
	if !ctx.W.Trusted {
		res := passResult(observed, "audit as configured (host not marked --trusted)")
		res.Reason = "the audit trail is kept on hosts that are not marked --trusted"
		return res
	}
	expected := "audit=0 and no auditd (trusted host dedicated to the workload)"
	if set && param == "0" {
		return passResult(observed, expected)
	}
	if !running && param != "1" {
		res := passResult(observed, expected)
		res.Reason = "no auditd loads rules, so kernel audit costs next to nothing"
		return res
	}
	cs := []Change{{Kind: KindBoot, Target: "audit", Value: "0", Current: s.Kernel.Params["audit"]}}
	if running {
		cs = append(cs, Change{Kind: KindCommand, Value: "systemctl disable --now auditd", Current: "systemctl enable --now auditd"})
	}
	return failResult(observed, expected, cs...)
}

func pidList(v []int) string {
	parts := make([]string, len(v))
	for i, x := range v {
		parts[i] = fmt.Sprint(x)
	}
	if len(parts) == 0 {
		return "unknown"
	}
	return strings.Join(parts, ", ")
}
