// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
// Off-CPU time: at sched_switch the task leaving the CPU records when and
// where (kernel and user stack) it blocked; when it is switched back in the
// blocked time is added to its stack pair.
#include "common.h"

#define MAX_STACK_DEPTH 127

volatile const __u64 min_block_ns = 0;

struct offcpu_start {
	__u64 ts_ns;
	__s32 kstack;
	__s32 ustack;
};

struct offcpu_key {
	__u32 tgid;
	__u32 pid;
	__s32 kstack;
	__s32 ustack;
	char comm[TASK_COMM_LEN];
};

struct offcpu_val {
	__u64 ns;
	__u64 count;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 32768);
	__type(key, __u32);
	__type(value, struct offcpu_start);
} start SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(max_entries, 16384);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, MAX_STACK_DEPTH * sizeof(__u64));
} stacks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 32768);
	__type(key, struct offcpu_key);
	__type(value, struct offcpu_val);
} offcpu SEC(".maps");

SEC("tp_btf/sched_switch")
int BPF_PROG(sched_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	__u64 now = bpf_ktime_get_ns();
	__u32 prev_pid = BPF_CORE_READ(prev, pid);
	__u32 prev_tgid = BPF_CORE_READ(prev, tgid);

	if (prev_pid != 0 && (target_tgid == 0 || prev_tgid == target_tgid)) {
		struct offcpu_start s = {};
		s.ts_ns = now;
		s.kstack = bpf_get_stackid(ctx, &stacks, 0);
		s.ustack = bpf_get_stackid(ctx, &stacks, BPF_F_USER_STACK);
		bpf_map_update_elem(&start, &prev_pid, &s, BPF_ANY);
	}

	__u32 next_pid = BPF_CORE_READ(next, pid);
	struct offcpu_start *s = bpf_map_lookup_elem(&start, &next_pid);
	if (!s)
		return 0;
	__u64 delta = now - s->ts_ns;
	struct offcpu_key k = {};
	k.tgid = BPF_CORE_READ(next, tgid);
	k.pid = next_pid;
	k.kstack = s->kstack;
	k.ustack = s->ustack;
	bpf_map_delete_elem(&start, &next_pid);
	if (delta < min_block_ns)
		return 0;
	BPF_CORE_READ_STR_INTO(&k.comm, next, comm);
	struct offcpu_val *v = bpf_map_lookup_elem(&offcpu, &k);
	if (v) {
		__sync_fetch_and_add(&v->ns, delta);
		__sync_fetch_and_add(&v->count, 1);
	} else {
		struct offcpu_val nv = {delta, 1};
		bpf_map_update_elem(&offcpu, &k, &nv, BPF_NOEXIST);
	}
	return 0;
}
