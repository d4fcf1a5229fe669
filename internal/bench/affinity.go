package bench

import (
	"fmt"
	"os"
	"runtime"
	"strconv"

	"github.com/perflab/perflab/internal/cpuset"
	"golang.org/x/sys/unix"
)

// Pinning design. A Go program is many OS threads, and a probe's workers
// may run on any of them (or on threads the runtime starts later), so
// pinning only the calling thread pins nothing that matters. Pin therefore
// sets the affinity of every thread of the process (/proc/self/task), twice
// to catch threads started during the first pass. Linux copies a thread's
// affinity to threads it creates, so threads the runtime starts afterwards
// and processes that tool adapters spawn inherit the placement. GOMAXPROCS
// is lowered to the number of CPUs so the scheduler does not run more
// threads than the probe owns. Probes that pin their workers to individual
// CPUs read Env.CPUs.
//
// These reads are of this process's own threads, not of the host being
// analysed, so they go to the live /proc and not through hostfs.

// allowedCPUs is the number of CPUs this process may run on.
func allowedCPUs() int {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return runtime.NumCPU()
	}
	return set.Count()
}

// CheckCPUs verifies that every CPU of cpus is one this process may use.
func CheckCPUs(cpus []int) error {
	var allowed unix.CPUSet
	if err := unix.SchedGetaffinity(0, &allowed); err != nil {
		return fmt.Errorf("reading CPU affinity: %w", err)
	}
	var ok []int
	for c := 0; c < len(allowed)*64; c++ {
		if allowed.IsSet(c) {
			ok = append(ok, c)
		}
	}
	for _, c := range cpus {
		if c >= len(allowed)*64 || !allowed.IsSet(c) {
			return &OptionError{"CPUs", cpuset.FormatList(cpus), fmt.Sprintf("includes CPU %d, which is not available to perflab", c), "pick from " + cpuset.FormatList(ok)}
		}
	}
	return nil
}

// Pin restricts every thread of the process to cpus and returns a function
// that restores the previous placement and GOMAXPROCS.
func Pin(cpus []int) (restore func(), err error) {
	if err := CheckCPUs(cpus); err != nil {
		return nil, err
	}
	var orig unix.CPUSet
	if err := unix.SchedGetaffinity(0, &orig); err != nil {
		return nil, fmt.Errorf("reading CPU affinity: %w", err)
	}
	var set unix.CPUSet
	for _, c := range cpus {
		set.Set(c)
	}
	if err := setAll(&set); err != nil {
		_ = setAll(&orig)
		return nil, fmt.Errorf("pinning to CPUs %s: %w", cpuset.FormatList(cpus), err)
	}
	prev := runtime.GOMAXPROCS(len(cpus))
	return func() {
		_ = setAll(&orig)
		// Go back to the runtime's own choice (which tracks cgroup
		// limits) unless the user fixed it with $GOMAXPROCS.
		if os.Getenv("GOMAXPROCS") == "" {
			runtime.SetDefaultGOMAXPROCS()
		} else {
			runtime.GOMAXPROCS(prev)
		}
	}, nil
}

// setAll applies set to every thread of the process.
func setAll(set *unix.CPUSet) error {
	for pass := 0; pass < 2; pass++ {
		ents, err := os.ReadDir("/proc/self/task")
		if err != nil {
			return unix.SchedSetaffinity(0, set)
		}
		for _, e := range ents {
			tid, err := strconv.Atoi(e.Name())
			if err != nil {
				continue
			}
			// A thread may exit between listing and setting: ESRCH is fine.
			if err := unix.SchedSetaffinity(tid, set); err != nil && err != unix.ESRCH {
				return err
			}
		}
	}
	return nil
}

// Affinity returns the CPUs the calling thread may run on (for tests and
// the run record).
func Affinity() ([]int, error) {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return nil, err
	}
	var out []int
	for c := 0; c < len(set)*64; c++ {
		if set.IsSet(c) {
			out = append(out, c)
		}
	}
	return out, nil
}
