package snapshot

import (
	"os"
	"testing"

	"github.com/perflab/perflab/internal/fixture"
)

func all8() []int { return []int{0, 1, 2, 3, 4, 5, 6, 7} }

func TestPowerMetal(t *testing.T) {
	s := runAreas(t, tree(t, "metal", nil), Options{}, collectCPU, collectPower)
	c := s.CPU
	wantEq(t, "driver", c.ScalingDriver, "intel_pstate")
	wantEq(t, "governors", c.Governors, map[string][]int{"powersave": all8()})
	wantEq(t, "epp", c.EPP, map[string][]int{"balance_performance": all8()})
	wantEq(t, "min/max", []int64{c.MinKHz, c.MaxKHz}, []int64{1200000, 4000000})
	wantEq(t, "cur cpu6", c.CurKHz["6"], int64(3899004))
	wantEq(t, "scaling max cpu3", c.ScalingMaxKHz["3"], int64(4000000))
	if c.Boost == nil || !*c.Boost {
		t.Errorf("boost = %v, want on (intel_pstate/no_turbo is 0)", c.Boost)
	}
	wantEq(t, "pstate", c.PstateStatus, "active")
	wantEq(t, "idle driver/governor", []string{c.IdleDriver, c.IdleGovernor}, []string{"intel_idle", "menu"})
	var names []string
	for _, st := range c.CStates {
		names = append(names, st.Name)
	}
	wantEq(t, "cstates", names, []string{"POLL", "C1", "C1E", "C6"})
	wantEq(t, "C6", c.CStates[3], CState{Name: "C6", Desc: "MWAIT 0x20", LatencyUS: 133, Residency: 600})
	for _, f := range cpufreqFacts {
		wantPresent(t, s, f)
	}
}

func TestPowerKVMHasNoCpufreq(t *testing.T) {
	s := runAreas(t, tree(t, "kvm", nil), Options{}, collectCPU, collectPower)
	for _, f := range append(cpufreqFacts, "cpu.boost") {
		wantMissing(t, s, f, "no cpufreq driver")
	}
	if s.CPU.Governors != nil || s.CPU.Boost != nil {
		t.Errorf("governors %v / boost %v set without cpufreq", s.CPU.Governors, s.CPU.Boost)
	}
	wantMissing(t, s, "cpu.pstate_status", "neither intel_pstate nor amd_pstate")
	wantEq(t, "idle driver", s.CPU.IdleDriver, "haltpoll")
	wantEq(t, "cstates", len(s.CPU.CStates), 2)
}

func TestPowerMixedGovernorsAndDisabledCState(t *testing.T) {
	p := "/sys/devices/system/cpu/"
	fs := overlay(t, "metal", map[string]string{
		p + "cpufreq/policy2/scaling_governor":              "performance\n",
		p + "cpufreq/policy5/scaling_governor":              "performance\n",
		p + "cpufreq/policy5/energy_performance_preference": "performance\n",
		p + "cpufreq/policy7/scaling_max_freq":              "2000000\n",
		p + "intel_pstate/no_turbo":                         "1\n",
		p + "cpu1/cpuidle/state3/disable":                   "1\n",
		p + "cpu6/cpuidle/state3/disable":                   "1\n",
	})
	s := runAreas(t, fs, Options{}, collectCPU, collectPower)
	wantEq(t, "governors", s.CPU.Governors, map[string][]int{"powersave": {0, 1, 3, 4, 6, 7}, "performance": {2, 5}})
	wantEq(t, "epp performance", s.CPU.EPP["performance"], []int{5})
	wantEq(t, "capped cpu7", s.CPU.ScalingMaxKHz["7"], int64(2000000))
	if s.CPU.Boost == nil || *s.CPU.Boost {
		t.Errorf("boost = %v, want off (no_turbo 1)", s.CPU.Boost)
	}
	wantEq(t, "C6 disabled on", s.CPU.CStates[3].DisabledOn, []int{1, 6})
	wantEq(t, "C1 disabled on", s.CPU.CStates[1].DisabledOn, []int(nil))
}

func TestPowerAcpiCpufreqBoostAndSharedPolicy(t *testing.T) {
	// acpi-cpufreq: one policy for CPUs 0-3 (affected_cpus lists them),
	// boost in cpufreq/boost, no EPP and no intel_pstate.
	p := "/sys/devices/system/cpu/"
	edits := map[string]string{
		p + "intel_pstate":                   fixture.Delete,
		p + "cpufreq/boost":                  "0\n",
		p + "cpufreq/policy0/affected_cpus":  "0 1 2 3\n",
		p + "cpufreq/policy0/scaling_driver": "acpi-cpufreq\n",
	}
	for _, n := range []string{"1", "2", "3"} {
		edits[p+"cpufreq/policy"+n] = fixture.Delete
	}
	for _, n := range []string{"0", "4", "5", "6", "7"} {
		edits[p+"cpufreq/policy"+n+"/energy_performance_preference"] = fixture.Delete
	}
	s := runAreas(t, overlay(t, "metal", edits), Options{}, collectCPU, collectPower)
	wantEq(t, "driver", s.CPU.ScalingDriver, "acpi-cpufreq")
	wantEq(t, "governors", s.CPU.Governors, map[string][]int{"powersave": all8()})
	wantEq(t, "cur cpu3 from shared policy", s.CPU.CurKHz["3"], int64(1200000))
	if s.CPU.Boost == nil || *s.CPU.Boost {
		t.Errorf("boost = %v, want off", s.CPU.Boost)
	}
	wantMissing(t, s, "cpu.epp", "acpi-cpufreq driver has no energy_performance_preference")
	wantMissing(t, s, "cpu.pstate_status", "")
}

func TestPowerKunpeng(t *testing.T) {
	s := runAreas(t, tree(t, "kunpeng", nil), Options{}, collectCPU, collectPower)
	wantEq(t, "driver", s.CPU.ScalingDriver, "cppc_cpufreq")
	wantEq(t, "governors", s.CPU.Governors, map[string][]int{"schedutil": all8()})
	wantMissing(t, s, "cpu.boost", "cppc_cpufreq driver exposes no boost")
	wantEq(t, "idle driver", s.CPU.IdleDriver, "none")
	wantMissing(t, s, "cpu.cstates", "no cpuidle driver is loaded")
}

func TestPowerNoCPUIdle(t *testing.T) {
	s := runAreas(t, overlay(t, "kvm", map[string]string{"/sys/devices/system/cpu/cpuidle": fixture.Delete}), Options{}, collectCPU, collectPower)
	wantMissing(t, s, "cpu.idle_driver", "CONFIG_CPU_IDLE")
	wantMissing(t, s, "cpu.cstates", "CONFIG_CPU_IDLE")
}

// Defect 1: node_exporter's fixture (like kernels before 4.3) has real
// cpuN/cpufreq directories and no cpufreq/policy*. The governor must still
// be read, per CPU.
func TestPowerPerCPULayoutNodeExporter(t *testing.T) {
	s := runAreas(t, tree(t, "node_exporter", nil), Options{}, collectCPU, collectPower)
	c := s.CPU
	wantEq(t, "driver", c.ScalingDriver, "intel_pstate")
	wantEq(t, "governors", c.Governors, map[string][]int{"powersave": {0, 1, 2, 3}})
	wantEq(t, "cur", c.CurKHz, map[string]int64{"0": 1699981, "1": 1699981, "2": 8000, "3": 8000})
	wantEq(t, "scaling max cpu1", c.ScalingMaxKHz["1"], int64(3700000))
	wantPresent(t, s, "cpu.governors")
	// The tree has no cpuinfo_min/max_freq: missing, not a silent 0.
	wantMissing(t, s, "cpu.min_khz", "cpu0/cpufreq/cpuinfo_min_freq does not exist")
	wantMissing(t, s, "cpu.epp", "no energy_performance_preference")
}

// On the old layout the CPUs of one policy link to the owner's directory:
// they are one policy, read once, governing every CPU that links to it.
func TestPowerPerCPULayoutSharedPolicy(t *testing.T) {
	fs := fixture.Tree(t, "node_exporter", nil) // a private copy: the test edits it
	d := fs.Path("/sys/devices/system/cpu")
	for _, cpu := range []string{"cpu1", "cpu2", "cpu3"} {
		if err := os.RemoveAll(d + "/" + cpu + "/cpufreq"); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink("../cpu0/cpufreq", d+"/"+cpu+"/cpufreq"); err != nil {
			t.Fatal(err)
		}
	}
	s := runAreas(t, fs, Options{}, collectCPU, collectPower)
	wantEq(t, "governors", s.CPU.Governors, map[string][]int{"powersave": {0, 1, 2, 3}})
	wantEq(t, "cur cpu3", s.CPU.CurKHz["3"], int64(1699981))
}

// A captured tree holds what was copied: a missing kernel interface there
// is "not in the tree", with the kernel's lack only one explanation.
func TestAbsenceInCapturedTreeIsNotAClaim(t *testing.T) {
	s := runAreas(t, tree(t, "node_exporter", nil), Options{}, collectCPU, collectPower, collectMemory)
	wantMissing(t, s, "cpu.idle_driver", "/sys/devices/system/cpu/cpuidle does not exist in the captured tree: the kernel has no cpuidle (CONFIG_CPU_IDLE off), or it was not copied")
	wantMissing(t, s, "memory.thp", "transparent_hugepage/ does not exist in the captured tree: the kernel has no transparent huge pages, or it was not copied")
	s = runAreas(t, tree(t, "kvm", nil), Options{}, collectCPU, collectPower)
	wantMissing(t, s, "cpu.governors", "cpu*/cpufreq exists in the captured tree: no cpufreq driver")
}

// procfs's tree mixes the layouts: cpufreq/policy0 (CPU 0), an empty
// cpufreq/policy1, and a real cpu1/cpufreq directory. Both CPUs' governors
// are read; the empty policy directory claims no CPU.
func TestPowerMixedLayoutProcfs(t *testing.T) {
	s := runAreas(t, tree(t, "procfs", nil), Options{}, collectCPU, collectPower)
	wantEq(t, "governors", s.CPU.Governors, map[string][]int{"powersave": {0, 1}})
	wantEq(t, "driver", s.CPU.ScalingDriver, "intel_pstate")
	wantEq(t, "min/max", []int64{s.CPU.MinKHz, s.CPU.MaxKHz}, []int64{800000, 2400000})
}
