package snapshot

import (
	"path"

	"github.com/perflab/perflab/internal/knob"
)

// collectMemory records physical memory (procfs meminfo), transparent huge
// page policy, default-size huge pages and KSM.
func collectMemory(c *collector) {
	m := &c.s.Memory
	if !c.hasProc() {
		c.miss("memory.total_kib", c.s.Unavailable["proc"])
	} else if mi, err := c.proc.Meminfo(); err != nil {
		c.missErr("memory.total_kib", "/proc/meminfo", err)
	} else {
		for _, f := range []struct {
			dst  *int64
			src  *uint64
			fact string
		}{
			{&m.TotalKiB, mi.MemTotal, "memory.total_kib"},
			{&m.AvailableKiB, mi.MemAvailable, "memory.available_kib"},
			{&m.SwapTotalKiB, mi.SwapTotal, "memory.swap_total_kib"},
			{&m.SwapFreeKiB, mi.SwapFree, "memory.swap_free_kib"},
			{&m.AnonHugePagesKiB, mi.AnonHugePages, "memory.anon_hugepages_kib"},
			{&m.DirtyKiB, mi.Dirty, "memory.dirty_kib"},
			{&m.WritebackKiB, mi.Writeback, "memory.writeback_kib"},
			{&m.HugePagesTotal, mi.HugePagesTotal, "memory.hugepages_total"},
			{&m.HugePagesFree, mi.HugePagesFree, "memory.hugepages_free"},
			{&m.HugePageSizeKiB, mi.Hugepagesize, "memory.hugepage_size_kib"},
		} {
			if f.src == nil {
				c.miss(f.fact, "/proc/meminfo has no such line on this kernel")
				continue
			}
			*f.dst = int64(*f.src)
		}
	}

	// The settings' files and their parsing come from the knob catalogue.
	thp := knobFile("memory.thp.enabled")
	if dir := path.Dir(thp) + "/"; !c.fs.Exists(dir) {
		c.miss("memory.thp", c.kernelLacks("the kernel has no transparent huge pages", dir+" does not exist"))
	} else {
		for _, f := range []struct {
			dst  *string
			fact string
		}{
			{&m.THP.Enabled, "memory.thp.enabled"},
			{&m.THP.Defrag, "memory.thp.defrag"},
			{&m.THP.ShmemEnabled, "memory.thp.shmem_enabled"},
		} {
			file := knobFile(f.fact)
			v, err := c.fs.ReadString(file)
			if err != nil {
				c.missErr(f.fact, file, err)
				continue
			}
			sel, _, ok := knob.ParseChoice(v)
			if !ok {
				c.miss(f.fact, file+": no [selected] value in "+quoteShort(v))
				continue
			}
			*f.dst = sel
		}
		kd := knobFile("memory.thp.khugepaged_defrag")
		if v, err := c.fs.ReadString(kd); err == nil {
			m.THP.KhugepagedDefrag = v
		} else {
			c.missErr("memory.thp.khugepaged_defrag", kd, err)
		}
	}

	ksm := knobFile("memory.ksm_run")
	if v, err := c.fs.ReadString(ksm); err == nil {
		m.KSMRun = v
	} else {
		c.missErr("memory.ksm_run", ksm, err)
	}
}

// quoteShort quotes a file's content for a reason text, cut to 60 bytes.
func quoteShort(s string) string {
	if len(s) > 60 {
		s = s[:60] + "…"
	}
	return `"` + s + `"`
}
