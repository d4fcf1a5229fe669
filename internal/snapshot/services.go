package snapshot

import (
	"sort"
	"strconv"
	"strings"
)

// watchedServices are daemons that change performance behind the
// operator's back: irqbalance moves IRQs (and undoes manual affinity),
// tuned and power-profiles-daemon rewrite governors and sysctls, auditd
// taxes every audited syscall, numad and ksmtuned move and merge memory,
// thermald caps frequency.
var watchedServices = []string{
	"irqbalance", "tuned", "auditd", "numad", "ksmtuned", "thermald", "power-profiles-daemon",
}

// commLen is TASK_COMM_LEN-1: the kernel truncates /proc/<pid>/comm to 15
// bytes, so "power-profiles-daemon" reads "power-profiles-".
const commLen = 15

// collectServices finds watched daemons by the comm of every process
// (procfs), spawning nothing. Every watched name is recorded, running or
// not, so a rule can tell "irqbalance is not running" from "not looked at".
func collectServices(c *collector) {
	if !c.hasProc() {
		c.miss("services", "no /proc under the root")
		return
	}
	procs, err := c.proc.AllProcs()
	if err != nil {
		c.missErr("services", "/proc", unwrapPathErr(err))
		return
	}
	byComm := map[string]string{}
	for _, name := range watchedServices {
		byComm[truncComm(name)] = name
		c.s.Services[name] = Service{}
	}
	for _, p := range procs {
		// Read through hostfs (one open, read, close on the live host)
		// rather than procfs's Comm: a host has hundreds of processes.
		comm, err := c.fs.ReadString("/proc/" + strconv.Itoa(p.PID) + "/comm")
		if err != nil {
			continue // the process exited while we looked
		}
		if name, ok := byComm[strings.TrimSpace(comm)]; ok {
			s := c.s.Services[name]
			s.Running = true
			s.PIDs = append(s.PIDs, p.PID)
			c.s.Services[name] = s
		}
	}
	for name, s := range c.s.Services {
		sort.Ints(s.PIDs)
		c.s.Services[name] = s
	}
}

func truncComm(s string) string {
	if len(s) > commLen {
		return s[:commLen]
	}
	return s
}
