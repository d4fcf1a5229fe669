// Package bpf holds perflab's eBPF programs: C sources in c/, compiled by
// bpf2go with CO-RE against c/vmlinux.h (bpftool btf dump file
// /sys/kernel/btf/vmlinux format c) into the committed *_bpfel.o objects
// and their Go loaders, so a plain `go build` needs neither clang nor kernel
// headers. One little-endian object serves amd64 and arm64: the programs
// read arguments through BTF (tp_btf, fentry) or tracepoint records, never
// through architecture-specific pt_regs, and every kernel struct field is
// relocated at load time.
//
// Regenerate with `go generate ./internal/bpf` (needs clang, llvm-strip and
// libbpf-dev); scripts/test regenerates and fails if the result differs from
// what is committed.
package bpf

//go:generate go run github.com/cilium/ebpf/cmd/bpf2go -cc clang -strip llvm-strip -target bpfel -go-package bpf -type retrans_event Retrans c/retrans.bpf.c -- -I./c -O2 -g -Wall -Werror
//go:generate go run github.com/cilium/ebpf/cmd/bpf2go -cc clang -strip llvm-strip -target bpfel -go-package bpf Offcpu c/offcpu.bpf.c -- -I./c -O2 -g -Wall -Werror
//go:generate go run github.com/cilium/ebpf/cmd/bpf2go -cc clang -strip llvm-strip -target bpfel -go-package bpf Futex c/futex.bpf.c -- -I./c -O2 -g -Wall -Werror
//go:generate go run github.com/cilium/ebpf/cmd/bpf2go -cc clang -strip llvm-strip -target bpfel -go-package bpf Cachestat c/cachestat.bpf.c -- -I./c -O2 -g -Wall -Werror
