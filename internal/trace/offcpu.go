package trace

import (
	"context"
	"encoding/binary"
	"strings"
	"time"

	"github.com/cilium/ebpf"
	"github.com/perflab/perflab/internal/bpf"
	"github.com/perflab/perflab/internal/flame/folded"
	"github.com/perflab/perflab/internal/hostfs"
)

// OffCPUOptions selects what `profile --off-cpu` records.
type OffCPUOptions struct {
	PID      int           // 0: every process
	Duration time.Duration // 0: until ctx ends
	MinBlock time.Duration // shorter blocks are not counted
	Ready    func()
}

// OffCPU is a recorded off-CPU profile: folded stacks weighted in
// nanoseconds blocked, "comm;user frames…;kernel frames_[k]", root first.
type OffCPU struct {
	Profile *folded.Profile
	Elapsed time.Duration
	Blocks  uint64 // blocking episodes counted
	Notes   []string
}

// RecordOffCPU traces sched_switch and returns where threads blocked.
func RecordOffCPU(ctx context.Context, fs hostfs.FS, o OffCPUOptions) (*OffCPU, error) {
	if err := Ready(fs, Needs{BTFTypes: []string{"btf_trace_sched_switch"}}); err != nil {
		return nil, err
	}
	spec, err := bpf.LoadOffcpu()
	if err != nil {
		return nil, loadErr("off-cpu", err)
	}
	if err := setConst(spec, bpf.OffcpuVarTargetTgid, uint32(o.PID)); err != nil {
		return nil, loadErr("off-cpu", err)
	}
	if err := setConst(spec, bpf.OffcpuVarMinBlockNs, uint64(o.MinBlock)); err != nil {
		return nil, loadErr("off-cpu", err)
	}
	coll, err := ebpf.NewCollection(spec)
	if err != nil {
		return nil, loadErr("off-cpu", err)
	}
	defer coll.Close()
	l, err := attachTracing(coll.Programs[bpf.OffcpuProgSchedSwitch])
	if err != nil {
		return nil, loadErr("off-cpu", err)
	}
	start := time.Now()
	if o.Ready != nil {
		o.Ready()
	}
	wait(ctx, o.Duration)
	l.Close()
	elapsed := time.Since(start)

	sy := newSymbolizer(fs)
	st := &stackReader{m: coll.Maps[bpf.OffcpuMapStacks]}
	res := &OffCPU{Elapsed: elapsed}
	if len(sy.kernel) == 0 {
		res.Notes = append(res.Notes, "kernel frames are unnamed: /proc/kallsyms hides addresses (kernel.kptr_restrict; run as root)")
	}
	counts := map[string]uint64{}
	var k bpf.OffcpuOffcpuKey
	var v bpf.OffcpuOffcpuVal
	it := coll.Maps[bpf.OffcpuMapOffcpu].Iterate()
	for it.Next(&k, &v) {
		frames := []string{commString(k.Comm[:])}
		frames = append(frames, st.user(sy, k.Tgid, k.Ustack)...)
		frames = append(frames, st.kernel(sy, k.Kstack)...)
		counts[strings.Join(frames, ";")] += v.Ns
		res.Blocks += v.Count
	}
	if err := it.Err(); err != nil {
		return nil, loadErr("off-cpu", err)
	}
	res.Profile = foldedFrom(counts)
	return res, nil
}

func foldedFrom(counts map[string]uint64) *folded.Profile {
	p := &folded.Profile{}
	for f, c := range counts {
		p.Stacks = append(p.Stacks, folded.Stack{Frames: f, Count: c})
	}
	p.Sort()
	return p
}

func commString(c []int8) string {
	b := make([]byte, 0, len(c))
	for _, x := range c {
		if x == 0 {
			break
		}
		b = append(b, byte(x))
	}
	s := strings.ReplaceAll(string(b), ";", ":")
	if s == "" {
		s = "[unknown]"
	}
	return s
}

// stackReader reads stack-trace map entries and names their frames.
type stackReader struct{ m *ebpf.Map }

func (r *stackReader) ips(id int32) []uint64 {
	if id < 0 {
		return nil
	}
	raw, err := r.m.LookupBytes(uint32(id))
	if err != nil || raw == nil {
		return nil
	}
	var out []uint64
	for i := 0; i+8 <= len(raw); i += 8 {
		a := binary.NativeEndian.Uint64(raw[i:])
		if a == 0 {
			break
		}
		out = append(out, a)
	}
	return out
}

// user returns the user frames root first.
func (r *stackReader) user(sy *symbolizer, pid uint32, id int32) []string {
	ips := r.ips(id)
	out := make([]string, 0, len(ips))
	for i := len(ips) - 1; i >= 0; i-- {
		out = append(out, sy.userName(pid, ips[i]))
	}
	return out
}

// kernel returns the kernel frames root first, annotated _[k].
func (r *stackReader) kernel(sy *symbolizer, id int32) []string {
	ips := r.ips(id)
	names := make([]string, 0, len(ips))
	for _, a := range ips {
		names = append(names, sy.kernelName(a))
	}
	// The leaf frames are the tracer itself (bpf_trace_run, the
	// tracepoint's iterator): not where the thread blocked.
	for len(names) > 0 && isTracerFrame(names[0]) {
		names = names[1:]
	}
	out := make([]string, 0, len(names))
	for i := len(names) - 1; i >= 0; i-- {
		out = append(out, names[i]+"_[k]")
	}
	return out
}

func isTracerFrame(n string) bool {
	return strings.HasPrefix(n, "bpf_") || strings.HasPrefix(n, "__bpf_") || strings.HasPrefix(n, "__traceiter_") ||
		strings.HasPrefix(n, "trace_call_bpf") || strings.HasPrefix(n, "perf_trace_")
}
