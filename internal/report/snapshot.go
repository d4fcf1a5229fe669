package report

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/perflab/perflab/internal/cpuset"
	"github.com/perflab/perflab/internal/numfmt"
	"github.com/perflab/perflab/internal/snapshot"
	"github.com/perflab/perflab/internal/termfmt"
)

// SnapshotText writes the compact, one-screen summary of `perflab
// snapshot`: one line (or a few) per area, numbers with units, and the
// count of unavailable facts, listed with verbose. It reads only the
// snapshot, so it prints a saved snapshot the same as a live one.
func SnapshotText(w io.Writer, s *snapshot.Snapshot, st termfmt.Style, verbose bool) error {
	t := &snapshotWriter{w: w, st: st, s: s}
	t.head()
	t.host()
	t.cpu()
	t.power()
	t.memory()
	t.kernel()
	t.net(s)
	t.block(s)
	t.mounts(s)
	t.cgroup(s)
	t.services(s)
	t.tools(s)
	t.unavailable(s, verbose)
	return t.err
}

type snapshotWriter struct {
	w   io.Writer
	st  termfmt.Style
	s   *snapshot.Snapshot
	err error
}

// line writes one area line: a bold, padded label and the parts joined by
// two spaces; empty parts are dropped so absent facts leave no holes.
func (t *snapshotWriter) line(label string, parts ...string) {
	var kept []string
	for _, p := range parts {
		if p != "" {
			kept = append(kept, p)
		}
	}
	if len(kept) == 0 {
		return
	}
	pad := ""
	if label == "" {
		pad = strings.Repeat(" ", 10)
	} else {
		pad = t.st.Bold(fmt.Sprintf("%-9s", label)) + " "
	}
	if t.err == nil {
		_, t.err = fmt.Fprintln(t.w, pad+strings.Join(kept, "  "))
	}
}

func (t *snapshotWriter) head() {
	s := t.s
	root := s.Root
	if root == "/" {
		root = "live host"
	}
	t.line("snapshot", s.ID, "of "+root, "taken "+s.TakenAt.UTC().Format("2006-01-02 15:04:05 UTC"), "perflab "+s.Perflab)
}

func (t *snapshotWriter) host() {
	h := t.s.Host
	virt := ""
	if h.Virtualization != "" {
		virt = "virt " + h.Virtualization
	}
	if h.Container != "" {
		virt += " (container " + h.Container + ")"
	}
	up := ""
	if h.UptimeSeconds > 0 {
		up = "up " + txtDuration(h.UptimeSeconds)
	}
	t.line("host", h.Hostname, h.OS, h.Arch, virt, strings.TrimSpace(h.Vendor+" "+h.Product), up)
}

func (t *snapshotWriter) cpu() {
	c := t.s.CPU
	topo := ""
	if c.Threads > 0 {
		topo = fmt.Sprintf("%d socket(s), %d cores, %d threads", c.Sockets, c.Cores, c.Threads)
		if c.SMT.Control != "" {
			topo += " (SMT " + c.SMT.Control + ")"
		}
	}
	numa := ""
	if len(c.NUMA) > 0 {
		var nodes []string
		for _, n := range c.NUMA {
			nodes = append(nodes, fmt.Sprintf("%d:%s", n.ID, cpuset.FormatList(n.CPUs)))
		}
		numa = "NUMA " + strings.Join(nodes, " ")
	}
	t.line("cpu", c.Model, topo, numa)
}

func (t *snapshotWriter) power() {
	c := t.s.CPU
	gov := ""
	if len(c.Governors) > 0 {
		gov = "governor " + txtByCPUs(c.Governors)
	}
	epp := ""
	if len(c.EPP) > 0 {
		epp = "EPP " + txtByCPUs(c.EPP)
	}
	boost := ""
	if c.Boost != nil {
		boost = "boost " + txtOnOff(*c.Boost)
	}
	freq := ""
	if c.MaxKHz > 0 {
		freq = fmt.Sprintf("%.2f-%.2f GHz", float64(c.MinKHz)/1e6, float64(c.MaxKHz)/1e6)
	}
	idle := ""
	if c.IdleDriver != "" {
		idle = "idle " + c.IdleDriver
		if c.IdleGovernor != "" {
			idle += "/" + c.IdleGovernor
		}
		var names []string
		for _, cs := range c.CStates {
			names = append(names, cs.Name)
		}
		if len(names) > 0 {
			idle += " (" + strings.Join(names, " ") + ")"
		}
	}
	drv := c.ScalingDriver
	if drv == "" && len(c.Governors) == 0 {
		drv = "no cpufreq"
	}
	t.line("power", drv, gov, epp, freq, boost, idle)
}

func (t *snapshotWriter) memory() {
	m := t.s.Memory
	if why := t.s.Missing("memory.total_kib"); why != "" {
		t.line("memory", "unknown ("+why+")")
		return
	}
	if m.TotalKiB == 0 {
		return
	}
	total := t.known("memory.total_kib", numfmt.KiB(m.TotalKiB)+" total", "total") + ", " +
		t.known("memory.available_kib", numfmt.KiB(m.AvailableKiB)+" available", "available")
	swap := t.known("memory.swap_total_kib", "swap "+numfmt.KiB(m.SwapTotalKiB), "swap")
	thp := ""
	if m.THP.Enabled != "" {
		thp = "THP " + m.THP.Enabled + ", defrag " + m.THP.Defrag
	}
	huge := ""
	if m.HugePagesTotal > 0 {
		huge = fmt.Sprintf("hugepages %d × %s (%s free)", m.HugePagesTotal, numfmt.KiB(m.HugePageSizeKiB),
			t.known("memory.hugepages_free", fmt.Sprint(m.HugePagesFree), ""))
	}
	t.line("memory", total, swap, thp, huge)
}

// known is text when fact was collected, and otherwise "what unknown
// (reason)": a fact the host did not give is never printed as a zero.
func (t *snapshotWriter) known(fact, text, what string) string {
	why := t.s.Missing(fact)
	if why == "" {
		return text
	}
	return strings.TrimSpace(what+" unknown") + " (" + why + ")"
}

func (t *snapshotWriter) kernel() {
	k := t.s.Kernel
	pre := ""
	if k.Preempt != "" {
		pre = "preempt " + k.Preempt
	}
	cs := ""
	if k.Clocksource != "" {
		cs = "clocksource " + k.Clocksource
	}
	taint := ""
	if k.Tainted != 0 {
		taint = fmt.Sprintf("tainted %d", k.Tainted)
	}
	t.line("kernel", k.Release, pre, cs, taint)
}

func (t *snapshotWriter) net(s *snapshot.Snapshot) {
	// Where each IRQ lands (IRQ.Landing), as irq show and the audit say.
	irqAff := map[int][]int{}
	online := s.OnlineCPUs()
	for _, q := range s.IRQs {
		if n, err := strconv.Atoi(q.Number); err == nil {
			irqAff[n] = q.Landing(online)
		}
	}
	label := "net"
	var virtual []string
	for _, n := range s.Net.Interfaces {
		if n.Virtual {
			virtual = append(virtual, n.Name)
			continue
		}
		speed := ""
		if n.SpeedMbps > 0 {
			speed = fmt.Sprintf("%d Mb/s", n.SpeedMbps)
		}
		node := ""
		if n.NUMANode >= 0 {
			node = fmt.Sprintf("node %d", n.NUMANode)
		}
		queues := fmt.Sprintf("%d rx/%d tx queues", len(n.RxQueues), len(n.TxQueues))
		if n.Channels != nil {
			queues += fmt.Sprintf(" (combined %d of %d)", n.Channels.Combined, n.Channels.MaxCombined)
		}
		irqs := ""
		if len(n.IRQs) > 0 {
			irqs = fmt.Sprintf("%d IRQs %s", len(n.IRQs), txtIRQAffinity(n.IRQs, irqAff))
		}
		t.line(label, n.Name, strings.TrimSpace(n.Driver+" "+n.PCI), n.OperState, speed, fmt.Sprintf("MTU %d", n.MTU), node, queues, "RPS "+txtRPS(n.RxQueues), irqs)
		label = ""
	}
	if len(virtual) > 0 {
		t.line(label, "virtual: "+strings.Join(virtual, " "))
		label = ""
	}
	ct := s.Net.Conntrack
	// "Not loaded" needs evidence: a module list or /proc/sys/net.
	conn := t.known("net.conntrack.loaded", "conntrack not loaded", "conntrack")
	if ct.Loaded {
		conn = fmt.Sprintf("conntrack %d/%d entries", ct.Count, ct.Max)
		if ct.Max > 0 {
			conn += fmt.Sprintf(" (%.0f%%)", 100*float64(ct.Count)/float64(ct.Max))
		}
		if ct.Buckets > 0 {
			conn += fmt.Sprintf(", %d buckets", ct.Buckets)
		}
	}
	sock := fmt.Sprintf("TCP %d in use, %d time-wait", s.Net.Sockets.TCPInUse, s.Net.Sockets.TCPTimeWait)
	if s.Missing("net.sockets") != "" {
		sock = ""
	}
	t.line(label, conn, sock)
}

// txtIRQAffinity groups IRQs by the CPUs they land on (IRQ.Landing),
// largest group first: "101,105 on CPUs 0, …, 100 on CPUs 4", so the queue
// vectors' placement is not hidden behind a misc vector allowed everywhere.
func txtIRQAffinity(irqs []int, aff map[int][]int) string {
	groups := map[string][]int{}
	for _, i := range irqs {
		k := cpuset.FormatList(aff[i])
		groups[k] = append(groups[k], i)
	}
	keys := make([]string, 0, len(groups))
	for k := range groups {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if len(groups[keys[i]]) != len(groups[keys[j]]) {
			return len(groups[keys[i]]) > len(groups[keys[j]])
		}
		return keys[i] < keys[j]
	})
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		cpus := "CPUs " + k
		if k == "" {
			cpus = "unknown CPUs"
		}
		parts = append(parts, cpuset.FormatList(groups[k])+" on "+cpus)
	}
	return strings.Join(parts, ", ")
}

// txtRPS says whether receive packet steering is set on any rx queue.
func txtRPS(qs []snapshot.Queue) string {
	on := 0
	for _, q := range qs {
		if q.RPS != "" && !cpuset.MaskEmpty(q.RPS) {
			on++
		}
	}
	if on == 0 {
		return "off"
	}
	return fmt.Sprintf("on %d/%d queues", on, len(qs))
}

func (t *snapshotWriter) block(s *snapshot.Snapshot) {
	label := "block"
	for _, b := range s.Block {
		kind := "ssd"
		if b.Rotational {
			kind = "rotational"
		}
		if b.Virtual {
			kind = "virtual"
		}
		sched := ""
		if b.Scheduler != "" {
			sched = "sched " + b.Scheduler
		}
		ra := fmt.Sprintf("read-ahead %d KiB", b.ReadAheadKiB)
		nr := ""
		if b.NrRequests > 0 {
			nr = fmt.Sprintf("nr_requests %d", b.NrRequests)
		}
		size := t.known("block."+b.Name+".size_bytes", numfmt.Bytes(b.SizeBytes), "size")
		t.line(label, b.Name, strings.TrimSpace(b.Vendor+" "+b.Model), size, kind, sched, ra, nr, b.WriteCache)
		label = ""
	}
}

func (t *snapshotWriter) mounts(s *snapshot.Snapshot) {
	label := "mounts"
	for _, m := range s.Mounts {
		if !strings.HasPrefix(m.Device, "/dev/") {
			continue // tmpfs and friends: listed in JSON, noise here
		}
		t.line(label, m.MountPoint, m.FSType, m.Device, strings.Join(m.Options, ","))
		label = ""
	}
}

func (t *snapshotWriter) cgroup(s *snapshot.Snapshot) {
	c := s.Cgroup
	if c.Version == 0 {
		return
	}
	quota := "CPU unlimited"
	if c.CPUQuotaUS > 0 && c.CPUPeriodUS > 0 {
		quota = fmt.Sprintf("CPU quota %.2f CPUs (%d/%d µs)", float64(c.CPUQuotaUS)/float64(c.CPUPeriodUS), c.CPUQuotaUS, c.CPUPeriodUS)
	}
	cpus := ""
	if len(c.CPUs) > 0 {
		cpus = "cpus " + cpuset.FormatList(c.CPUs)
	}
	mems := ""
	if len(c.Mems) > 0 {
		mems = "mems " + cpuset.FormatList(c.Mems)
	}
	mem := "memory unlimited"
	if c.MemoryMaxBytes > 0 {
		mem = "memory max " + numfmt.Bytes(c.MemoryMaxBytes)
	} else if c.MemoryMaxBytes == 0 {
		mem = ""
	}
	thr := ""
	if c.NrPeriods > 0 {
		thr = fmt.Sprintf("throttled in %.1f%% of %d periods (%.1f s)", 100*float64(c.NrThrottled)/float64(c.NrPeriods), c.NrPeriods, float64(c.ThrottledUS)/1e6)
	}
	t.line("cgroup", fmt.Sprintf("v%d %s", c.Version, c.Path), quota, cpus, mems, mem, thr)
	if k := s.Container; k != nil {
		where := "net sysctls and cgroup are the container's"
		if k.HostNetwork {
			where = "cgroup is the container's; it shares the host's network namespace"
		}
		diff := ""
		if n := len(k.HostSysctl); n > 0 {
			diff = fmt.Sprintf("%d namespaced sysctl(s) differ from the host's", n)
		}
		id := k.ID
		if len(id) > 12 {
			id = id[:12]
		}
		t.line("container", strings.TrimSpace(k.Name+" "+k.Pod), fmt.Sprintf("%s %s pid %d", k.Runtime, id, k.PID), where, diff)
	}
}

func (t *snapshotWriter) services(s *snapshot.Snapshot) {
	if len(s.Services) == 0 {
		return
	}
	names := make([]string, 0, len(s.Services))
	for n := range s.Services {
		names = append(names, n)
	}
	sort.Strings(names)
	var on, off []string
	for _, n := range names {
		if sv := s.Services[n]; sv.Running {
			on = append(on, fmt.Sprintf("%s (pid %s)", n, txtInts(sv.PIDs)))
		} else {
			off = append(off, n)
		}
	}
	running := "running: none"
	if len(on) > 0 {
		running = "running: " + strings.Join(on, ", ")
	}
	stopped := ""
	if len(off) > 0 {
		stopped = "not running: " + strings.Join(off, ", ")
	}
	t.line("services", running, stopped)
}

func (t *snapshotWriter) tools(s *snapshot.Snapshot) {
	names := make([]string, 0, len(s.Tools))
	for n := range s.Tools {
		names = append(names, n)
	}
	sort.Strings(names)
	found := "none found"
	if len(names) > 0 {
		found = strings.Join(names, " ")
	}
	t.line("tools", found)
}

func (t *snapshotWriter) unavailable(s *snapshot.Snapshot, verbose bool) {
	n := len(s.Unavailable)
	if n == 0 {
		t.line("missing", "no unavailable facts")
		return
	}
	hint := " (--verbose lists them)"
	if verbose {
		hint = ":"
	}
	facts := "facts"
	if n == 1 {
		facts = "fact"
	}
	t.line("missing", fmt.Sprintf("%d %s unavailable%s", n, facts, hint))
	if !verbose {
		return
	}
	keys := make([]string, 0, n)
	for k := range s.Unavailable {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		t.line("", t.st.Dim(k)+": "+s.Unavailable[k])
	}
}

// txtByCPUs renders "value → CPUs" maps: "powersave (0-7)" or, when CPUs
// differ, "performance (0-3), powersave (4-7)".
func txtByCPUs(m map[string][]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s (%s)", k, cpuset.FormatList(m[k])))
	}
	return strings.Join(parts, ", ")
}

func txtOnOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

func txtDuration(sec float64) string {
	d := int64(sec)
	switch {
	case d >= 86400:
		return fmt.Sprintf("%dd %dh", d/86400, d%86400/3600)
	case d >= 3600:
		return fmt.Sprintf("%dh %dm", d/3600, d%3600/60)
	default:
		return fmt.Sprintf("%dm %ds", d/60, d%60)
	}
}

func txtInts(v []int) string {
	s := make([]string, len(v))
	for i, n := range v {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ",")
}
