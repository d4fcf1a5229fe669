package snapshot

import (
	"errors"
	"io/fs"
	"sort"
	"strings"
)

// collectKernel records the running kernel: release and build string, the
// command line (raw and parsed), CPU vulnerability mitigations, the
// clocksource, loaded modules, the preemption model and the taint mask.
//
// Vulnerability files are kept as the kernel's exact text ("Mitigation:
// Clear CPU buffers; SMT vulnerable"): rules match on it, and
// ClassifyVulnerability (vuln.go) classes it.
func collectKernel(c *collector) {
	k := &c.s.Kernel
	for _, f := range []struct {
		dst        *string
		file, fact string
	}{
		{&k.Release, "/proc/sys/kernel/osrelease", "kernel.release"},
		{&k.Version, "/proc/sys/kernel/version", "kernel.version"},
		{&k.Cmdline, "/proc/cmdline", "kernel.cmdline"},
	} {
		v, err := c.fs.ReadString(f.file)
		if err != nil {
			c.missErr(f.fact, f.file, err)
			continue
		}
		*f.dst = v
	}
	if _, missing := c.s.Unavailable["kernel.cmdline"]; missing {
		c.miss("kernel.params", c.s.Unavailable["kernel.cmdline"])
	} else {
		k.Params = parseCmdline(k.Cmdline)
	}

	vulnerabilities(c)
	clocksource(c)
	modules(c)
	k.Preempt = preemptModel(c)

	if v, err := c.fs.ReadInt("/proc/sys/kernel/tainted"); err == nil {
		k.Tainted = v
	} else {
		c.missErr("kernel.tainted", "/proc/sys/kernel/tainted", err)
	}
}

func vulnerabilities(c *collector) {
	const dir = cpuDir + "/vulnerabilities"
	ents, err := c.fs.ReadDir(dir)
	if err != nil {
		c.missErr("kernel.vulnerabilities", dir, err)
		return
	}
	c.s.Kernel.Vulnerabilities = map[string]string{}
	for _, e := range ents {
		if v, err := c.fs.ReadString(dir + "/" + e.Name()); err == nil {
			c.s.Kernel.Vulnerabilities[e.Name()] = v
		}
	}
}

func clocksource(c *collector) {
	const p = "/sys/devices/system/clocksource/clocksource0"
	if !c.hasSys() {
		c.miss("kernel.clocksource", c.s.Unavailable["sys"])
		return
	}
	srcs, err := c.sys.ClockSources()
	if err != nil {
		c.missErr("kernel.clocksource", p, err)
		return
	}
	if len(srcs) == 0 {
		c.miss("kernel.clocksource", p+" does not exist on this host")
		return
	}
	// clocksource0 is the only one the kernel has ever created.
	c.s.Kernel.Clocksource = srcs[0].Current
	c.s.Kernel.Clocksources = srcs[0].Available
}

// modules lists loaded modules from /proc/modules, whose first field is
// the name. A kernel built without module support has no such file.
func modules(c *collector) {
	data, err := c.fs.ReadFile("/proc/modules")
	if err != nil {
		reason := readReason("/proc/modules", err)
		if errors.Is(err, fs.ErrNotExist) {
			reason = c.kernelLacks("the kernel has no loadable module support, drivers are built in", "no /proc/modules")
		}
		c.miss("kernel.modules", reason)
		return
	}
	names := []string{}
	for _, line := range strings.Split(string(data), "\n") {
		if name, _, _ := strings.Cut(line, " "); name != "" {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	c.s.Kernel.Modules = names
}

// preemptModel is the preemption model: debugfs shows the current one of a
// PREEMPT_DYNAMIC kernel; otherwise preempt= on the command line, then the
// build string ("PREEMPT_RT", "PREEMPT_DYNAMIC", "PREEMPT") tell. A kernel
// whose build string says none of these is "none" or "voluntary", which no
// file distinguishes without debugfs.
func preemptModel(c *collector) string {
	dyn := strings.Contains(c.s.Kernel.Version, "PREEMPT_DYNAMIC")
	if v, err := c.fs.ReadString("/sys/kernel/debug/sched/preempt"); err == nil {
		if m, ok := parensChoice(v); ok {
			return "dynamic(" + m + ")"
		}
	}
	if m, ok := c.s.Kernel.Params["preempt"]; ok && dyn && m != "" {
		return "dynamic(" + m + ")"
	}
	v := " " + c.s.Kernel.Version + " "
	switch {
	case c.s.Kernel.Version == "":
		c.miss("kernel.preempt", "the kernel build string is unknown")
		return ""
	case strings.Contains(v, "PREEMPT_RT"):
		return "rt"
	case dyn:
		return "dynamic"
	case strings.Contains(v, " PREEMPT "):
		return "full"
	}
	c.miss("kernel.preempt", "the build string shows no PREEMPT: none or voluntary, which only /sys/kernel/debug/sched/preempt could tell apart")
	return ""
}
