package snapshot

import (
	"testing"

	"github.com/perflab/perflab/internal/fixture"
)

func TestCPUMetal(t *testing.T) {
	s := runAreas(t, tree(t, "metal", nil), Options{}, collectCPU)
	c := s.CPU
	wantEq(t, "vendor", c.Vendor, "GenuineIntel")
	wantEq(t, "model", c.Model, "Intel(R) Xeon(R) Gold 6254 CPU @ 3.10GHz")
	wantEq(t, "family/model/stepping", []string{c.Family, c.ModelID, c.Stepping}, []string{"6", "85", "7"})
	wantEq(t, "microcode", c.Microcode, "0x5003604")
	wantEq(t, "online", c.Online, []int{0, 1, 2, 3, 4, 5, 6, 7})
	wantEq(t, "possible", c.Possible, 8)
	wantEq(t, "sockets/cores/threads", []int{c.Sockets, c.Cores, c.Threads}, []int{2, 4, 8})
	wantEq(t, "smt", c.SMT, SMT{Control: "on", Active: true, ThreadsPerCore: 2})
	wantEq(t, "numa", c.NUMA, []NUMANode{
		{ID: 0, CPUs: []int{0, 1, 2, 3}, MemTotalKiB: 32675008, MemFreeKiB: 23511044, HugePagesTotal: 512, HugePagesFree: 256},
		{ID: 1, CPUs: []int{4, 5, 6, 7}, MemTotalKiB: 33020156, MemFreeKiB: 24702296, HugePagesTotal: 512, HugePagesFree: 256},
	})
	wantEq(t, "caches", c.Caches, []Cache{
		{Level: 1, Type: "Data", SizeKiB: 32, SharedWith: []int{0, 2}},
		{Level: 1, Type: "Instruction", SizeKiB: 32, SharedWith: []int{0, 2}},
		{Level: 2, Type: "Unified", SizeKiB: 1024, SharedWith: []int{0, 2}},
		{Level: 3, Type: "Unified", SizeKiB: 25344, SharedWith: []int{0, 1, 2, 3}},
	})
	has := map[string]bool{}
	for _, f := range c.Flags {
		has[f] = true
	}
	if !has["avx512f"] || !has["constant_tsc"] || has["hypervisor"] || has["fpu"] {
		t.Errorf("flags = %v: want avx512f and constant_tsc, no hypervisor, nothing outside the selection", c.Flags)
	}
	wantPresent(t, s, "cpu.microcode")
}

func TestCPUKVM(t *testing.T) {
	s := runAreas(t, tree(t, "kvm", nil), Options{}, collectCPU)
	c := s.CPU
	wantEq(t, "vendor", c.Vendor, "AuthenticAMD")
	wantEq(t, "sockets/cores/threads", []int{c.Sockets, c.Cores, c.Threads}, []int{1, 2, 2})
	wantEq(t, "smt", c.SMT, SMT{Control: "notsupported", Active: false, ThreadsPerCore: 1})
	wantEq(t, "numa nodes", len(c.NUMA), 1)
	var hyper bool
	for _, f := range c.Flags {
		hyper = hyper || f == "hypervisor"
	}
	if !hyper {
		t.Errorf("kvm guest flags %v lack hypervisor", c.Flags)
	}
}

func TestCPUKunpengAarch64(t *testing.T) {
	s := runAreas(t, tree(t, "kunpeng", nil), Options{}, collectCPU)
	c := s.CPU
	wantEq(t, "vendor", c.Vendor, "HiSilicon")
	wantEq(t, "model", c.Model, "Kunpeng-920")
	wantEq(t, "architecture/part/variant", []string{c.Family, c.ModelID, c.Stepping}, []string{"8", "0xd01", "r1p0"})
	wantEq(t, "sockets/cores/threads", []int{c.Sockets, c.Cores, c.Threads}, []int{1, 8, 8})
	wantEq(t, "smt", c.SMT, SMT{Control: "notsupported", Active: false, ThreadsPerCore: 1})
	wantEq(t, "node 1 cpus", c.NUMA[1].CPUs, []int{4, 5, 6, 7})
	wantEq(t, "L3", c.Caches[3], Cache{Level: 3, Type: "Unified", SizeKiB: 32768, SharedWith: []int{0, 1, 2, 3}})
	wantEq(t, "flags", c.Flags, []string{"aes", "asimd", "atomics", "crc32", "dcpop", "pmull", "sha2", "ssbs"})
	wantMissing(t, s, "cpu.microcode", "no microcode field")
}

func TestCPUArmUnknownPart(t *testing.T) {
	fs := overlay(t, "kunpeng", map[string]string{"/proc/cpuinfo": "processor\t: 0\nFeatures\t: fp asimd\nCPU implementer\t: 0x41\nCPU architecture: 8\nCPU variant\t: 0x0\nCPU part\t: 0xfff\nCPU revision\t: 1\n\n"})
	s := runAreas(t, fs, Options{}, collectCPU)
	wantEq(t, "vendor", s.CPU.Vendor, "ARM")
	// An unknown part has no name to guess: the model is Unavailable and
	// says which part the table lacks (lscpu prints "-").
	wantEq(t, "model", s.CPU.Model, "")
	wantEq(t, "model id", s.CPU.ModelID, "0xfff")
	wantMissing(t, s, "cpu.model", "part 0xfff is not in perflab's part table")
}

func TestCPUOfflineCPUs(t *testing.T) {
	// CPUs 5 and 7 offline: only the online ones count, and the core of
	// 5+7 disappears with them.
	fs := overlay(t, "metal", map[string]string{"/sys/devices/system/cpu/online": "0-4,6\n"})
	s := runAreas(t, fs, Options{}, collectCPU)
	wantEq(t, "online", s.CPU.Online, []int{0, 1, 2, 3, 4, 6})
	wantEq(t, "sockets/cores/threads", []int{s.CPU.Sockets, s.CPU.Cores, s.CPU.Threads}, []int{2, 3, 6})
}

func TestCPUWithoutSysfsTopology(t *testing.T) {
	// A container with /sys masked: cpuinfo's physical/core ids count.
	fs := overlay(t, "metal", map[string]string{
		"/sys/devices/system/cpu":  fixture.Delete,
		"/sys/devices/system/node": fixture.Delete,
	})
	s := runAreas(t, fs, Options{}, collectCPU)
	wantEq(t, "online from cpuinfo", s.CPU.Online, []int{0, 1, 2, 3, 4, 5, 6, 7})
	wantEq(t, "sockets/cores", []int{s.CPU.Sockets, s.CPU.Cores}, []int{2, 4})
	wantPresent(t, s, "cpu.online")
	wantMissing(t, s, "cpu.numa", "does not exist")
	wantMissing(t, s, "cpu.caches", "does not exist")
	wantMissing(t, s, "cpu.smt.control", "does not exist")
	// Without smt/active, SMT is judged from threads per core.
	wantEq(t, "smt active", s.CPU.SMT.Active, true)
}

func TestCPUNoCPUInfo(t *testing.T) {
	s := runAreas(t, overlay(t, "kvm", map[string]string{"/proc/cpuinfo": fixture.Delete}), Options{}, collectCPU)
	wantMissing(t, s, "cpu.model", "/proc/cpuinfo does not exist")
	wantEq(t, "online still from sysfs", s.CPU.Online, []int{0, 1})
}

func TestParseSizeKiB(t *testing.T) {
	for in, want := range map[string]int64{"32K": 32, "25344K": 25344, "32M": 32768, "1G": 1 << 20, "65536": 64} {
		got, err := parseSizeKiB(in)
		if err != nil || got != want {
			t.Errorf("parseSizeKiB(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	if _, err := parseSizeKiB("big"); err == nil {
		t.Error("parseSizeKiB(big) succeeded")
	}
}

// procfs's tree has node1 and node2 with only a vmstat file: their CPUs are
// unknown, not an empty set.
func TestNUMANodeWithoutCPUList(t *testing.T) {
	s := runAreas(t, tree(t, "procfs", nil), Options{}, collectCPU)
	wantMissing(t, s, "cpu.numa[1].cpus", "node1/cpulist does not exist")
	wantMissing(t, s, "cpu.numa[2].cpus", "node2/cpulist does not exist")
}
