// Command blocker is the workload of the off-CPU and lock tests: one thread
// sleeps in nanosleep in a loop, one holds a futex-based mutex for -hold
// then releases it for -gap, and one keeps taking that mutex, so it waits
// about hold/(hold+gap) of the time. It prints the mutex's address and runs
// until killed.
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"
)

const futexWaitPrivate, futexWakePrivate = 0 | 128, 1 | 128

var word uint32

//go:noinline
func futexWait(w *uint32, val uint32) {
	syscall.Syscall6(syscall.SYS_FUTEX, uintptr(unsafe.Pointer(w)), futexWaitPrivate, uintptr(val), 0, 0, 0)
}

//go:noinline
func lockMutex(w *uint32) {
	for !atomic.CompareAndSwapUint32(w, 0, 1) {
		futexWait(w, 1)
	}
}

//go:noinline
func unlockMutex(w *uint32) {
	atomic.StoreUint32(w, 0)
	syscall.Syscall6(syscall.SYS_FUTEX, uintptr(unsafe.Pointer(w)), futexWakePrivate, 1, 0, 0, 0)
}

//go:noinline
func nap(d time.Duration) {
	ts := syscall.NsecToTimespec(int64(d))
	_ = syscall.Nanosleep(&ts, nil)
}

//go:noinline
func sleeper(d time.Duration) {
	runtime.LockOSThread()
	for {
		nap(d)
	}
}

//go:noinline
func holdWhileSleeping(d time.Duration) { nap(d) }

//go:noinline
func holder(hold, gap time.Duration) {
	runtime.LockOSThread()
	for {
		lockMutex(&word)
		holdWhileSleeping(hold)
		unlockMutex(&word)
		nap(gap)
	}
}

//go:noinline
func waiter() {
	runtime.LockOSThread()
	for {
		lockMutex(&word)
		unlockMutex(&word)
		nap(time.Millisecond)
	}
}

func main() {
	hold := flag.Duration("hold", 150*time.Millisecond, "how long the holder keeps the mutex")
	gap := flag.Duration("gap", 100*time.Millisecond, "how long it leaves it free")
	sleep := flag.Duration("sleep", 100*time.Millisecond, "the sleeper's nanosleep")
	flag.Parse()
	go sleeper(*sleep)
	go holder(*hold, *gap)
	go waiter()
	fmt.Fprintf(os.Stdout, "mutex %#x\n", uintptr(unsafe.Pointer(&word)))
	select {}
}
