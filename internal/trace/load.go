package trace

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/btf"
	"github.com/cilium/ebpf/features"
	"github.com/cilium/ebpf/link"
	"github.com/perflab/perflab/internal/clierr"
	"github.com/perflab/perflab/internal/hostfs"
	"golang.org/x/sys/unix"
)

// liftMemlock lets this process lock memory without limit, which kernels
// before 5.11 charge eBPF maps against; later kernels charge the memory
// cgroup, so there a refusal does not matter. cilium/ebpf's rlimit package
// does the same, but probes the kernel (a BPF map) in its init, which every
// perflab command paid at start-up (docs/performance.md).
func liftMemlock() error {
	inf := unix.Rlimit{Cur: unix.RLIM_INFINITY, Max: unix.RLIM_INFINITY}
	err := unix.Setrlimit(unix.RLIMIT_MEMLOCK, &inf)
	if err == nil || !errors.Is(err, unix.EPERM) {
		return err
	}
	var u unix.Utsname
	if unix.Uname(&u) == nil && kernelAtLeast(unix.ByteSliceToString(u.Release[:]), 5, 11) {
		return nil
	}
	return err
}

// kernelAtLeast compares a release string ("6.18.0-1-amd64") with major.minor.
func kernelAtLeast(release string, major, minor int) bool {
	var a, b int
	if _, err := fmt.Sscanf(release, "%d.%d", &a, &b); err != nil {
		return false
	}
	return a > major || a == major && b >= minor
}

// Needs is what a tracer requires of the kernel beyond eBPF itself.
type Needs struct {
	Tracefs  bool     // classic tracepoints (syscalls, filemap, writeback)
	BTFTypes []string // kernel types (e.g. btf_trace_sched_switch) that must exist
}

// Ready checks, in the order an operator would fix them, that eBPF tracing
// can work here: permission, memlock, kernel BTF, program types, tracefs.
// Its error is one line naming what is missing and what to do (exit 3).
func Ready(fs hostfs.FS, n Needs) error {
	if err := liftMemlock(); err != nil {
		if errors.Is(err, unix.EPERM) {
			return noPermission()
		}
		return clierr.Runtimef("raise it with `ulimit -l unlimited` or run as root", "cannot lift RLIMIT_MEMLOCK for eBPF maps: %v", err)
	}
	spec, err := btf.LoadKernelSpec()
	if err != nil {
		return clierr.Runtimef("boot a kernel built with CONFIG_DEBUG_INFO_BTF=y (Debian, Ubuntu, RHEL kernels since 5.4 are)",
			"kernel BTF is missing (/sys/kernel/btf/vmlinux): %v", firstLine(err))
	}
	if err := features.HaveProgramType(ebpf.TracePoint); err != nil {
		if isPerm(err) {
			return noPermission()
		}
		return clierr.Runtimef("use a kernel with CONFIG_BPF_SYSCALL=y and CONFIG_BPF_EVENTS=y", "the kernel cannot run eBPF tracepoint programs: %v", firstLine(err))
	}
	for _, name := range n.BTFTypes {
		if _, err := spec.AnyTypeByName(name); err != nil {
			return clierr.Runtimef("this kernel is too old or built without it; see docs/trace.md for kernel requirements", "the kernel has no %s", strings.TrimPrefix(name, "btf_trace_"))
		}
	}
	if n.Tracefs && !fs.Exists("/sys/kernel/tracing/events") && !fs.Exists("/sys/kernel/debug/tracing/events") {
		return clierr.Runtimef("mount it: mount -t tracefs nodev /sys/kernel/tracing", "tracefs is not mounted (needed for kernel tracepoints)")
	}
	return nil
}

func noPermission() error {
	return clierr.Runtimef("run as root, or grant CAP_BPF, CAP_PERFMON and CAP_SYS_RESOURCE with setcap or systemd AmbientCapabilities",
		"no permission to load eBPF programs")
}

func isPerm(err error) bool {
	return errors.Is(err, unix.EPERM) || errors.Is(err, unix.EACCES) || errors.Is(err, os.ErrPermission)
}

// haveFunc reports whether the kernel's BTF has a function name (the
// condition for fentry; kprobes also need it not to be inlined, which BTF
// also reflects).
func haveFunc(name string) bool {
	spec, err := btf.LoadKernelSpec()
	if err != nil {
		return false
	}
	var fn *btf.Func
	return spec.TypeByName(name, &fn) == nil
}

// haveTracepoint reports whether tracefs lists group/name.
func haveTracepoint(fs hostfs.FS, group, name string) bool {
	for _, root := range []string{"/sys/kernel/tracing/events/", "/sys/kernel/debug/tracing/events/"} {
		if fs.Exists(root + group + "/" + name) {
			return true
		}
	}
	return false
}

// loadErr turns a load or attach failure into one line: the verifier log is
// pages long, its first line says enough and the rest goes nowhere.
func loadErr(what string, err error) error {
	if isPerm(err) {
		return noPermission()
	}
	return clierr.Runtimef("see docs/trace.md for kernel requirements", "loading the %s eBPF programs failed: %s", what, firstLine(err))
}

func firstLine(err error) string {
	s := err.Error()
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}

// links closes every attached program.
type links []link.Link

func (l links) Close() {
	for _, k := range l {
		_ = k.Close()
	}
}

// attachTracing attaches a tp_btf or fentry program.
func attachTracing(p *ebpf.Program) (link.Link, error) {
	return link.AttachTracing(link.TracingOptions{Program: p})
}

// setConst sets a `volatile const` of a spec before loading.
func setConst(spec *ebpf.CollectionSpec, name string, v any) error {
	vs, ok := spec.Variables[name]
	if !ok {
		return fmt.Errorf("eBPF object has no variable %s", name)
	}
	return vs.Set(v)
}

// tracepointArgs is the number of arguments a BTF-enabled tracepoint
// passes (without the leading context), or 0 if unknown.
func tracepointArgs(name string) int {
	spec, err := btf.LoadKernelSpec()
	if err != nil {
		return 0
	}
	var td *btf.Typedef
	if spec.TypeByName("btf_trace_"+name, &td) != nil {
		return 0
	}
	ptr, ok := td.Type.(*btf.Pointer)
	if !ok {
		return 0
	}
	fp, ok := ptr.Target.(*btf.FuncProto)
	if !ok || len(fp.Params) == 0 {
		return 0
	}
	return len(fp.Params) - 1
}
