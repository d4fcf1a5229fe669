package fold

import (
	"math"
	"runtime/debug"
	"sync"
)

// A fold allocates in proportion to the unique lines and stacks it meets
// (tens of MB for a 100 MB capture), almost all of it kept to the end, so
// the collector's cycles during a fold free little and cost CPU that the
// parser threads need. holdGC turns the collector off for the duration
// of the folds in progress, with a soft memory limit so that an input
// with millions of unique stacks still collects (past gcLimit, or past
// GOMEMLIMIT when that is lower); release restores the settings when the
// last fold in progress ends.
var gcHold struct {
	sync.Mutex
	n             int
	percent       int
	limit         int64
	limitWasUnset bool
}

const gcLimit = 1 << 30

func holdGC() (release func()) {
	gcHold.Lock()
	defer gcHold.Unlock()
	if gcHold.n == 0 {
		gcHold.limit = debug.SetMemoryLimit(-1)
		gcHold.limitWasUnset = gcHold.limit == math.MaxInt64
		if gcHold.limitWasUnset {
			debug.SetMemoryLimit(gcLimit)
		}
		gcHold.percent = debug.SetGCPercent(-1)
	}
	gcHold.n++
	return func() {
		gcHold.Lock()
		defer gcHold.Unlock()
		if gcHold.n--; gcHold.n == 0 {
			debug.SetGCPercent(gcHold.percent)
			if gcHold.limitWasUnset {
				debug.SetMemoryLimit(gcHold.limit)
			}
		}
	}
}
