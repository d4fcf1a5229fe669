package hostnoise

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Reference is one reading of the host-drift reference: three small,
// fixed workloads whose speed depends only on the host, never on the
// system under test. Measured around every probe, they say how fast the
// host itself was during a run, so a comparison can tell "the host ran 6%
// slower" from "this setting made the probe slower" (docs/statistics.md,
// "Host drift").
//
//   - CPU: a dependent chain of 64-bit multiply, add and xor-shift steps
//     (one PCG-style LCG step each), in nanoseconds per step. It runs in
//     registers: it follows the core's clock and how much of the core the
//     hypervisor gives the vCPU.
//   - Memory: a sequential read of a RefMemBytes buffer, 8 bytes at a time
//     with four independent sums, in GB/s: the memory bus and the shared
//     last-level cache that neighbours contend for. The buffer is mapped
//     with MADV_NOHUGEPAGE, so it is backed by base pages whatever
//     transparent_hugepage/enabled says: THP always and never read the
//     same (without it, THP moved this reference with the very setting
//     under test).
//   - Syscall: getppid(2), the cheapest system call, in nanoseconds: kernel
//     entry and exit with the host's mitigations.
//
// Settings can still move the CPU chain (the core clock: governor, boost,
// frequency limits) and the system call (mitigations, audit, seccomp):
// knowledge.ReferenceConfounders lists them, and explain names such a
// setting, not host drift, when it differs and its reference moved.
//
// Each is timed RefReps times on one pinned, locked thread and the median
// is kept; one reading takes about 50 ms.
type Reference struct {
	CPU        int     // the CPU it ran on
	CPUNsPerOp float64 // ns per dependent integer step
	MemGBps    float64 // sequential read bandwidth, 10⁹ bytes/s
	SyscallNs  float64 // ns per getppid call
	// MemSmallPages: the memory buffer is fixed to base pages
	// (MADV_NOHUGEPAGE took).
	MemSmallPages bool
}

const (
	// RefMemBytes is the memory reference's buffer: twice the largest
	// last-level cache slice a 2-vCPU cloud guest sees (32 MiB on the
	// development host), so the read reaches DRAM.
	RefMemBytes = 64 << 20
	// RefReps is how many times each workload is timed.
	RefReps    = 5
	refCPUOps  = 1 << 20 // ~1 ms at 1 ns per step
	refSysRuns = 4000    // ~1–2 ms at 0.3 µs per call
)

// MeasureReference takes one reference reading on cpu.
func MeasureReference(ctx context.Context, cpu int) (Reference, error) {
	if cpu < 0 {
		return Reference{}, errors.New("negative CPU")
	}
	if err := ctx.Err(); err != nil {
		return Reference{}, err
	}
	type result struct {
		ref Reference
		err error
	}
	ch := make(chan result, 1)
	go func() {
		// Never unlocked: the thread exits with its affinity.
		runtime.LockOSThread()
		var set unix.CPUSet
		set.Set(cpu)
		if err := unix.SchedSetaffinity(0, &set); err != nil {
			ch <- result{err: fmt.Errorf("pinning the reference to CPU %d: %w", cpu, err)}
			return
		}
		ch <- result{ref: measureReference(ctx, cpu)}
	}()
	r := <-ch
	if r.err == nil && ctx.Err() != nil {
		return Reference{}, ctx.Err()
	}
	return r.ref, r.err
}

func measureReference(ctx context.Context, cpu int) Reference {
	ref := Reference{CPU: cpu}
	// acc keeps the compiler from removing the workloads.
	var acc uint64
	defer func() { runtime.KeepAlive(acc) }()
	ref.CPUNsPerOp = medianOf(RefReps, func() float64 {
		start := time.Now()
		acc += cpuChain(refCPUOps)
		return float64(time.Since(start).Nanoseconds()) / refCPUOps
	})
	if ctx.Err() != nil {
		return ref
	}
	buf := refBuffer()
	ref.MemSmallPages = refBufSmall
	ref.MemGBps = medianOf(RefReps, func() float64 {
		start := time.Now()
		acc += sumRead(buf)
		return float64(len(buf)*int(unsafe.Sizeof(buf[0]))) / float64(time.Since(start).Nanoseconds())
	})
	if ctx.Err() != nil {
		return ref
	}
	ref.SyscallNs = medianOf(RefReps, func() float64 {
		start := time.Now()
		for range refSysRuns {
			unix.Getppid()
		}
		return float64(time.Since(start).Nanoseconds()) / refSysRuns
	})
	return ref
}

var (
	refBufOnce  sync.Once
	refBuf      []uint64
	refBufSmall bool // MADV_NOHUGEPAGE took
)

// refBuffer is allocated and faulted in once per process: a bench session
// takes two readings per probe, and 16k page faults per reading would
// cost more than the reading itself.
func refBuffer() []uint64 {
	refBufOnce.Do(func() {
		refBuf, refBufSmall = smallPageBuffer(RefMemBytes / 8)
		for i := range refBuf {
			refBuf[i] = uint64(i)
		}
	})
	return refBuf
}

// smallPageBuffer maps n words with MADV_NOHUGEPAGE before the first
// touch, so no huge page ever backs them; the Go heap instead where the
// kernel refuses (then the page size follows THP, and the reference says
// so only through its documentation).
func smallPageBuffer(n int) ([]uint64, bool) {
	b, err := unix.Mmap(-1, 0, n*8, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return make([]uint64, n), false
	}
	if err := unix.Madvise(b, unix.MADV_NOHUGEPAGE); err != nil {
		unix.Munmap(b)
		return make([]uint64, n), false
	}
	return unsafe.Slice((*uint64)(unsafe.Pointer(&b[0])), n), true
}

// cpuChain runs n dependent LCG + xor-shift steps.
func cpuChain(n int) uint64 {
	x := uint64(0x9e3779b97f4a7c15)
	for range n {
		x = x*6364136223846793005 + 1442695040888963407
		x ^= x >> 29
	}
	return x
}

// sumRead reads buf sequentially with four independent accumulators, so
// the loop is bound by memory, not by an add chain.
func sumRead(buf []uint64) uint64 {
	var a, b, c, d uint64
	for i := 0; i+3 < len(buf); i += 4 {
		a += buf[i]
		b += buf[i+1]
		c += buf[i+2]
		d += buf[i+3]
	}
	return a + b + c + d
}

func medianOf(n int, f func() float64) float64 {
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = f()
	}
	slices.Sort(xs)
	if n%2 == 1 {
		return xs[n/2]
	}
	return (xs[n/2-1] + xs[n/2]) / 2
}
