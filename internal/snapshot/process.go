package snapshot

import (
	"errors"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/perflab/perflab/internal/cpuset"
	"github.com/prometheus/procfs"
)

var errNoRow = errors.New(`no "Max open files" row`)

// allocators are the malloc replacements a process can run with, by the
// library-name stem that identifies them in maps or LD_PRELOAD.
var allocators = []struct{ stem, name string }{
	{"libtcmalloc", "tcmalloc"}, {"libjemalloc", "jemalloc"}, {"libmimalloc", "mimalloc"},
}

// collectProcess records the process given with --pid: its allocator
// (LD_PRELOAD and mapped libraries; a statically linked allocator leaves
// no trace in either), anonymous huge pages in use, whether it disabled THP
// with prctl(PR_SET_THP_DISABLE), the CPUs and nodes it may run on, its
// open-files limit and its cgroup.
//
// status and smaps_rollup are parsed here: procfs's ProcStatus lacks
// THP_enabled, Threads and Mems_allowed_list, and its ProcSMapsRollup lacks
// AnonHugePages.
func collectProcess(c *collector) {
	if c.opt.PID <= 0 {
		return
	}
	pid := c.opt.PID
	dir := "/proc/" + strconv.Itoa(pid)
	if !c.hasProc() {
		c.miss("process", c.s.Unavailable["proc"])
		return
	}
	proc, err := c.proc.Proc(pid)
	if err != nil {
		c.miss("process", "no process "+strconv.Itoa(pid)+" ("+readReason(dir, err)+")")
		return
	}
	p := &Process{PID: pid}
	c.s.Process = p

	if v, err := proc.Comm(); err == nil {
		p.Comm = v
	} else {
		c.missErr("process.comm", dir+"/comm", err)
	}
	if v, err := proc.CmdLine(); err == nil {
		p.Cmdline = v
	} else {
		c.missErr("process.cmdline", dir+"/cmdline", err)
	}

	found := map[string]bool{}
	if env, err := proc.Environ(); err == nil {
		for _, kv := range env {
			if v, ok := strings.CutPrefix(kv, "LD_PRELOAD="); ok {
				p.LDPreload = v
			}
		}
		// LD_PRELOAD is separated by spaces or colons (ld.so(8)).
		for _, lib := range strings.FieldsFunc(p.LDPreload, func(r rune) bool { return r == ' ' || r == ':' }) {
			if a := allocatorOf(lib); a != "" {
				found[a] = true
			}
		}
	} else {
		c.missErr("process.ld_preload", dir+"/environ", err)
	}
	if maps, err := proc.ProcMaps(); err == nil {
		for _, m := range maps {
			if a := allocatorOf(m.Pathname); a != "" {
				found[a] = true
			}
		}
	} else {
		c.missErr("process.allocators", dir+"/maps", err)
	}
	p.Allocators = []string{}
	for a := range found {
		p.Allocators = append(p.Allocators, a)
	}
	sort.Strings(p.Allocators)

	var status map[string]string
	if data, err := c.fs.ReadFile(dir + "/status"); err == nil {
		status = colonFields(data)
		processStatus(c, p, status)
	} else {
		for _, f := range []string{"thp_disabled", "cpus_allowed", "mems_allowed", "threads", "rss_kib"} {
			c.missErr("process."+f, dir+"/status", err)
		}
	}

	if data, err := c.fs.ReadFile(dir + "/smaps_rollup"); err == nil {
		m := colonFields(data)
		if p.AnonHugePagesKiB, err = kib(m["AnonHugePages"]); err != nil {
			c.miss("process.anon_hugepages_kib", dir+"/smaps_rollup has no AnonHugePages line")
		}
		if v, err := kib(m["Rss"]); err == nil {
			p.RssKiB = v
		}
	} else {
		c.missErr("process.anon_hugepages_kib", dir+"/smaps_rollup", err)
	}

	if r, err := readNofile(c, dir); err == nil {
		p.NofileSoft = r.soft
	} else {
		c.missErr("process.nofile_soft", dir+"/limits", err)
	}

	if cgs, err := proc.Cgroups(); err == nil {
		p.Cgroup = processCgroup(cgs)
	} else {
		c.missErr("process.cgroup", dir+"/cgroup", err)
	}
}

// processStatus fills what /proc/PID/status says.
func processStatus(c *collector, p *Process, st map[string]string) {
	dir := "/proc/" + strconv.Itoa(p.PID) + "/status"
	// THP_enabled (Linux 5.0+) is 0 once the process, or a parent before
	// exec, called prctl(PR_SET_THP_DISABLE).
	if v, ok := st["THP_enabled"]; ok {
		p.THPDisabled = v == "0"
	} else {
		c.miss("process.thp_disabled", dir+" has no THP_enabled line (kernel before 5.0)")
	}
	if v, ok := st["Cpus_allowed_list"]; ok {
		p.CPUsAllowed, _ = cpuset.ParseList(v)
	} else {
		c.miss("process.cpus_allowed", dir+" has no Cpus_allowed_list line")
	}
	if v, ok := st["Mems_allowed_list"]; ok {
		p.MemsAllowed, _ = cpuset.ParseList(v)
	} else {
		c.miss("process.mems_allowed", dir+" has no Mems_allowed_list line")
	}
	if v, ok := st["Threads"]; ok {
		p.Threads, _ = strconv.ParseInt(v, 10, 64)
	}
	if p.RssKiB == 0 {
		p.RssKiB, _ = kib(st["VmRSS"]) // smaps_rollup's Rss overrides it when present
	}
}

// allocatorOf names the allocator a library path belongs to, or "".
func allocatorOf(lib string) string {
	base := path.Base(lib)
	for _, a := range allocators {
		if strings.HasPrefix(base, a.stem) {
			return a.name
		}
	}
	return ""
}

// processCgroup is the process's cgroup path: the unified (v2) one, else
// the v1 cpu controller's, else the first listed.
func processCgroup(cgs []procfs.Cgroup) string {
	for _, g := range cgs {
		if g.HierarchyID == 0 {
			return g.Path
		}
	}
	for _, g := range cgs {
		for _, ctl := range g.Controllers {
			if ctl == "cpu" {
				return g.Path
			}
		}
	}
	if len(cgs) > 0 {
		return cgs[0].Path
	}
	return ""
}
