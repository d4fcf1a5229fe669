// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
// Futex waits (the slow path of every user-space mutex, condition variable
// and Go/Java park), summed by process, lock address and waiting user stack.
#include "common.h"

#define MAX_STACK_DEPTH 127
#define FUTEX_WAIT 0
#define FUTEX_LOCK_PI 6
#define FUTEX_WAIT_BITSET 9
#define FUTEX_WAIT_REQUEUE_PI 11
#define FUTEX_LOCK_PI2 13
#define FUTEX_CMD_MASK 0x7f

volatile const __u64 min_block_ns = 0;

// Field layout of the syscalls:sys_enter_futex and sys_exit_futex
// tracepoints (stable: every argument is a u64 slot after the syscall nr).
struct futex_enter_args {
	__u64 common;
	__s32 nr;
	__u32 pad;
	__u64 uaddr;
	__u64 op;
	__u64 val;
	__u64 utime;
	__u64 uaddr2;
	__u64 val3;
};

struct futex_exit_args {
	__u64 common;
	__s32 nr;
	__u32 pad;
	__s64 ret;
};

struct lockwait_start {
	__u64 ts_ns;
	__u64 uaddr;
	__s32 ustack;
	__u32 pad;
};

struct lockwait_key {
	__u64 uaddr;
	__u32 tgid;
	__s32 ustack;
	char comm[TASK_COMM_LEN];
};

struct lockwait_val {
	__u64 ns;
	__u64 count;
	__u64 max_ns;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 32768);
	__type(key, __u32);
	__type(value, struct lockwait_start);
} fstart SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(max_entries, 16384);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, MAX_STACK_DEPTH * sizeof(__u64));
} fstacks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 32768);
	__type(key, struct lockwait_key);
	__type(value, struct lockwait_val);
} waits SEC(".maps");

SEC("tracepoint/syscalls/sys_enter_futex")
int futex_enter(struct futex_enter_args *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32, pid = id;
	if (target_tgid != 0 && tgid != target_tgid)
		return 0;
	__u32 cmd = ctx->op & FUTEX_CMD_MASK;
	if (cmd != FUTEX_WAIT && cmd != FUTEX_WAIT_BITSET && cmd != FUTEX_LOCK_PI &&
	    cmd != FUTEX_LOCK_PI2 && cmd != FUTEX_WAIT_REQUEUE_PI)
		return 0;
	struct lockwait_start s = {};
	s.ts_ns = bpf_ktime_get_ns();
	s.uaddr = ctx->uaddr;
	s.ustack = bpf_get_stackid(ctx, &fstacks, BPF_F_USER_STACK);
	bpf_map_update_elem(&fstart, &pid, &s, BPF_ANY);
	return 0;
}

SEC("tracepoint/syscalls/sys_exit_futex")
int futex_exit(struct futex_exit_args *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 pid = id;
	struct lockwait_start *s = bpf_map_lookup_elem(&fstart, &pid);
	if (!s)
		return 0;
	__u64 delta = bpf_ktime_get_ns() - s->ts_ns;
	struct lockwait_key k = {};
	k.uaddr = s->uaddr;
	k.tgid = id >> 32;
	k.ustack = s->ustack;
	bpf_map_delete_elem(&fstart, &pid);
	if (delta < min_block_ns)
		return 0;
	bpf_get_current_comm(&k.comm, sizeof(k.comm));
	struct lockwait_val *v = bpf_map_lookup_elem(&waits, &k);
	if (v) {
		__sync_fetch_and_add(&v->ns, delta);
		__sync_fetch_and_add(&v->count, 1);
		if (delta > v->max_ns)
			v->max_ns = delta;
	} else {
		struct lockwait_val nv = {delta, 1, delta};
		bpf_map_update_elem(&waits, &k, &nv, BPF_NOEXIST);
	}
	return 0;
}
