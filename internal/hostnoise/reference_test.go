package hostnoise

import (
	"context"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unsafe"
)

// The reference must measure something physical: positive, finite and in
// the range any x86-64 or arm64 server reaches (a step of a dependent
// multiply chain takes 1–10 ns, DRAM reads 1–200 GB/s, getppid 20 ns–20 µs).
func TestMeasureReference(t *testing.T) {
	r, err := MeasureReference(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("reference on CPU 0: %.3f ns/op, %.1f GB/s, getppid %.0f ns", r.CPUNsPerOp, r.MemGBps, r.SyscallNs)
	if !(r.CPUNsPerOp > 0.1 && r.CPUNsPerOp < 20) {
		t.Errorf("cpu %.3f ns/op out of range", r.CPUNsPerOp)
	}
	if !(r.MemGBps > 0.5 && r.MemGBps < 500) {
		t.Errorf("memory %.2f GB/s out of range", r.MemGBps)
	}
	if !(r.SyscallNs > 10 && r.SyscallNs < 50000) {
		t.Errorf("getppid %.0f ns out of range", r.SyscallNs)
	}
}

func TestMeasureReferenceCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := MeasureReference(ctx, 0); err == nil {
		t.Error("a cancelled context must return its error")
	}
	if _, err := MeasureReference(context.Background(), -1); err == nil {
		t.Error("negative CPU accepted")
	}
}

func TestReferenceKernels(t *testing.T) {
	// The chain is deterministic; the read sums what is there.
	if cpuChain(3) == cpuChain(4) {
		t.Error("cpuChain does not depend on its length")
	}
	buf := []uint64{1, 2, 3, 4, 5, 6, 7, 8}
	if s := sumRead(buf); s != 36 {
		t.Errorf("sumRead = %d, want 36", s)
	}
	if m := medianOf(4, func() func() float64 { i := 0.0; return func() float64 { i++; return i } }()); m != 2.5 {
		t.Errorf("medianOf = %v, want 2.5", m)
	}
}

// The memory reference's buffer carries MADV_NOHUGEPAGE (VmFlags "nh" in
// smaps): its page size cannot follow transparent_hugepage/enabled.
func TestReferenceBufferNoHugePages(t *testing.T) {
	buf := refBuffer()
	addr := uint64(uintptr(unsafe.Pointer(&buf[0])))
	smaps, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		t.Fatalf("read smaps: %v", err)
	}
	var in bool
	for _, line := range strings.Split(string(smaps), "\n") {
		f := strings.Fields(line)
		if len(f) > 0 && strings.Contains(f[0], "-") && !strings.HasSuffix(f[0], ":") {
			lo, hi, _ := strings.Cut(f[0], "-")
			l, _ := strconv.ParseUint(lo, 16, 64)
			h, _ := strconv.ParseUint(hi, 16, 64)
			in = l <= addr && addr < h
			continue
		}
		if in && len(f) > 0 && f[0] == "VmFlags:" {
			if !slices.Contains(f[1:], "nh") {
				t.Fatalf("reference buffer mapping lacks nh: %s", line)
			}
			return
		}
	}
	t.Fatalf("no mapping holds the reference buffer at %#x", addr)
}
