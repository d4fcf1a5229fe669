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

// SelfIsPerflab reports whether /proc/self in this snapshot was the perflab
// process that collected it: true for a live host (root "/"), false for a
// tree captured elsewhere (--root), whose proc/self is whatever process was
// reading /proc when the tree was copied.
func (s *Snapshot) SelfIsPerflab() bool { return s.Root == "/" }
