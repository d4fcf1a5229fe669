package snapshot

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

	const thp = "/sys/kernel/mm/transparent_hugepage/"
	if !c.fs.Exists(thp) {
		c.miss("memory.thp", c.kernelLacks("the kernel has no transparent huge pages", thp+" does not exist"))
	} else {
		for _, f := range []struct {
			dst        *string
			file, fact string
		}{
			{&m.THP.Enabled, "enabled", "memory.thp.enabled"},
			{&m.THP.Defrag, "defrag", "memory.thp.defrag"},
			{&m.THP.ShmemEnabled, "shmem_enabled", "memory.thp.shmem_enabled"},
		} {
			v, err := c.fs.ReadString(thp + f.file)
			if err != nil {
				c.missErr(f.fact, thp+f.file, err)
				continue
			}
			sel, _, ok := bracketChoice(v)
			if !ok {
				c.miss(f.fact, thp+f.file+": no [selected] value in "+quoteShort(v))
				continue
			}
			*f.dst = sel
		}
		if v, err := c.fs.ReadString(thp + "khugepaged/defrag"); err == nil {
			m.THP.KhugepagedDefrag = v
		} else {
			c.missErr("memory.thp.khugepaged_defrag", thp+"khugepaged/defrag", err)
		}
	}

	if v, err := c.fs.ReadString("/sys/kernel/mm/ksm/run"); err == nil {
		m.KSMRun = v
	} else {
		c.missErr("memory.ksm_run", "/sys/kernel/mm/ksm/run", err)
	}
}

// quoteShort quotes a file's content for a reason text, cut to 60 bytes.
func quoteShort(s string) string {
	if len(s) > 60 {
		s = s[:60] + "…"
	}
	return `"` + s + `"`
}
