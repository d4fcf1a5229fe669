package audit

import (
	"fmt"
	"strings"

	"github.com/perflab/perflab/internal/cpuset"
	"github.com/perflab/perflab/internal/snapshot"
)

// Process rules (with --pid): the allocator a service runs with, whether it
// uses transparent huge pages the way its workload wants, and whether it
// runs on the NIC's NUMA node.

func registerProcessRules() {
	register(
		&Rule{
			ID: "PROC-ALLOCATOR", Title: "The service uses a scalable malloc", Area: "process",
			Severity: Low, Workloads: []string{"kv", "web", "database"}, Knob: "/proc/<pid>/maps, /proc/<pid>/environ (LD_PRELOAD)",
			Why: "glibc malloc's arenas contend and fragment under many threads allocating small objects; tcmalloc, jemalloc and mimalloc keep " +
				"per-thread caches. Seed 002 preloaded tcmalloc (LD_PRELOAD=libtcmalloc.so.4) for redis and nginx to remove malloc hot spots, " +
				"part of a +48% redis gain together with the NIC and NUMA work.",
			Source: srcSeed002,
			Check:  checkAllocator,
		},
		&Rule{
			ID: "PROC-THP-USE", Title: "The process uses huge pages as its workload wants", Area: "process",
			Severity: Medium, Knob: "/proc/<pid>/smaps_rollup (AnonHugePages)",
			Why: "The host's THP policy only says what a process may get; AnonHugePages says what it got. Seed 000: a Java proxy went from " +
				"16000 to 28300 TPS when its heap moved onto huge pages (THP madvise to always); a JVM with 0 kB AnonHugePages under madvise " +
				"runs without -XX:+UseTransparentHugePages. Conversely redis and databases want none: THP makes fork's copy-on-write copy 2 MiB " +
				"per touched page, and redis warns about it at start.",
			Source: "seed 000_6e19edf94e0f8be9.txt; https://docs.kernel.org/admin-guide/mm/transhuge.html",
			Check:  checkProcTHP,
		},
		&Rule{
			ID: "PROC-CPUS-NUMA", Title: "The service runs on the NIC's NUMA node", Area: "process",
			Severity: Medium, Workloads: []string{"web", "kv", "latency"}, Knob: "/proc/<pid>/status (Cpus_allowed_list)",
			Why: "A network service allowed on CPUs of other nodes than its NIC handles packets the NIC wrote into another node's memory and " +
				"wakes on CPUs far from the interrupt. Seed 002 moved its nginx and redis containers onto the NIC's NUMA node (CPUs 64-71, 72-79), " +
				"part of the nginx +330% / redis +48% gain.",
			Source: srcSeed002,
			Check:  checkProcCPUsNUMA,
		},
	)
}

// processOrNA returns the --pid process, or na when there is none.
func processOrNA(s *snapshot.Snapshot) (*snapshot.Process, Result, bool) {
	if r, ok := missingFact(s, "process"); !ok {
		return nil, r, false
	}
	if s.Process == nil {
		return nil, naResult("no process given: run with --pid PID to judge a service"), false
	}
	return s.Process, Result{}, true
}

// libDir is the Debian multiarch library directory for the host's arch.
func libDir(arch string) string {
	switch arch {
	case "aarch64", "arm64":
		return "/usr/lib/aarch64-linux-gnu"
	case "", "x86_64", "amd64":
		return "/usr/lib/x86_64-linux-gnu"
	}
	return "/usr/lib/" + arch + "-linux-gnu"
}

func checkAllocator(ctx *Context) Result {
	p, res, ok := processOrNA(ctx.S)
	if !ok {
		return res
	}
	name := fmt.Sprintf("%s (pid %d)", p.Comm, p.PID)
	expected := "tcmalloc, jemalloc or mimalloc"
	if len(p.Allocators) > 0 {
		obs := name + ": " + strings.Join(p.Allocators, ", ")
		if p.LDPreload != "" {
			obs += " (LD_PRELOAD=" + p.LDPreload + ")"
		}
		return passResult(obs, expected)
	}
	if p.Comm == "java" {
		return naResult(name + ": the JVM heap is not allocated with malloc")
	}
	if r, ok := missingFact(ctx.S, "process.allocators"); !ok {
		return r
	}
	lib := libDir(ctx.S.Host.Arch) + "/libtcmalloc_minimal.so.4"
	r := failResult(name+": glibc malloc (no tcmalloc, jemalloc or mimalloc preloaded or mapped)", expected,
		Change{Kind: KindCommand, Target: p.Comm,
			Value: fmt.Sprintf("apt install libtcmalloc-minimal4, then restart %s with LD_PRELOAD=%s (systemctl edit → [Service] Environment=LD_PRELOAD=%s)",
				p.Comm, lib, lib),
			Current: fmt.Sprintf("remove the LD_PRELOAD setting and restart %s", p.Comm)})
	r.Reason = "an allocator linked statically (redis built from source with its bundled jemalloc; check `redis-cli INFO memory | grep mem_allocator`) does not show in /proc/PID/maps"
	return r
}

func checkProcTHP(ctx *Context) Result {
	s := ctx.S
	p, res, ok := processOrNA(s)
	if !ok {
		return res
	}
	e, res, ok := target(ctx, "thp.enabled")
	if !ok {
		return res
	}
	want := e.Value()
	if want != "always" && want != "never" {
		return naResult(fmt.Sprintf("workload %s leaves huge pages to each process (THP %s)", ctx.W.Name, e.String()))
	}
	if r, ok := missingFact(s, "process.anon_hugepages_kib"); !ok {
		return r
	}
	const minRSSKiB = 64 << 10
	if p.RssKiB < minRSSKiB {
		return naResult(fmt.Sprintf("%s (pid %d) has %d MiB resident: too little for huge pages to matter", p.Comm, p.PID, p.RssKiB>>10))
	}
	host := s.Memory.THP.Enabled
	share := float64(p.AnonHugePagesKiB) * 100 / float64(p.RssKiB)
	obs := fmt.Sprintf("%s (pid %d): %d MiB of %d MiB resident in huge pages (%.1f %%); host THP %s",
		p.Comm, p.PID, p.AnonHugePagesKiB>>10, p.RssKiB>>10, share, thpWord(host))
	if p.THPDisabled {
		obs += "; THP disabled for the process (prctl)"
	}
	hostChange := func(v string) Change {
		return factChange("memory.thp.enabled", v, host)
	}
	if want == "never" {
		expected := "no huge pages in the process"
		if p.AnonHugePagesKiB == 0 {
			return passResult(obs, expected)
		}
		if host == "never" {
			return failResult(obs, expected, Change{Kind: KindCommand, Target: p.Comm,
				Value:   fmt.Sprintf("restart %s: its huge pages predate THP never", p.Comm),
				Current: "nothing to undo"})
		}
		return failResult(obs, expected, hostChange("never"))
	}
	expected := "huge pages backing at least 1 % of resident memory"
	if share >= 1 {
		return passResult(obs, expected)
	}
	switch {
	case p.THPDisabled:
		return failResult(obs, expected, Change{Kind: KindCommand, Target: p.Comm,
			Value:   fmt.Sprintf("%s disabled THP for itself (prctl PR_SET_THP_DISABLE, e.g. redis disable-thp or a systemd unit setting): remove that and restart it", p.Comm),
			Current: "restore the setting and restart"})
	case host == "madvise" && p.Comm == "java":
		return failResult(obs, expected, Change{Kind: KindCommand, Target: p.Comm,
			Value:   "restart the JVM with -XX:+UseTransparentHugePages (or set THP to always, as seed 000 did)",
			Current: "restart the JVM without -XX:+UseTransparentHugePages"})
	case host != "always" && host != "":
		return failResult(obs, expected, hostChange("always"))
	}
	return failResult(obs, expected, Change{Kind: KindCommand, Target: p.Comm,
		Value:   "huge pages form as memory is touched and khugepaged collapses it; for a JVM, -XX:+AlwaysPreTouch backs the heap at start",
		Current: "nothing to undo"})
}

func thpWord(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

func checkProcCPUsNUMA(ctx *Context) Result {
	s := ctx.S
	p, res, ok := processOrNA(s)
	if !ok {
		return res
	}
	if len(s.CPU.NUMA) < 2 {
		return naResult("one NUMA node: every CPU is local to the NIC")
	}
	var nic *snapshot.NIC
	for _, n := range trafficNICs(s) {
		if n.NUMANode >= 0 && (nic == nil || len(n.RxQueues) > len(nic.RxQueues)) {
			n := n
			nic = &n
		}
	}
	if nic == nil {
		return naResult("no network interface with a known NUMA node")
	}
	if r, ok := missingFact(s, "process.cpus_allowed"); !ok {
		return r
	}
	if len(p.CPUsAllowed) == 0 {
		return naResult(fmt.Sprintf("%s (pid %d): allowed CPUs unknown", p.Comm, p.PID))
	}
	local := s.NodeCPUs(nic.NUMANode)
	obs := fmt.Sprintf("%s (pid %d, %s) allowed on CPUs %s (nodes %s); %s is on node %d (CPUs %s)",
		p.Comm, p.PID, countOf(int(p.Threads), "thread"), cpuset.FormatList(p.CPUsAllowed), cpuset.FormatList(nodesOf(s, p.CPUsAllowed)),
		nic.Name, nic.NUMANode, cpuset.FormatList(local))
	expected := fmt.Sprintf("CPUs of node %d only, when its threads fit there", nic.NUMANode)
	if cpuset.Contains(local, p.CPUsAllowed) {
		return passResult(obs, expected)
	}
	if p.Threads > int64(len(local)) {
		r := passResult(obs, expected)
		r.Reason = fmt.Sprintf("%d threads need more CPUs than node %d has (%d)", p.Threads, nic.NUMANode, len(local))
		return r
	}
	var others []string
	for _, n := range nodesOf(s, p.CPUsAllowed) {
		if n != nic.NUMANode {
			others = append(others, fmt.Sprint(n))
		}
	}
	move := ""
	if len(others) > 0 {
		move = fmt.Sprintf(" && migratepages %d %s %d", p.PID, strings.Join(others, ","), nic.NUMANode)
	}
	return failResult(obs, expected, Change{Kind: KindCommand, Target: fmt.Sprint(p.PID),
		Value:   fmt.Sprintf("taskset -a -cp %s %d%s  # lasts until restart: make it permanent in the unit (CPUAffinity=, NUMAPolicy=) or container cpuset", cpuset.FormatList(local), p.PID, move),
		Current: fmt.Sprintf("taskset -a -cp %s %d", cpuset.FormatList(p.CPUsAllowed), p.PID)})
}
