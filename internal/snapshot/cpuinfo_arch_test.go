package snapshot

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/fixture"
)

// Defect 4: the architecture inferred from real cpuinfo of each
// architecture (testdata/cpuinfo/ORIGIN.md), for trees without
// /proc/sys/kernel/arch. s390x (vendor_id IBM/S390, no lm flag) was i686.
func TestArchFromRealCPUInfo(t *testing.T) {
	cases := map[string]struct{ arch, reason string }{
		"testdata/cpuinfo/s390x.txt":                         {arch: "s390x"},
		"testdata/cpuinfo/aarch64-kunpeng920.txt":            {arch: "aarch64"},
		"testdata/cpuinfo/armv7.txt":                         {arch: "armv7l"},
		"testdata/cpuinfo/armv7-legacy.txt":                  {arch: "armv7l"},
		"testdata/cpuinfo/armv6-legacy.txt":                  {arch: "armv6l"},
		"testdata/cpuinfo/riscv64.txt":                       {arch: "riscv64"},
		"testdata/cpuinfo/loongarch64.txt":                   {arch: "loongarch64"},
		"testdata/cpuinfo/mips64-octeon.txt":                 {arch: "mips64"},
		"testdata/cpuinfo/i386-xenpara.txt":                  {arch: "i686"}, // a 32-bit kernel on a CPU with lm
		"testdata/cpuinfo/ppc64-power7.txt":                  {reason: "POWER CPU (POWER7 (architected), altivec supported) but not the kernel's byte order"},
		filepath.Join(fixture.Dir("procfs"), "proc/cpuinfo"): {arch: "x86_64"},
		filepath.Join(fixture.Dir("metal"), "proc/cpuinfo"):  {arch: "x86_64"},
	}
	for path, want := range cases {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		arch, why := parseCPUInfo(data).arch()
		if arch != want.arch || (want.reason != "" && !strings.Contains(why, want.reason)) {
			t.Errorf("%s: arch %q (reason %q), want %q (reason containing %q)", filepath.Base(path), arch, why, want.arch, want.reason)
		}
	}
	// A 32-bit x86 CPU: the metal cpuinfo without the lm flag.
	data, _ := os.ReadFile(filepath.Join(fixture.Dir("metal"), "proc/cpuinfo"))
	if arch, _ := parseCPUInfo([]byte(strings.ReplaceAll(string(data), " lm ", " "))).arch(); arch != "i686" {
		t.Errorf("x86 without lm: %q, want i686", arch)
	}
}

// The collected host.arch of an s390x tree without /proc/sys/kernel/arch.
func TestHostArchS390x(t *testing.T) {
	data, err := os.ReadFile("testdata/cpuinfo/s390x.txt")
	if err != nil {
		t.Fatal(err)
	}
	fs := fixture.Tree(t, "procfs", map[string]string{"/proc/cpuinfo": string(data)})
	s, err := Collect(fs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if s.Host.Arch != "s390x" {
		t.Errorf("host.arch %q, want s390x", s.Host.Arch)
	}
}
