// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
// Page-cache accesses, insertions (misses) and dirtied folios, per cgroup
// and per file.
//
// Two probe sets; the loader picks one by what the kernel has:
//  - tracepoints (6.10+): filemap:mm_filemap_get_pages gives the page range
//    each read(2) batch asked for, mm_filemap_fault each mmap fault, and
//    mm_filemap_add_to_page_cache each folio read in (a miss), in pages.
//  - kprobes on folio_mark_accessed (5.16+; mark_page_accessed became a
//    wrapper the read path no longer calls, which is why bcc's cachestat
//    reads MISSES=0 there) or mark_page_accessed before 5.16, counted in
//    calls (folios) against folio insertions.
// Dirtied folios come from writeback:writeback_dirty_folio (or
// writeback_dirty_page before 5.16): the loader attaches one of them.
#include "common.h"

struct cache_val {
	__u64 accessed;      // pages looked up (tracepoints) or mark-accessed calls (kprobes)
	__u64 added;         // folios inserted into the page cache (misses)
	__u64 added_pages;   // pages in those folios
	__u64 dirtied;       // folios dirtied
};

struct file_key {
	__u64 ino;
	__u32 dev;
	__u32 pad;
};

// A read(2) reaches filemap_get_pages once per batch of folios, each time
// with the range still to read; counting each range would count the tail of
// a large read again and again. So each thread's last range stays pending
// and is charged when the next call shows how much of it was consumed.
struct pending_read {
	__u64 ino;
	__u64 index;
	__u64 last;
	__u64 cgroup;
	__u32 dev;
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u64); // cgroup v2 id
	__type(value, struct cache_val);
} cache SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, 16384);
	__type(key, struct file_key);
	__type(value, struct cache_val);
} files SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, struct pending_read);
} pending SEC(".maps");

static __always_inline struct cache_val *cg_slot(__u64 cg)
{
	struct cache_val *v = bpf_map_lookup_elem(&cache, &cg);
	if (v)
		return v;
	struct cache_val zero = {};
	bpf_map_update_elem(&cache, &cg, &zero, BPF_NOEXIST);
	return bpf_map_lookup_elem(&cache, &cg);
}

static __always_inline struct cache_val *file_slot(__u32 dev, __u64 ino)
{
	struct file_key k = {.ino = ino, .dev = dev};
	struct cache_val *v = bpf_map_lookup_elem(&files, &k);
	if (v)
		return v;
	struct cache_val zero = {};
	bpf_map_update_elem(&files, &k, &zero, BPF_NOEXIST);
	return bpf_map_lookup_elem(&files, &k);
}

static __always_inline void charge_access(__u64 cg, __u32 dev, __u64 ino, __u64 pages)
{
	struct cache_val *v = cg_slot(cg);
	if (v)
		v->accessed += pages;
	if (ino) {
		v = file_slot(dev, ino);
		if (v)
			v->accessed += pages;
	}
}

SEC("tracepoint/filemap/mm_filemap_get_pages")
int filemap_get_pages(struct trace_event_raw_mm_filemap_op_page_cache_range *ctx)
{
	__u32 tid = bpf_get_current_pid_tgid();
	__u64 ino = BPF_CORE_READ(ctx, i_ino), index = BPF_CORE_READ(ctx, index);
	__u64 last = BPF_CORE_READ(ctx, last_index);
	__u32 dev = BPF_CORE_READ(ctx, s_dev);
	struct pending_read *p = bpf_map_lookup_elem(&pending, &tid);
	if (p) {
		__u64 pages = p->last - p->index + 1;
		// Same read continuing: the previous batch consumed up to index.
		if (p->ino == ino && p->dev == dev && p->last == last && index >= p->index && index <= p->last)
			pages = index - p->index;
		charge_access(p->cgroup, p->dev, p->ino, pages);
		p->ino = ino;
		p->dev = dev;
		p->index = index;
		p->last = last;
		p->cgroup = bpf_get_current_cgroup_id();
		return 0;
	}
	struct pending_read n = {.ino = ino, .index = index, .last = last, .dev = dev,
				 .cgroup = bpf_get_current_cgroup_id()};
	bpf_map_update_elem(&pending, &tid, &n, BPF_ANY);
	return 0;
}

SEC("tracepoint/filemap/mm_filemap_fault")
int filemap_fault(struct trace_event_raw_mm_filemap_fault *ctx)
{
	charge_access(bpf_get_current_cgroup_id(), BPF_CORE_READ(ctx, s_dev), BPF_CORE_READ(ctx, i_ino), 1);
	return 0;
}

SEC("tracepoint/filemap/mm_filemap_add_to_page_cache")
int filemap_add(struct trace_event_raw_mm_filemap_op_page_cache *ctx)
{
	__u64 pages = 1;
	if (bpf_core_field_exists(ctx->order))
		pages = 1ULL << (BPF_CORE_READ(ctx, order) & 31);
	struct cache_val *v = cg_slot(bpf_get_current_cgroup_id());
	if (v) {
		v->added++;
		v->added_pages += pages;
	}
	v = file_slot(BPF_CORE_READ(ctx, s_dev), BPF_CORE_READ(ctx, i_ino));
	if (v) {
		v->added++;
		v->added_pages += pages;
	}
	return 0;
}

SEC("kprobe/folio_mark_accessed")
int folio_mark_accessed(void *ctx)
{
	struct cache_val *v = cg_slot(bpf_get_current_cgroup_id());
	if (v)
		v->accessed++;
	return 0;
}

SEC("kprobe/mark_page_accessed")
int mark_page_accessed(void *ctx)
{
	struct cache_val *v = cg_slot(bpf_get_current_cgroup_id());
	if (v)
		v->accessed++;
	return 0;
}

SEC("tracepoint/writeback/writeback_dirty_folio")
int dirty_folio(struct trace_event_raw_writeback_folio_template *ctx)
{
	struct cache_val *v = cg_slot(bpf_get_current_cgroup_id());
	if (v)
		v->dirtied++;
	return 0;
}
