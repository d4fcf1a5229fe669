package snapshot

import (
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/fixture"
)

func TestKernelMetal(t *testing.T) {
	s := runAreas(t, tree(t, "metal", nil), Options{}, collectKernel)
	k := s.Kernel
	wantEq(t, "release", k.Release, "6.1.0-28-amd64")
	wantEq(t, "params", k.Params, map[string]string{
		"BOOT_IMAGE": "/boot/vmlinuz-6.1.0-28-amd64", "root": "UUID=0f5e6d2c-8b1a-4c3e-9f7d-2a6b4c8e1d30", "ro": "", "quiet": "",
	})
	wantEq(t, "vulnerability count", len(k.Vulnerabilities), 14)
	wantEq(t, "mmio", k.Vulnerabilities["mmio_stale_data"], "Mitigation: Clear CPU buffers; SMT vulnerable")
	wantEq(t, "itlb (text kept exactly)", k.Vulnerabilities["itlb_multihit"], "KVM: Mitigation: Split huge pages")
	wantEq(t, "clocksource", k.Clocksource, "tsc")
	wantEq(t, "clocksources", k.Clocksources, []string{"tsc", "hpet", "acpi_pm"})
	if len(k.Modules) != 21 || k.Modules[0] != "coretemp" || k.Modules[20] != "x86_pkg_temp_thermal" {
		t.Errorf("modules = %v, want the 21 of /proc/modules sorted", k.Modules)
	}
	wantEq(t, "preempt", k.Preempt, "dynamic")
	wantEq(t, "tainted", k.Tainted, int64(0))
}

func TestKernelKVM(t *testing.T) {
	s := runAreas(t, tree(t, "kvm", nil), Options{}, collectKernel)
	k := s.Kernel
	wantEq(t, "mitigations", k.Params["mitigations"], "auto,no_guest_host,no_guest_guest")
	if _, ok := k.Params["firecracker_init"]; ok {
		t.Error("arguments after -- (init's) were parsed as kernel parameters")
	}
	wantEq(t, "clocksources", k.Clocksources, []string{"tsc", "kvm-clock"})
	wantMissing(t, s, "kernel.modules", "no loadable module support")
	if k.Vulnerabilities["spectre_v2"] == "" {
		t.Error("spectre_v2 missing")
	}
}

func TestKernelKunpengCmdline(t *testing.T) {
	s := runAreas(t, tree(t, "kunpeng", nil), Options{}, collectKernel)
	p := s.Kernel.Params
	wantEq(t, "repeated key keeps the last", p["smmu.bypassdev"], "0x1000:0x15")
	wantEq(t, "value with comma", p["crashkernel"], "1024M,high")
	wantEq(t, "value with = inside", p["video"], "VGA-1:640x480-32@60me")
	wantEq(t, "clocksource", s.Kernel.Clocksource, "arch_sys_counter")
	// No PREEMPT in the build string: none or voluntary, which no file tells.
	wantMissing(t, s, "kernel.preempt", "none or voluntary")
}

func TestKernelPreempt(t *testing.T) {
	v := "/proc/sys/kernel/version"
	for _, tc := range []struct {
		name  string
		edits map[string]string
		want  string
	}{
		{"debugfs", map[string]string{"/sys/kernel/debug/sched/preempt": "none voluntary (full) lazy\n"}, "dynamic(full)"},
		{"cmdline", map[string]string{"/proc/cmdline": "ro preempt=voluntary\n"}, "dynamic(voluntary)"},
		{"rt", map[string]string{v: "#1 SMP PREEMPT_RT Debian 6.1.119-1\n"}, "rt"},
		{"full", map[string]string{v: "#1 SMP PREEMPT Tue Jan 2 2024\n"}, "full"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := runAreas(t, overlay(t, "metal", tc.edits), Options{}, collectKernel)
			wantEq(t, "preempt", s.Kernel.Preempt, tc.want)
		})
	}
}

func TestKernelMissing(t *testing.T) {
	s := runAreas(t, overlay(t, "metal", map[string]string{
		"/proc/cmdline": fixture.Delete,
		"/sys/devices/system/cpu/vulnerabilities": fixture.Delete,
		"/sys/devices/system/clocksource":         fixture.Delete,
	}), Options{}, collectKernel)
	wantMissing(t, s, "kernel.cmdline", "/proc/cmdline does not exist")
	wantMissing(t, s, "kernel.params", "/proc/cmdline does not exist")
	wantMissing(t, s, "kernel.vulnerabilities", "does not exist")
	wantMissing(t, s, "kernel.clocksource", "clocksource0")
}

func TestParseCmdline(t *testing.T) {
	got := parseCmdline(`BOOT_IMAGE=/vmlinuz ro  quiet dyndbg="file foo.c +p" "acpi_osi=Windows 2020" intel-idle.max_cstate=1 isolcpus=2-3 isolcpus=4-7 -- single foo=bar`)
	wantEq(t, "params", got, map[string]string{
		"BOOT_IMAGE": "/vmlinuz", "ro": "", "quiet": "",
		"dyndbg": "file foo.c +p", "acpi_osi": "Windows 2020",
		"intel_idle.max_cstate": "1", "isolcpus": "4-7",
	})
	wantEq(t, "empty", parseCmdline(""), map[string]string{})
	wantEq(t, "words", strings.Join(cmdlineWords(`a "b c"d e`), "|"), "a|b cd|e")
}
