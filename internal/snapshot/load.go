package snapshot

import (
	"errors"
	"io/fs"

	"golang.org/x/sys/unix"
)

// collectLoad records load averages and the run queue (/proc/loadavg), the
// CPU time shares since boot (/proc/stat via procfs) and pressure stall
// information (/proc/pressure via procfs). Steal is the share of time a
// VM's vCPUs were runnable but the hypervisor ran something else; user
// includes nice.
func collectLoad(c *collector) {
	l := &c.s.Load
	if v, err := c.fs.ReadString("/proc/loadavg"); err != nil {
		c.missErr("load.loadavg1", "/proc/loadavg", err)
	} else if la, err := parseLoadavg(v); err != nil {
		c.miss("load.loadavg1", "/proc/loadavg: "+err.Error())
	} else {
		l.LoadAvg1, l.LoadAvg5 = la.load1, la.load5
	}

	if !c.hasProc() {
		c.miss("load.user_pct", c.s.Unavailable["proc"])
		c.miss("load.psi", c.s.Unavailable["proc"])
		return
	}
	if st, err := c.proc.Stat(); err != nil {
		c.missErr("load.user_pct", "/proc/stat", err)
	} else {
		t := st.CPUTotal
		// Guest time is already counted in user (and guest_nice in nice).
		total := t.User + t.Nice + t.System + t.Idle + t.Iowait + t.IRQ + t.SoftIRQ + t.Steal
		if total > 0 {
			pct := func(v float64) float64 { return 100 * v / total }
			l.UserPct = pct(t.User + t.Nice)
			l.SystemPct = pct(t.System)
			l.IdlePct = pct(t.Idle)
			l.IOWaitPct = pct(t.Iowait)
			l.IRQPct = pct(t.IRQ)
			l.SoftIRQPct = pct(t.SoftIRQ)
			l.StealPct = pct(t.Steal)
		} else {
			c.miss("load.user_pct", "/proc/stat counts no CPU time yet")
		}
		l.ProcsRunning = int64(st.ProcessesRunning)
		l.ProcsBlocked = int64(st.ProcessesBlocked)
	}

	for _, r := range []string{"cpu", "memory", "io"} {
		ps, err := c.proc.PSIStatsForResource(r)
		if err != nil || ps.Some == nil {
			if err == nil {
				c.miss("load.psi."+r, "/proc/pressure/"+r+" has no \"some\" line")
			} else {
				c.miss("load.psi."+r, psiReason(r, err))
			}
			continue
		}
		if l.PSI == nil {
			l.PSI = map[string]PSI{}
		}
		l.PSI[r] = PSI{Avg10: ps.Some.Avg10, Avg60: ps.Some.Avg60, Total: ps.Some.Total}
	}
}

// psiReason explains missing pressure files: kernels before 4.20 lack
// them, and psi=0 (or CONFIG_PSI_DEFAULT_DISABLED without psi=1) makes
// them refuse reads.
func psiReason(r string, err error) string {
	p := "/proc/pressure/" + r
	if errors.Is(err, fs.ErrNotExist) {
		return p + " does not exist: the kernel predates 4.20 or lacks CONFIG_PSI"
	}
	if errors.Is(err, unix.EOPNOTSUPP) {
		return "pressure stall information is disabled (boot with psi=1)"
	}
	return readReason(p, err)
}
