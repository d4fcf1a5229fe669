// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
// Shared by perflab's eBPF programs. Built by bpf2go (see ../gen.go) with
// CO-RE against vmlinux.h, which bpftool dumped from /sys/kernel/btf/vmlinux.
#pragma once
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#define TASK_COMM_LEN 16
#define AF_INET 2
#define AF_INET6 10

// Which process to trace; 0 traces all. Set by the loader before loading.
volatile const __u32 target_tgid = 0;
