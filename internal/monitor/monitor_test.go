package monitor

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/fixture"
	"github.com/perflab/perflab/internal/hostfs"
	"golang.org/x/sys/unix"
)

// procStat renders a /proc/stat whose aggregate cpu line holds the given
// USER_HZ ticks (user nice system idle iowait irq softirq steal).
func procStat(ticks [8]int, ctxt, intr, softirq uint64, running, blocked int) string {
	t := make([]string, len(ticks))
	for i, v := range ticks {
		t[i] = fmt.Sprint(v)
	}
	return fmt.Sprintf("cpu  %s 0 0\ncpu0 %s 0 0\nintr %d 0 0 5\nctxt %d\nbtime 1700000000\nprocesses 100\nprocs_running %d\nprocs_blocked %d\nsoftirq %d 0 1 2 3 4 5 6 7 8 9\n",
		strings.Join(t, " "), strings.Join(t, " "), intr, ctxt, running, blocked, softirq)
}

const meminfo = "MemTotal:       24000000 kB\nMemFree:        20000000 kB\nMemAvailable:   21000000 kB\n"

// psi renders a /proc/pressure file in the kernel's format.
func psi(avg10 float64, totalUs uint64) string {
	return fmt.Sprintf("some avg10=%.2f avg60=0.00 avg300=0.00 total=%d\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n", avg10, totalUs)
}

// tree writes files (host path → content) under a fresh root.
func tree(t testing.TB, files map[string]string) (hostfs.FS, string) {
	t.Helper()
	root := t.TempDir()
	for p, c := range files {
		write(t, root, p, c)
	}
	fs, err := hostfs.New(root)
	if err != nil {
		t.Fatal(err)
	}
	return fs, root
}

func write(t testing.TB, root, p, content string) {
	t.Helper()
	full := filepath.Join(root, p)
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		t.Fatal(err)
	}
	// Write and rename, as the recorder reads concurrently.
	tmp := full + ".tmp"
	if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, full); err != nil {
		t.Fatal(err)
	}
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

// setMeminfo replaces values of existing /proc/meminfo lines, keeping the
// kernel's "%-16s%8d kB" layout.
func setMeminfo(t *testing.T, text string, set map[string]int64) string {
	t.Helper()
	lines := strings.Split(text, "\n")
	found := 0
	for i, l := range lines {
		name, _, _ := strings.Cut(l, ":")
		if v, ok := set[name]; ok {
			lines[i] = fmt.Sprintf("%-16s%8d kB", name+":", v)
			found++
		}
	}
	if found != len(set) {
		t.Fatalf("setMeminfo: %d of the %d names are not lines of the file", len(set)-found, len(set))
	}
	return strings.Join(lines, "\n")
}

func TestPointFromTwoReadings(t *testing.T) {
	// meminfo and vmstat are the kvm fixture's (Linux 6.18); stat,
	// pressure and cpufreq are written with round numbers.
	kvmMeminfo := readFile(t, filepath.Join(fixture.Dir("kvm"), "proc", "meminfo"))
	kvmVMStat := readFile(t, filepath.Join(fixture.Dir("kvm"), "proc", "vmstat"))
	vmBefore := map[string]uint64{
		"pgpgin": 1000000, "pgpgout": 2000000, "pgmajfault": 500,
		"pgscan_kswapd": 10000, "pgscan_direct": 1000, "pgscan_direct_throttle": 0,
		"pgsteal_kswapd": 9000, "pgsteal_direct": 900, "pgsteal_file": 9900, "allocstall_normal": 10,
	}
	fs, root := tree(t, map[string]string{
		"proc/stat":            procStat([8]int{1000, 0, 500, 8000, 100, 10, 20, 0}, 5000, 7000, 900, 3, 1),
		"proc/meminfo":         kvmMeminfo,
		"proc/vmstat":          setVM(t, kvmVMStat, vmBefore),
		"proc/pressure/cpu":    psi(1.5, 1000),
		"proc/pressure/memory": psi(0.25, 5000),
		"proc/pressure/io":     psi(4, 0),
		"sys/devices/system/cpu/cpu0/cpufreq/scaling_cur_freq": "2000000\n",
		"sys/devices/system/cpu/cpu1/cpufreq/scaling_cur_freq": "3000000\n",
	})
	s, err := New(fs)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Missing()) != 0 {
		t.Errorf("missing sources on a complete tree: %v", s.Missing())
	}
	t0 := time.Unix(1000, 0)
	a, err := s.Read(t0.Add(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	// Over two seconds: 100 ticks of CPU time pass (user 60 incl. nice 10,
	// system 20, iowait 5, irq 1, softirq 4, steal 5, idle 5).
	write(t, root, "proc/stat", procStat([8]int{1050, 10, 520, 8005, 105, 11, 24, 5}, 9000, 7400, 1100, 7, 2))
	// 0.3 s, 0.05 s and 1 s of stall in the two seconds.
	write(t, root, "proc/pressure/cpu", psi(1.5, 301000))
	write(t, root, "proc/pressure/memory", psi(0.25, 55000))
	write(t, root, "proc/pressure/io", psi(4, 1000000))
	// 8 MiB read, 20 MiB written, 30 major faults; kswapd scanned 4000
	// pages and reclaimed 3000, direct reclaim 640 and 600 in 4 stalls.
	// Throttling and the by-type breakdown are not counted again.
	write(t, root, "proc/vmstat", setVM(t, kvmVMStat, map[string]uint64{
		"pgpgin": 1008192, "pgpgout": 2020480, "pgmajfault": 530,
		"pgscan_kswapd": 14000, "pgscan_direct": 1640, "pgscan_direct_throttle": 100,
		"pgsteal_kswapd": 12000, "pgsteal_direct": 1500, "pgsteal_file": 13500, "allocstall_normal": 14,
	}))
	write(t, root, "proc/meminfo", setMeminfo(t, kvmMeminfo, map[string]int64{"Dirty": 150000, "Writeback": 2048}))
	b, err := s.Read(t0.Add(3 * time.Second))
	if err != nil {
		t.Fatal(err)
	}
	p := Point(a, b, t0)
	checks := []struct {
		name      string
		got, want float64
	}{
		{"t", p.T, 3},
		{"user", p.UserPct, 60}, {"system", p.SystemPct, 20}, {"iowait", p.IOWaitPct, 5},
		{"irq", p.IRQPct, 1}, {"softirq", p.SoftIRQPct, 4}, {"steal", p.StealPct, 5}, {"idle", p.IdlePct, 5},
		{"ctxt/s", p.CtxSwitches, 2000}, {"intr/s", p.Interrupts, 200}, {"softirq/s", p.SoftIRQs, 100},
		{"running", float64(p.RunQueue), 7}, {"blocked", float64(p.Blocked), 2},
		{"memavail", float64(p.MemAvailKiB), 24186804},
		{"page cache", float64(deref(t, p.PageCacheKiB)), 902444}, {"dirty", float64(deref(t, p.DirtyKiB)), 150000}, {"writeback", float64(deref(t, p.WritebackKiB)), 2048},
		{"pgpgin KiB/s", deref(t, p.PgpgInKiBPerS), 4096}, {"pgpgout KiB/s", deref(t, p.PgpgOutKiBPerS), 10240},
		{"majflt/s", deref(t, p.MajFaultsPerS), 15},
		{"pgscan/s", deref(t, p.PgScanPerS), 2320}, {"pgscan direct/s", deref(t, p.PgScanDirectPerS), 320},
		{"pgsteal/s", deref(t, p.PgStealPerS), 1800}, {"allocstall/s", deref(t, p.AllocStallsPerS), 2},
		{"psi cpu avg10", p.PSICPU, 1.5}, {"psi mem avg10", p.PSIMemory, 0.25}, {"psi io avg10", p.PSIIO, 4},
		{"psi cpu", deref(t, p.PSICPUPct), 15}, {"psi mem", deref(t, p.PSIMemoryPct), 2.5}, {"psi io", deref(t, p.PSIIOPct), 50},
		{"mhz", p.CPUMHz, 2500},
	}
	for _, c := range checks {
		if !near(c.got, c.want) {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
}

func deref[T any](t *testing.T, p *T) T {
	t.Helper()
	if p == nil {
		t.Errorf("field not recorded")
		var zero T
		return zero
	}
	return *p
}

func TestMissingSourcesAreNotedNotFatal(t *testing.T) {
	fs, _ := tree(t, map[string]string{
		"proc/stat":    procStat([8]int{1, 0, 1, 1, 0, 0, 0, 0}, 1, 1, 1, 1, 0),
		"proc/meminfo": meminfo, // no Cached, Dirty, Writeback
	})
	s, err := New(fs)
	if err != nil {
		t.Fatal(err)
	}
	m := strings.Join(s.Missing(), "; ")
	for _, want := range []string{"PSI", "cpufreq", "/proc/vmstat does not exist", "page_cache_kib, dirty_kib, writeback_kib are not recorded"} {
		if !strings.Contains(m, want) {
			t.Errorf("Missing() = %q, want %q", m, want)
		}
	}
	a, err := s.Read(time.Unix(0, 0))
	if err != nil || a.PSICPU.OK || a.VM.PgpgIn.OK || a.Cache.OK || a.MHz != 0 || a.MemAvailKiB != 21000000 {
		t.Errorf("reading without PSI/cpufreq/vmstat: %+v %v", a, err)
	}
	b, _ := s.Read(time.Unix(1, 0))
	p := Point(a, b, time.Unix(0, 0))
	// Not recorded is absent, not 0: the JSON has none of these fields.
	j, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"psi_cpu_pct", "psi_io_pct", "page_cache_kib", "dirty_kib", "pgpgout_kib_per_s", "allocstall_per_s", "pgscan_direct_per_s"} {
		if strings.Contains(string(j), `"`+f+`"`) {
			t.Errorf("%s recorded without its source: %s", f, j)
		}
	}
	if !strings.Contains(string(j), `"psi_cpu_avg10":0`) {
		t.Errorf("psi_cpu_avg10 stays a 0 for old readers: %s", j)
	}
}

// A kernel without CONFIG_VM_EVENT_COUNTERS prints only the nr_* gauges.
func TestVMStatWithoutEventCounters(t *testing.T) {
	gauges := ""
	for _, l := range strings.Split(readFile(t, filepath.Join(fixture.Dir("kvm"), "proc", "vmstat")), "\n") {
		if strings.HasPrefix(l, "nr_") {
			gauges += l + "\n"
		}
	}
	s, err := New(fixture.Tree(t, "kvm", map[string]string{"proc/vmstat": gauges}))
	if err != nil {
		t.Fatal(err)
	}
	m := strings.Join(s.Missing(), "; ")
	if !strings.Contains(m, "pgpgin_kib_per_s, pgpgout_kib_per_s, pgmajfault_per_s, pgscan_per_s, pgscan_direct_per_s, pgsteal_per_s, allocstall_per_s are not recorded") {
		t.Errorf("Missing() = %q", m)
	}
	a, _ := s.Read(time.Unix(0, 0))
	b, _ := s.Read(time.Unix(1, 0))
	if p := Point(a, b, time.Unix(0, 0)); p.PgpgOutKiBPerS != nil || p.AllocStallsPerS != nil || p.DirtyKiB == nil {
		t.Errorf("point: pgpgout %v allocstall %v dirty %v", p.PgpgOutKiBPerS, p.AllocStallsPerS, p.DirtyKiB)
	}
}

func TestNewFailsWithoutProcStat(t *testing.T) {
	fs, _ := tree(t, map[string]string{"proc/meminfo": meminfo})
	if _, err := New(fs); err == nil || !strings.Contains(err.Error(), "/proc/stat") {
		t.Fatalf("New without /proc/stat: %v", err)
	}
}

func TestCounterGoingBackwardsIsNotAHugeRate(t *testing.T) {
	a := Reading{At: time.Unix(0, 0), Ctxt: 1000, User: 10, Idle: 10}
	b := Reading{At: time.Unix(1, 0), Ctxt: 10, User: 11, Idle: 11}
	if p := Point(a, b, time.Unix(0, 0)); p.CtxSwitches != 0 || !near(p.UserPct, 50) {
		t.Errorf("point across a counter reset: %+v", p)
	}
}

func TestRecorder(t *testing.T) {
	fs, root := tree(t, map[string]string{
		"proc/stat":    procStat([8]int{100, 0, 0, 100, 0, 0, 0, 0}, 0, 0, 0, 1, 0),
		"proc/meminfo": meminfo,
	})
	s, err := New(fs)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	rec := Start(s, 5*time.Millisecond, t0, nil)
	for i := 1; i <= 10; i++ {
		time.Sleep(3 * time.Millisecond)
		write(t, root, "proc/stat", procStat([8]int{100 + i*10, 0, 0, 100, 0, 0, 0, 0}, uint64(i*100), 0, 0, 1, 0))
	}
	points, fails := rec.Stop()
	if fails != 0 {
		t.Errorf("%d failed reads", fails)
	}
	if len(points) < 2 {
		t.Fatalf("%d points in 30ms at 5ms", len(points))
	}
	var busy bool
	for i, p := range points {
		if i > 0 && p.T <= points[i-1].T {
			t.Errorf("T not increasing: %v then %v", points[i-1].T, p.T)
		}
		if p.UserPct > 0 {
			busy = true
		}
	}
	if !busy {
		t.Error("no point saw the user time that was added")
	}
}

// BenchmarkSample is one monitor sample of the live host: the per-second
// cost of monitoring. Besides wall time it reports the process CPU time per
// sample (cpu-ns/op, user+system from getrusage, so time spent waiting for
// a CPU on a busy host does not count) and what that is as a share of one
// CPU at the 1 Hz sampling rate (pct-of-cpu@1Hz).
func BenchmarkSample(b *testing.B) {
	fs, err := hostfs.New("/")
	if err != nil {
		b.Fatal(err)
	}
	s, err := New(fs)
	if err != nil {
		b.Skip(err)
	}
	prev, _ := s.Read(time.Now())
	b.ReportAllocs()
	before := cpuTime(b)
	n := 0
	for b.Loop() {
		cur, err := s.Read(time.Now())
		if err != nil {
			b.Fatal(err)
		}
		_ = Point(prev, cur, time.Time{})
		prev = cur
		n++
	}
	perOp := float64(cpuTime(b)-before) / float64(n)
	b.ReportMetric(perOp, "cpu-ns/op")
	b.ReportMetric(100*perOp/1e9, "pct-of-cpu@1Hz")
}

func cpuTime(b *testing.B) time.Duration {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
