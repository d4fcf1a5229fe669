package bench

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/prometheus/procfs"
)

// A probe's scratch directory is removed when its run ends, also on Ctrl-C
// and SIGTERM. Only a process killed outright (SIGKILL, the OOM killer)
// leaves one behind, and the disk probe's file alone is 256 MiB. Each
// directory therefore names its owner — the pid and that process's start
// time, so that a pid reused by another process does not pass for the
// owner — and every bench session removes the directories whose owner is
// gone before it makes its own.
const ownerFile = ".perflab-owner"

// makeScratch creates a scratch directory under parent for probe name and
// records this process as its owner.
func makeScratch(parent, name string) (string, error) {
	dir, err := os.MkdirTemp(parent, "perflab-"+name+"-*")
	if err != nil {
		return "", err
	}
	start, err := startTime(os.Getpid())
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, ownerFile), []byte(fmt.Sprintf("%d %d\n", os.Getpid(), start)), 0o600)
	}
	if err != nil {
		os.RemoveAll(dir)
		return "", err
	}
	return dir, nil
}

// sweepScratch removes the scratch directories under parent whose owner no
// longer runs, and says which. A directory without a readable owner file is
// not ours to judge and stays.
func sweepScratch(parent string) []string {
	owners, _ := filepath.Glob(filepath.Join(parent, "perflab-*", ownerFile))
	var removed []string
	for _, f := range owners {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		pid, start, ok := parseOwner(string(b))
		if !ok || ownerRuns(pid, start) {
			continue
		}
		dir := filepath.Dir(f)
		if os.RemoveAll(dir) == nil {
			removed = append(removed, fmt.Sprintf("%s (pid %d)", dir, pid))
		}
	}
	return removed
}

// parseOwner reads "PID STARTTIME".
func parseOwner(s string) (pid int, start uint64, ok bool) {
	f := strings.Fields(s)
	if len(f) != 2 {
		return 0, 0, false
	}
	p, err1 := strconv.Atoi(f[0])
	st, err2 := strconv.ParseUint(f[1], 10, 64)
	if err1 != nil || err2 != nil || p <= 0 {
		return 0, 0, false
	}
	return p, st, true
}

// ownerRuns reports whether process pid still runs and is the one that
// started at start (clock ticks after boot).
func ownerRuns(pid int, start uint64) bool {
	st, err := startTime(pid)
	return err == nil && st == start
}

// startTime is a process's start time in clock ticks after boot
// (/proc/PID/stat field 22), which with the pid identifies a process.
func startTime(pid int) (uint64, error) {
	p, err := procfs.NewProc(pid)
	if err != nil {
		return 0, err
	}
	st, err := p.Stat()
	if err != nil {
		return 0, err
	}
	return st.Starttime, nil
}
