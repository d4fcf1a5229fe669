// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
// TCP retransmissions and tail-loss probes, one event each into a ring buffer.
#include "common.h"

#define KIND_RETRANS 1
#define KIND_TLP 2

struct retrans_event {
	__u64 ts_ns;
	__u64 sock_ino;  // inode of the owning socket, resolved to a PID by user space
	__u8 saddr[16];
	__u8 daddr[16];
	__u32 pid;       // current task's tgid when the event fired (often a timer: not the owner)
	__u16 sport;
	__u16 dport;
	__u16 family;
	__u16 segs;
	__u8 state;
	__u8 kind;
	__u8 pad;
	__s16 err;    // 6.13+: the retransmission's error (0: sent)
	char comm[TASK_COMM_LEN];
};

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 20);
} events SEC(".maps");

// Counts of events the ring buffer could not take: [0] retrans, [1] TLP.
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, __u64);
} lost SEC(".maps");

const struct retrans_event *unused_retrans_event __attribute__((unused));

static __always_inline int emit(const struct sock *sk, const struct sk_buff *skb, __u8 kind, int err)
{
	struct retrans_event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		__u32 k = kind - 1;
		__u64 *v = bpf_map_lookup_elem(&lost, &k);
		if (v)
			__sync_fetch_and_add(v, 1);
		return 0;
	}
	__u64 id = bpf_get_current_pid_tgid();
	e->ts_ns = bpf_ktime_get_ns();
	e->pid = id >> 32;
	bpf_get_current_comm(e->comm, sizeof(e->comm));
	e->kind = kind;
	e->family = BPF_CORE_READ(sk, __sk_common.skc_family);
	e->sport = BPF_CORE_READ(sk, __sk_common.skc_num);
	e->dport = bpf_ntohs(BPF_CORE_READ(sk, __sk_common.skc_dport));
	e->state = BPF_CORE_READ(sk, __sk_common.skc_state);
	__builtin_memset(e->saddr, 0, sizeof(e->saddr));
	__builtin_memset(e->daddr, 0, sizeof(e->daddr));
	if (e->family == AF_INET) {
		bpf_core_read(e->saddr, 4, &sk->__sk_common.skc_rcv_saddr);
		bpf_core_read(e->daddr, 4, &sk->__sk_common.skc_daddr);
	} else {
		bpf_core_read(e->saddr, 16, &sk->__sk_common.skc_v6_rcv_saddr);
		bpf_core_read(e->daddr, 16, &sk->__sk_common.skc_v6_daddr);
	}
	e->sock_ino = BPF_CORE_READ(sk, sk_socket, file, f_inode, i_ino);
	e->segs = 1;
	if (skb) {
		struct tcp_skb_cb *cb = (struct tcp_skb_cb *)&skb->cb[0];
		__u16 segs = BPF_CORE_READ(cb, tcp_gso_segs);
		if (segs > 0)
			e->segs = segs;
	}
	e->err = err;
	e->pad = 0;
	bpf_ringbuf_submit(e, 0);
	return 0;
}

// Before 6.13 the tracepoint fired only for sent retransmissions and had
// two arguments; since, it also fires for failed ones and passes the error.
// The loader attaches the variant matching the kernel's prototype.
SEC("tp_btf/tcp_retransmit_skb")
int BPF_PROG(tcp_retransmit_skb, const struct sock *sk, const struct sk_buff *skb)
{
	return emit(sk, skb, KIND_RETRANS, 0);
}

SEC("tp_btf/tcp_retransmit_skb")
int BPF_PROG(tcp_retransmit_skb_err, const struct sock *sk, const struct sk_buff *skb, int err)
{
	return emit(sk, skb, KIND_RETRANS, err);
}

// Tail-loss probes have no tracepoint; the kernel function is stable since 3.10.
SEC("fentry/tcp_send_loss_probe")
int BPF_PROG(tcp_send_loss_probe, struct sock *sk)
{
	return emit(sk, 0, KIND_TLP, 0);
}
