package audit

import (
	"fmt"
	"github.com/perflab/perflab/internal/knob"
	"sort"
	"strconv"
	"strings"

	"github.com/perflab/perflab/internal/numfmt"
)

// Memory management rules: transparent huge pages, reclaim and writeback,
// NUMA placement, overcommit and page merging.

func registerMemoryRules() {
	register(
		&Rule{
			ID:       "MEM-THP-ENABLED",
			Title:    "Transparent huge pages policy fits the workload",
			Area:     "memory",
			Severity: Medium,
			Knob:     "/sys/kernel/mm/transparent_hugepage/enabled",
			Why: "THP cuts TLB misses for large heaps and hurts fork-heavy and small-allocation workloads, so the " +
				"right value depends on the workload. Seed 000: a Java proxy on kernel 4.19 went from 16000 to 28300 TPS " +
				"(+77%) when THP moved from madvise to always. Redis, MongoDB and relational databases want never (or " +
				"madvise): after fork a one-byte write copies a 2 MiB page instead of 4 KiB (512 times the " +
				"copy-on-write traffic), and khugepaged compaction adds latency spikes.",
			Source: "seed 000_6e19edf94e0f8be9.txt; https://redis.io/docs/latest/operate/oss_and_stack/management/optimization/latency/",
			Check:  checkTHPEnabled,
		},
		&Rule{
			ID:       "MEM-THP-DEFRAG",
			Title:    "THP defrag does not stall page faults on compaction",
			Area:     "memory",
			Severity: Medium,
			Knob:     "/sys/kernel/mm/transparent_hugepage/defrag",
			Why: "With defrag=always every page fault that cannot get a free 2 MiB page stalls in direct reclaim and " +
				"compaction; on a fragmented host that is milliseconds to hundreds of milliseconds per fault, seen as " +
				"high %sys and latency spikes. madvise or defer leave compaction to khugepaged and kcompactd except for " +
				"regions that asked for huge pages.",
			Source: "https://docs.kernel.org/admin-guide/mm/transhuge.html",
			Check:  checkTHPDefrag,
		},
		&Rule{
			ID:       "MEM-SWAPPINESS",
			Title:    "Swappiness keeps the working set in memory",
			Area:     "memory",
			Severity: Low,
			Knob:     "vm.swappiness",
			Why: "A swapped-out page costs a disk read to touch again: about 100 us on NVMe and 10 ms on a disk, " +
				"against 100 ns from DRAM, i.e. 1000 to 100000 times slower. Databases and caches size their buffers " +
				"to fit RAM and want the kernel to drop page cache before their heap (MariaDB recommends swappiness 1).",
			Source: "https://mariadb.com/kb/en/configuring-swappiness/; https://docs.kernel.org/admin-guide/sysctl/vm.html#swappiness",
			Check:  checkSwappiness,
		},
		&Rule{
			ID:       "MEM-DIRTY-RATIO",
			Title:    "Dirty page limit bounds write stalls",
			Area:     "memory",
			Severity: Low,
			Knob:     "vm.dirty_ratio (or vm.dirty_bytes)",
			Why: "A writer that reaches dirty_ratio is throttled until writeback catches up. On a 64 GiB host the " +
				"default 20% lets 12.8 GiB of dirty pages pile up; at 200 MB/s that is over a minute of writeback, and " +
				"fsync-heavy databases see it as multi-second commit stalls. Databases prefer a lower limit.",
			Source: "https://docs.kernel.org/admin-guide/sysctl/vm.html#dirty-ratio",
			Check: func(ctx *Context) Result {
				return checkDirty(ctx, "vm.dirty_ratio", "vm.dirty_bytes")
			},
		},
		&Rule{
			ID:       "MEM-DIRTY-BACKGROUND",
			Title:    "Background writeback starts early",
			Area:     "memory",
			Severity: Low,
			Knob:     "vm.dirty_background_ratio (or vm.dirty_background_bytes)",
			Why: "Background writeback starts at dirty_background_ratio; set high, dirty data accumulates silently and " +
				"is flushed in bursts that saturate the disk. At the default 10% of a 64 GiB host, 6.4 GiB wait before " +
				"writeback begins — about 32 s of a 200 MB/s disk.",
			Source: "https://docs.kernel.org/admin-guide/sysctl/vm.html#dirty-background-ratio",
			Check: func(ctx *Context) Result {
				return checkDirty(ctx, "vm.dirty_background_ratio", "vm.dirty_background_bytes")
			},
		},
		&Rule{
			ID:       "MEM-ZONE-RECLAIM",
			Title:    "Zone reclaim is off",
			Area:     "memory",
			Severity: Medium,
			Knob:     "vm.zone_reclaim_mode",
			Why: "With zone_reclaim_mode on, a NUMA node that runs short reclaims its own page cache rather than " +
				"allocate from a neighbour: a remote access costs roughly 1.5x a local one, a dropped cache page costs " +
				"a disk read (100 us or more). The kernel turned it off by default in 3.16 because file servers and " +
				"databases lost throughput to it.",
			Source: "https://docs.kernel.org/admin-guide/sysctl/vm.html#zone-reclaim-mode; https://git.kernel.org/torvalds/c/4f9b16a64753d0bb607454347036dc997fd03b82",
			Check: func(ctx *Context) Result {
				return checkSysctl(ctx, "vm.zone_reclaim_mode", "vm.zone_reclaim_mode")
			},
		},
		&Rule{
			ID:       "MEM-NUMA-BALANCING",
			Title:    "Automatic NUMA balancing suits the workload",
			Area:     "memory",
			Severity: Low,
			Knob:     "kernel.numa_balancing",
			Why: "Automatic NUMA balancing unmaps 256 MB of a task's memory per scan period (numa_balancing_scan_size_mb) " +
				"to take hinting faults and migrate pages toward the CPU using them. That helps unpinned general loads " +
				"and costs latency-sensitive and database workloads page faults and migrations at random moments; they " +
				"pin memory themselves and want it off.",
			Source: "https://docs.kernel.org/admin-guide/sysctl/kernel.html#numa-balancing",
			Check:  checkNUMABalancing,
		},
		&Rule{
			ID:       "MEM-HUGEPAGES-NUMA-BALANCE",
			Title:    "Reserved huge pages are spread evenly across NUMA nodes",
			Area:     "memory",
			Severity: Medium,
			Knob:     "/sys/devices/system/node/node*/hugepages/hugepages-*/nr_hugepages",
			Why: "A huge page pool reserved at boot or through /proc/sys/vm/nr_hugepages may land mostly on one node; " +
				"threads on the other nodes then use remote memory for their whole life, about 1.5x the latency and " +
				"a fraction of the bandwidth of local memory. Reserve per node.",
			Source: "https://docs.kernel.org/admin-guide/mm/hugetlbpage.html",
			Check:  checkHugepagesNUMA,
		},
		&Rule{
			ID:       "MEM-OVERCOMMIT",
			Title:    "Memory overcommit policy lets the workload fork",
			Area:     "memory",
			Severity: Medium,
			Knob:     "vm.overcommit_memory",
			Why: "Redis saves snapshots and rewrites its AOF in a forked child; with overcommit_memory=0 the kernel " +
				"may refuse that fork when free memory is below the parent's size (a 10 GB dataset needs 10 GB " +
				"apparently free, although copy-on-write touches far less), and BGSAVE fails. Redis asks for 1; 2 " +
				"(strict) breaks large forks everywhere.",
			Source: "https://redis.io/docs/latest/operate/oss_and_stack/management/admin/; https://docs.kernel.org/admin-guide/sysctl/vm.html#overcommit-memory",
			Check: func(ctx *Context) Result {
				return checkSysctl(ctx, "vm.overcommit_memory", "vm.overcommit_memory")
			},
		},
		&Rule{
			ID:       "MEM-KSM",
			Title:    "Kernel same-page merging is off",
			Area:     "memory",
			Severity: Low,
			Knob:     "/sys/kernel/mm/ksm/run",
			Why: "With KSM running, ksmd scans 100 pages every 20 ms by default and merges identical pages; writes to " +
				"a merged page take a copy-on-write fault, and memory deduplication is a known side channel between " +
				"tenants. Worth it only for VM density; set ksm.run to 1 in a profile for such hosts.",
			Source: "https://docs.kernel.org/admin-guide/mm/ksm.html",
			Check:  checkKSM,
		},
	)
}

// thpSeverity raises THP findings for workloads where the policy was shown to
// move throughput or latency by tens of percent (seed 000, redis docs).
var thpSeverity = map[string]Severity{"jvm": High, "kv": High, "database": High}

func checkTHPEnabled(ctx *Context) Result {
	r := checkTHP(ctx, "memory.thp.enabled", ctx.S.Memory.THP.Enabled, "thp.enabled")
	if r.Status == Fail {
		if sev, ok := thpSeverity[ctx.W.Base()]; ok {
			r.Severity = severityPtr(sev)
		}
	}
	return r
}

func checkTHPDefrag(ctx *Context) Result {
	return checkTHP(ctx, "memory.thp.defrag", ctx.S.Memory.THP.Defrag, "thp.defrag")
}

func checkTHP(ctx *Context, fact, observed, tgt string) Result {
	k := knob.MustLookup(fact)
	if r, ok := missingFact(ctx.S, fact); !ok {
		return r
	}
	if observed == "" {
		return naResult("the kernel has no transparent huge pages (" + k.Name() + " absent)")
	}
	e, r, ok := target(ctx, tgt)
	if !ok {
		return r
	}
	if e.Matches(observed) {
		return passResult(observed, e.String())
	}
	return failResult(observed, e.String(), knobChange(k, e.Value(), observed))
}

func checkSwappiness(ctx *Context) Result {
	s := ctx.S
	if r, ok := missingFact(s, "memory.total_kib", "memory.swap_total_kib"); !ok {
		return r
	}
	if s.Memory.SwapTotalKiB == 0 {
		return naResult("no swap configured: anonymous memory cannot be swapped out")
	}
	return checkSysctl(ctx, "vm.swappiness", "vm.swappiness")
}

// checkDirty judges a dirty-page limit given either as a ratio or, when the
// bytes variant is set (the kernel then zeroes the ratio), as bytes converted
// to a share of RAM. The fix writes the variant in use so revert restores it.
func checkDirty(ctx *Context, ratioName, bytesName string) Result {
	s := ctx.S
	e, r, ok := target(ctx, ratioName)
	if !ok {
		return r
	}
	if b, set := s.Sysctl[bytesName]; set && strings.TrimSpace(b) != "0" {
		n, err := strconv.ParseInt(strings.TrimSpace(b), 10, 64)
		if err != nil {
			return errorResult(bytesName + " is not a number: " + strconv.Quote(b))
		}
		if r, ok := missingFact(s, "memory.total_kib"); !ok {
			return r
		}
		if s.Memory.TotalKiB <= 0 {
			return naResult(bytesName + " is set but total memory is unknown, so its share of RAM cannot be judged")
		}
		ram := float64(s.Memory.TotalKiB) * 1024
		pct := 100 * float64(n) / ram
		obs := fmt.Sprintf("%s = %s (%.1f%% of %s RAM)", bytesName, numfmt.Bytes(n), pct, numfmt.Bytes(int64(ram)))
		if e.Matches(strconv.FormatFloat(pct, 'f', 2, 64)) {
			return passResult(obs, e.String()+" % of RAM")
		}
		wantPct, ok := parseFloat(e.Value())
		if !ok || wantPct <= 0 {
			return errorResult(fmt.Sprintf("%s is set, and the target %q for %s is not a percentage to convert it to", bytesName, e.String(), ratioName))
		}
		want := strconv.FormatInt(int64(wantPct/100*ram), 10)
		return failResult(obs, e.String()+" % of RAM", sysctlChange(bytesName, want, b))
	}
	return checkSysctl(ctx, ratioName, ratioName)
}

func checkNUMABalancing(ctx *Context) Result {
	s := ctx.S
	if r, ok := missingFact(s, "cpu.numa"); !ok {
		return r
	}
	if len(s.CPU.NUMA) < 2 {
		return naResult(fmt.Sprintf("%d NUMA node(s): there is nothing to balance between", len(s.CPU.NUMA)))
	}
	return checkSysctl(ctx, "kernel.numa_balancing", "kernel.numa_balancing")
}

func checkHugepagesNUMA(ctx *Context) Result {
	s := ctx.S
	if r, ok := missingFact(s, "cpu.numa", "memory.hugepage_size_kib"); !ok {
		return r
	}
	nodes := s.CPU.NUMA
	if len(nodes) < 2 {
		return naResult(fmt.Sprintf("%d NUMA node(s): huge pages cannot be unevenly placed", len(nodes)))
	}
	var total int64
	for _, n := range nodes {
		total += n.HugePagesTotal
	}
	if total == 0 {
		return naResult("no huge pages reserved")
	}
	if s.Memory.HugePageSizeKiB <= 0 {
		return errorResult("huge pages are reserved but the snapshot has no huge page size")
	}
	type node struct {
		id    int
		pages int64
	}
	sorted := make([]node, len(nodes))
	for i, n := range nodes {
		sorted[i] = node{n.ID, n.HugePagesTotal}
	}
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].id < sorted[j].id })
	even := total / int64(len(nodes))
	var parts []string
	var min, max int64 = -1, 0
	for _, n := range sorted {
		parts = append(parts, fmt.Sprintf("node%d: %d", n.id, n.pages))
		if min < 0 || n.pages < min {
			min = n.pages
		}
		if n.pages > max {
			max = n.pages
		}
	}
	obs := strings.Join(parts, ", ")
	expected := fmt.Sprintf("about %d per node (within 10%%)", even)
	// Tolerate a 10% spread (and one page of rounding): a pool split across
	// nodes is never exactly even when the total is not a multiple.
	if float64(max-min) <= 0.1*float64(even)+1 {
		return passResult(obs, expected)
	}
	var cs []Change
	for _, n := range sorted {
		if n.pages == even {
			continue
		}
		cs = append(cs, factChange("cpu.numa[*].hugepages_total", strconv.FormatInt(even, 10), strconv.FormatInt(n.pages, 10),
			strconv.Itoa(n.id), strconv.FormatInt(s.Memory.HugePageSizeKiB, 10)))
	}
	return failResult(obs, expected, cs...)
}

func checkKSM(ctx *Context) Result {
	s := ctx.S
	if r, ok := missingFact(s, "memory.ksm_run"); !ok {
		return r
	}
	run := strings.TrimSpace(s.Memory.KSMRun)
	if run == "" {
		return naResult("the kernel has no KSM (/sys/kernel/mm/ksm absent)")
	}
	e, r, ok := target(ctx, "ksm.run")
	if !ok {
		return r
	}
	if e.Matches(run) {
		return passResult(ksmWord(run), e.String())
	}
	return failResult(ksmWord(run), e.String(), factChange("memory.ksm_run", e.Value(), run))
}

func ksmWord(run string) string {
	switch run {
	case "0":
		return "0 (stopped)"
	case "1":
		return "1 (merging)"
	case "2":
		return "2 (unmerging)"
	}
	return run
}
