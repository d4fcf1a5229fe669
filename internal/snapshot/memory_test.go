package snapshot

import (
	"testing"

	"github.com/perflab/perflab/internal/fixture"
)

func TestMemoryMetal(t *testing.T) {
	s := runAreas(t, tree(t, "metal", nil), Options{}, collectMemory)
	m := s.Memory
	wantEq(t, "total/available", []int64{m.TotalKiB, m.AvailableKiB}, []int64{65695164, 58812416})
	wantEq(t, "swap", []int64{m.SwapTotalKiB, m.SwapFreeKiB}, []int64{8388604, 8388604})
	wantEq(t, "anon huge", m.AnonHugePagesKiB, int64(4194304))
	wantEq(t, "hugepages", []int64{m.HugePagesTotal, m.HugePagesFree, m.HugePageSizeKiB}, []int64{1024, 512, 2048})
	wantEq(t, "thp", m.THP, THP{Enabled: "madvise", Defrag: "madvise", ShmemEnabled: "never", KhugepagedDefrag: "1"})
	wantEq(t, "ksm", m.KSMRun, "0")
}

func TestMemoryTHPVariants(t *testing.T) {
	thp := "/sys/kernel/mm/transparent_hugepage/"
	s := runAreas(t, overlay(t, "kunpeng", nil), Options{}, collectMemory)
	wantEq(t, "kunpeng thp", s.Memory.THP.Enabled, "always")

	s = runAreas(t, overlay(t, "metal", map[string]string{
		thp + "enabled": "always madvise [never]\n",
		thp + "defrag":  "always [defer+madvise] defer madvise never\n",
	}), Options{}, collectMemory)
	wantEq(t, "enabled", s.Memory.THP.Enabled, "never")
	wantEq(t, "defrag", s.Memory.THP.Defrag, "defer+madvise")

	// A corrupt file is unavailable with its content, not a wrong value.
	s = runAreas(t, overlay(t, "metal", map[string]string{thp + "enabled": "always madvise never\n"}), Options{}, collectMemory)
	wantEq(t, "enabled", s.Memory.THP.Enabled, "")
	wantMissing(t, s, "memory.thp.enabled", "no [selected] value")

	s = runAreas(t, overlay(t, "metal", map[string]string{"/sys/kernel/mm/transparent_hugepage": fixture.Delete}), Options{}, collectMemory)
	wantMissing(t, s, "memory.thp", "no transparent huge pages")
	wantMissing(t, s, "memory.thp.defrag", "no transparent huge pages")
}

func TestMemoryOldKernelMeminfo(t *testing.T) {
	// A 3.x meminfo lacks MemAvailable: unavailable, not zero.
	s := runAreas(t, overlay(t, "kvm", map[string]string{"/proc/meminfo": "MemTotal:        1000 kB\nMemFree:          500 kB\n"}), Options{}, collectMemory)
	wantEq(t, "total", s.Memory.TotalKiB, int64(1000))
	wantMissing(t, s, "memory.available_kib", "no such line")
	wantPresent(t, s, "memory.total_kib")
}
