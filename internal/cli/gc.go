package cli

import (
	"math"
	"os"
	"runtime/debug"
)

// oneShotMemoryLimit bounds the heap of a command run without garbage
// collection: past it the collector runs again (GOMEMLIMIT's soft limit).
const oneShotMemoryLimit = 256 << 20

// oneShotGC turns the garbage collector off for a command that allocates a
// few MB once and exits (a live `perflab audit`: one collection at the
// default 4 MB goal was about a sixth of its CPU time and 200 of its page
// faults, docs/performance.md "Snapshot + audit"), keeping a memory limit
// so a huge --root tree still collects. A user's GOGC or GOMEMLIMIT is
// left alone. The returned func restores the previous settings (commands
// also run in-process, in tests).
func oneShotGC() (restore func()) {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return func() {}
	}
	limit := debug.SetMemoryLimit(-1)
	if limit == math.MaxInt64 {
		debug.SetMemoryLimit(oneShotMemoryLimit)
	}
	percent := debug.SetGCPercent(-1)
	return func() {
		debug.SetGCPercent(percent)
		debug.SetMemoryLimit(limit)
	}
}
