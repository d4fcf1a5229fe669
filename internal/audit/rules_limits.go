package audit

import (
	"fmt"
	"strconv"
	"strings"
)

// Resource limit rules: PIDs, open files (host-wide and per process) and
// inotify, the limits a busy proxy or a container node runs into first.

func registerLimitsRules() {
	register(
		&Rule{
			ID: "LIMITS-PID-MAX", Title: "PID space is large enough for the host's tasks", Area: "limits",
			Severity: Medium, Knob: "kernel.pid_max",
			Why: "Every thread takes a PID; with the default pid_max of 32768 (hosts with up to 32 CPUs) a node running 110 pods of a few hundred " +
				"threads each runs out, and fork/clone fails with EAGAIN in whatever process tries next. The 64-bit maximum is 4194304.",
			Source: "https://docs.kernel.org/admin-guide/sysctl/kernel.html#pid-max",
			Check:  checkPidMax,
		},
		&Rule{
			ID: "LIMITS-FILE-MAX", Title: "System-wide open-file limit has room", Area: "limits",
			Severity: Medium, Knob: "fs.file-max",
			Why: "fs.file-max caps open files across the host; when file-nr reaches it every open(), socket() and accept() fails with ENFILE " +
				"(\"VFS: file-max limit reached\"). Each TCP connection is a file, so a proxy with 500000 client and upstream sockets needs a million.",
			Source: "https://docs.kernel.org/admin-guide/sysctl/fs.html#file-max-file-nr",
			Check:  checkFileMax,
		},
		&Rule{
			ID: "LIMITS-NOFILE", Title: "The service's open-files soft limit suits the workload", Area: "limits",
			Severity: Medium, Knob: "/proc/<pid>/limits (Max open files)",
			Why: "Each connection is a file descriptor, and the soft limit defaults to 1024 for services and logins (systemd's DefaultLimitNOFILE); " +
				"an nginx proxy holding a client and an upstream socket per request hits EMFILE (\"Too many open files\") at about 500 concurrent " +
				"requests and refuses the rest. The workload sets the minimum (limits.nofile).",
			Source: "https://nginx.org/en/docs/ngx_core_module.html#worker_rlimit_nofile; https://www.freedesktop.org/software/systemd/man/latest/systemd.exec.html",
			Check:  checkNofile,
		},
		&Rule{
			ID: "LIMITS-INOTIFY", Title: "inotify limits fit many containers", Area: "limits",
			Severity: Medium, Workloads: []string{"container-host"}, Knob: "fs.inotify.max_user_instances, fs.inotify.max_user_watches",
			Why: "All containers of a node usually run as the same UID, and each kubelet watch, log follower and config reloader takes inotify " +
				"instances and watches from one per-user budget: the default 128 instances runs out with a few dozen pods, and inotify_init fails " +
				"with EMFILE (\"too many open files\") in unrelated containers.",
			Source: "https://man7.org/linux/man-pages/man7/inotify.7.html",
			Check:  checkInotify,
		},
	)
}

func checkPidMax(ctx *Context) Result {
	r := checkSysctl(ctx, "kernel.pid_max", "kernel.pid_max")
	if n := ctx.S.Limits.Threads; n > 0 && (r.Status == Pass || r.Status == Fail) {
		r.Observed += fmt.Sprintf(" (%d tasks now)", n)
	}
	return r
}

func checkFileMax(ctx *Context) Result {
	r := checkSysctl(ctx, "fs.file-max", "fs.file-max")
	l := ctx.S.Limits
	if l.FileMax <= 0 || l.FileNrAllocated <= 0 || (r.Status != Pass && r.Status != Fail) {
		return r
	}
	pct := float64(l.FileNrAllocated) * 100 / float64(l.FileMax)
	r.Observed += fmt.Sprintf(" (%d allocated, %.1f %%)", l.FileNrAllocated, pct)
	// A host already near its limit fails whatever the target says.
	if pct > 80 && r.Status == Pass {
		want := strconv.FormatInt(2*l.FileMax, 10)
		r = failResult(r.Observed, r.Expected+" and under 80 % used",
			sysctlChange("fs.file-max", want, strconv.FormatInt(l.FileMax, 10)))
		r.Severity = severityPtr(High)
	}
	return r
}

func checkNofile(ctx *Context) Result {
	s := ctx.S
	if r, ok := missingFact(s, "limits", "limits.nofile_soft"); !ok {
		return r
	}
	e, res, ok := target(ctx, "limits.nofile")
	if !ok {
		return res
	}
	l := s.Limits
	p := s.Process
	whose := "perflab's own (inherited from the shell that ran it)"
	if !s.CollectedLive() {
		whose = "of proc/self in a captured tree (the process that read /proc when it was copied, not perflab)"
	}
	if p != nil {
		whose = fmt.Sprintf("of %s (pid %d)", p.Comm, p.PID)
	}
	obs := fmt.Sprintf("soft %s, hard %s, %s", limitText(l.NofileSoft), limitText(l.NofileHard), whose)
	expected := "soft limit " + e.String()
	if l.NofileSoft < 0 || e.Matches(strconv.FormatInt(l.NofileSoft, 10)) {
		return passResult(obs, expected)
	}
	want, err := strconv.ParseInt(e.Value(), 10, 64)
	if err != nil {
		return errorResult(fmt.Sprintf("workload target limits.nofile %q is not a number", e.Value()))
	}
	hard := l.NofileHard
	if hard >= 0 && hard < want {
		hard = want
	}
	var notes []string
	if nrOpen, err := strconv.ParseInt(strings.TrimSpace(s.Sysctl["fs.nr_open"]), 10, 64); err == nil && want > nrOpen {
		notes = append(notes, fmt.Sprintf("fs.nr_open (%d) caps any process below %d: raise it first", nrOpen, want))
	}
	var c Change
	if p != nil {
		c = Change{Kind: KindCommand, Target: strconv.Itoa(p.PID),
			Value: fmt.Sprintf("prlimit --pid %d --nofile=%d:%s  # lasts until restart; make it permanent with LimitNOFILE=%d in the unit (systemctl edit)",
				p.PID, want, limitText(hard), want),
			Current: fmt.Sprintf("prlimit --pid %d --nofile=%s:%s", p.PID, limitText(l.NofileSoft), limitText(l.NofileHard))}
	} else {
		c = Change{Kind: KindCommand, Target: "nofile",
			Value:   fmt.Sprintf("LimitNOFILE=%d in the service's unit (systemctl edit <service>), or `* soft nofile %d` in /etc/security/limits.conf for logins", want, want),
			Current: "remove the LimitNOFILE / limits.conf line added"}
		if s.CollectedLive() {
			notes = append(notes, "this is perflab's own limit; run with --pid to judge the service itself")
		} else {
			notes = append(notes, "this is the limit of whichever process proc/self was when the tree was captured; capture the service's /proc/<pid> too and audit with --pid to judge the service")
		}
	}
	r := failResult(obs, expected, c)
	r.Reason = strings.Join(notes, "; ")
	if p == nil {
		r.Severity = severityPtr(Low)
	}
	return r
}

func limitText(v int64) string {
	if v < 0 {
		return "unlimited"
	}
	return strconv.FormatInt(v, 10)
}

func checkInotify(ctx *Context) Result {
	var obs, expected []string
	var changes []Change
	for _, name := range []string{"fs.inotify.max_user_instances", "fs.inotify.max_user_watches"} {
		r := checkSysctl(ctx, name, name)
		switch r.Status {
		case NA, Error:
			return r
		}
		obs = append(obs, name+" = "+r.Observed)
		expected = append(expected, name+" "+r.Expected)
		changes = append(changes, r.Changes...)
	}
	if len(changes) == 0 {
		return passResult(strings.Join(obs, ", "), strings.Join(expected, ", "))
	}
	return failResult(strings.Join(obs, ", "), strings.Join(expected, ", "), changes...)
}
