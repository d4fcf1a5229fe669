// Package trace runs perflab's kernel tracers: TCP retransmissions by flow
// and owning process, page-cache hit ratio, off-CPU time and futex
// (lock) waits. The eBPF programs live in internal/bpf (C compiled by
// bpf2go, committed); this package checks that the kernel can run them,
// loads and attaches them through cilium/ebpf, reads their maps and ring
// buffers, symbolises stacks and turns everything into typed results that
// render as text, JSON or Markdown, or as folded stacks for the flame
// renderer.
//
// Stack symbolisation (kallsyms and ELF symbol tables of the mapped files) is
// written here rather than taken from a library: the few Go symbolisers
// either need cgo (libelf, blazesym) or come with a whole profiler.
package trace
