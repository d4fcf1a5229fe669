package snapshot

import (
	"strconv"
	"strings"
)

// collectLimits records host-wide file handles (fs.file-nr), the task
// count and the open-files limit of the process a workload runs as:
// --pid's when given, else perflab's own.
func collectLimits(c *collector) {
	l := &c.s.Limits
	if v, err := c.fs.ReadString("/proc/sys/fs/file-nr"); err != nil {
		c.missErr("limits.file_nr_allocated", "/proc/sys/fs/file-nr", err)
		c.missErr("limits.file_max", "/proc/sys/fs/file-nr", err)
	} else if f := strings.Fields(v); len(f) != 3 {
		c.miss("limits.file_nr_allocated", "/proc/sys/fs/file-nr: want 3 fields, got "+quoteShort(v))
		c.miss("limits.file_max", "/proc/sys/fs/file-nr: want 3 fields, got "+quoteShort(v))
	} else {
		// file-nr is "allocated  free(always 0 since 2.6)  max".
		l.FileNrAllocated, _ = strconv.ParseInt(f[0], 10, 64)
		l.FileMax, _ = strconv.ParseInt(f[2], 10, 64)
	}

	if v, err := c.fs.ReadString("/proc/loadavg"); err != nil {
		c.missErr("limits.threads", "/proc/loadavg", err)
	} else if la, err := parseLoadavg(v); err != nil {
		c.miss("limits.threads", "/proc/loadavg: "+err.Error())
	} else {
		l.Threads = la.tasks
	}

	dir := "/proc/self"
	if c.opt.PID > 0 {
		dir = "/proc/" + strconv.Itoa(c.opt.PID)
	}
	nofile, err := readNofile(c, dir)
	if err != nil {
		c.missErr("limits.nofile_soft", dir+"/limits", err)
		c.missErr("limits.nofile_hard", dir+"/limits", err)
		return
	}
	l.NofileSoft, l.NofileHard = nofile.soft, nofile.hard
}

// readNofile reads the "Max open files" row of a process's limits.
func readNofile(c *collector, dir string) (rlimit, error) {
	data, err := c.fs.ReadFile(dir + "/limits")
	if err != nil {
		return rlimit{}, err
	}
	lim, err := parseLimits(data)
	if err != nil {
		return rlimit{}, err
	}
	r, ok := lim["Max open files"]
	if !ok {
		return rlimit{}, errNoRow
	}
	return r, nil
}

// CollectedLive reports whether the snapshot was collected from a running
// host's own root ("/"), where /proc/self was the perflab that collected it
// and a kernel file's absence means the kernel lacks it. A tree captured
// elsewhere (--root) holds what was copied: its proc/self is whatever
// process read /proc then, and a missing file may just not have been copied.
func (s *Snapshot) CollectedLive() bool { return s.Root == "/" }
