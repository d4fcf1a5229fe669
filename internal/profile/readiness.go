// Package profile records CPU profiles with perf and turns them into
// folded stacks: it checks that perf can work here (and says exactly what
// to change when it cannot), picks an event the host supports (the
// software cpu-clock in VMs without hardware counters), runs
// `perf record -g`, streams `perf script` into the folder and summarises
// the hottest stacks.
//
// Readiness reuses the audit rules PERF-EVENT-PARANOID and
// PERF-KPTR-RESTRICT on a snapshot of the live host, so `perflab audit`
// and `perflab profile` never disagree about what blocks profiling or how
// to fix it.
package profile

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"

	"github.com/perflab/perflab/internal/audit"
	"github.com/perflab/perflab/internal/clierr"
	"github.com/perflab/perflab/internal/hostfs"
	"github.com/perflab/perflab/internal/snapshot"
)

// Readiness is what stands between this user and a useful profile.
type Readiness struct {
	Perf       string   // path of the perf binary
	Privileged bool     // root, CAP_PERFMON or CAP_SYS_ADMIN: paranoia does not apply
	Paranoid   int      // kernel.perf_event_paranoid
	KptrRestr  int      // kernel.kptr_restrict
	Notes      []string // what will be missing from the profile, and the fix
}

// Target says what is profiled, because the permission rules differ.
type Target struct {
	PID     int      // an existing process
	All     bool     // every CPU
	Command []string // a command perflab starts
}

// capability bits in /proc/self/status CapEff
const (
	capSysAdmin = 21
	capPerfmon  = 38
)

// CheckReadiness checks perf, the perf sysctls (through the audit rules
// on a snapshot of fs, which must be the live root) and the target. A
// blocking problem is returned as an error naming the fix.
func CheckReadiness(fs hostfs.FS, t Target) (*Readiness, error) {
	r := &Readiness{}
	p, err := exec.LookPath("perf")
	if err != nil {
		return nil, clierr.Runtimef("apt-get install linux-perf (Debian) or linux-tools-$(uname -r) (Ubuntu)", "perf is not installed")
	}
	r.Perf = p
	if t.PID > 0 && !fs.Exists(fmt.Sprintf("/proc/%d", t.PID)) {
		return nil, clierr.Usagef("check the PID with ps or pgrep", "no process with PID %d", t.PID)
	}
	if len(t.Command) > 0 {
		if _, err := exec.LookPath(t.Command[0]); err != nil {
			return nil, clierr.Usagef("check the command name and PATH", "cannot run %q: %v", t.Command[0], errors.Unwrap(err))
		}
	}
	r.Privileged = privileged(fs)

	snap, err := snapshot.Collect(fs, snapshot.Options{})
	if err != nil {
		return nil, fmt.Errorf("reading host facts: %w", err)
	}
	paranoid, pf, err := sysctlFinding(snap, "PERF-EVENT-PARANOID", "kernel.perf_event_paranoid")
	if err != nil {
		return nil, clierr.Runtimef("this kernel may lack perf events (CONFIG_PERF_EVENTS)", "%v", err)
	}
	r.Paranoid = paranoid
	kptr, kf, kerr := sysctlFinding(snap, "PERF-KPTR-RESTRICT", "kernel.kptr_restrict")
	r.KptrRestr = kptr

	if !r.Privileged {
		switch {
		case paranoid >= 3:
			return nil, clierr.Runtimef(fixOf(pf, "sysctl -w kernel.perf_event_paranoid=2")+", or run perflab as root",
				"perf is refused to unprivileged users: kernel.perf_event_paranoid is %d (%s)", paranoid, pf.Rule)
		case t.All && paranoid > 0:
			return nil, clierr.Runtimef("run as root, or sysctl -w kernel.perf_event_paranoid=0",
				"profiling every CPU (-a) needs kernel.perf_event_paranoid <= 0 for unprivileged users; it is %d (%s)", paranoid, pf.Rule)
		case paranoid >= 2:
			r.Notes = append(r.Notes, fmt.Sprintf("kernel frames will be missing: kernel.perf_event_paranoid is %d (%s); run as root or: sysctl -w kernel.perf_event_paranoid=1", paranoid, pf.Rule))
		}
	}
	if kerr == nil && (kptr >= 2 || (kptr == 1 && !r.Privileged)) {
		r.Notes = append(r.Notes, fmt.Sprintf("kernel frames will show as [unknown]: kernel.kptr_restrict is %d (%s); fix: %s", kptr, kf.Rule, fixOf(kf, "sysctl -w kernel.kptr_restrict=0")))
	}
	if t.PID > 0 {
		if comm, _ := fs.ReadString(fmt.Sprintf("/proc/%d/comm", t.PID)); comm == "java" && !fs.Exists(fmt.Sprintf("/tmp/perf-%d.map", t.PID)) {
			r.Notes = append(r.Notes, fmt.Sprintf("Java frames will be [unknown]: no /tmp/perf-%d.map; run `jcmd %d Compiler.perfmap` (JDK 17+) or perf-map-agent, and start the JVM with -XX:+PreserveFramePointer", t.PID, t.PID))
		}
	}
	return r, nil
}

// sysctlFinding evaluates an audit rule and returns the sysctl's value.
func sysctlFinding(s *snapshot.Snapshot, rule, sysctl string) (int, audit.Finding, error) {
	var f audit.Finding
	if r, ok := audit.Lookup(rule); ok {
		w, err := audit.LookupWorkload("general")
		if err == nil {
			f = audit.Evaluate(r, &audit.Context{S: s, W: w})
		}
	}
	if f.Rule == "" {
		f.Rule = rule
	}
	v, ok := s.Sysctl[sysctl]
	if !ok {
		reason := s.Unavailable["sysctl."+sysctl]
		if reason == "" {
			reason = "not present"
		}
		return 0, f, errors.New(sysctl + ": " + reason)
	}
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil {
		return 0, f, fmt.Errorf("%s = %q is not a number", sysctl, v)
	}
	return n, f, nil
}

func fixOf(f audit.Finding, def string) string {
	if f.Status == audit.Fail && f.Fix != "" {
		return f.Fix
	}
	return def
}

// geteuid is a variable so tests can play an unprivileged user.
var geteuid = os.Geteuid

// privileged reports root or a capability that lifts perf's restrictions.
func privileged(fs hostfs.FS) bool {
	if geteuid() == 0 {
		return true
	}
	st, err := fs.ReadString("/proc/self/status")
	if err != nil {
		return false
	}
	for _, line := range strings.Split(st, "\n") {
		if hex, ok := strings.CutPrefix(line, "CapEff:"); ok {
			caps, err := strconv.ParseUint(strings.TrimSpace(hex), 16, 64)
			return err == nil && (caps&(1<<capPerfmon) != 0 || caps&(1<<capSysAdmin) != 0)
		}
	}
	return false
}
