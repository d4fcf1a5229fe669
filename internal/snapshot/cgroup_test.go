package snapshot

import (
	"os"
	"testing"

	"github.com/perflab/perflab/internal/fixture"
	"github.com/prometheus/procfs"
)

const appCg = "/sys/fs/cgroup/system.slice/app.service"

// metalAppCgroup is what metal's proc/4242 (proc/self) runs under.
var metalAppCgroup = Cgroup{
	Version: 2, Path: "/system.slice/app.service",
	CPUQuotaUS: 200000, CPUPeriodUS: 100000, CPUQuotaDir: appCg,
	CPUs: []int{0, 1, 2, 3, 4, 5, 6, 7}, Mems: []int{0, 1},
	MemoryMaxBytes: 17179869184,
	NrPeriods:      1843200, NrThrottled: 412377, ThrottledUS: 9823412345,
}

func TestCgroupV2Metal(t *testing.T) {
	t.Parallel()
	s := runAreas(t, tree(t, "metal", nil), Options{}, collectCgroup)
	wantEq(t, "cgroup", s.Cgroup, metalAppCgroup)
	if len(s.Unavailable) != 0 {
		t.Errorf("unavailable = %v", s.Unavailable)
	}
}

// A parent's quota binds the leaf; throttling is counted where it is set.
func TestCgroupV2AncestorLimit(t *testing.T) {
	t.Parallel()
	fs := tree(t, "metal", map[string]string{
		appCg + "/cpu.max":                       "max 100000\n",
		appCg + "/memory.max":                    "max\n",
		"/sys/fs/cgroup/system.slice/cpu.max":    "150000 100000\n",
		"/sys/fs/cgroup/system.slice/memory.max": "4294967296\n",
		"/sys/fs/cgroup/system.slice/cpu.stat":   "usage_usec 1\nnr_periods 10\nnr_throttled 4\nthrottled_usec 777\n",
	})
	s := runAreas(t, fs, Options{}, collectCgroup)
	wantEq(t, "quota", s.Cgroup.CPUQuotaUS, int64(150000))
	wantEq(t, "quota dir", s.Cgroup.CPUQuotaDir, "/sys/fs/cgroup/system.slice")
	wantEq(t, "memory", s.Cgroup.MemoryMaxBytes, int64(4294967296))
	wantEq(t, "throttling from the limiting level", []int64{s.Cgroup.NrPeriods, s.Cgroup.NrThrottled, s.Cgroup.ThrottledUS}, []int64{10, 4, 777})
}

func TestCgroupV2NoCPUController(t *testing.T) {
	t.Parallel()
	fs := tree(t, "metal", map[string]string{
		appCg + "/cpu.max":                    fixture.Delete,
		"/sys/fs/cgroup/system.slice/cpu.max": fixture.Delete,
		appCg + "/cpu.stat":                   "usage_usec 36871204417\nuser_usec 30012377612\nsystem_usec 6858826805\n",
	})
	s := runAreas(t, fs, Options{}, collectCgroup)
	wantEq(t, "quota unlimited", s.Cgroup.CPUQuotaUS, int64(-1))
	wantMissing(t, s, "cgroup.cpu_period_us", "cpu controller is not enabled")
	wantMissing(t, s, "cgroup.nr_throttled", "no nr_periods")
	wantPresent(t, s, "cgroup.cpus")
}

func TestCgroupV2CpusetFromAncestor(t *testing.T) {
	t.Parallel()
	fs := tree(t, "metal", map[string]string{
		appCg + "/cpuset.cpus.effective":                    fixture.Delete,
		"/sys/fs/cgroup/system.slice/cpuset.cpus.effective": "4-7\n",
	})
	s := runAreas(t, fs, Options{}, collectCgroup)
	wantEq(t, "cpus", s.Cgroup.CPUs, []int{4, 5, 6, 7})
}

func TestCgroupV2Corrupt(t *testing.T) {
	t.Parallel()
	s := runAreas(t, tree(t, "metal", map[string]string{appCg + "/cpu.max": "lots 100000\n"}), Options{}, collectCgroup)
	wantMissing(t, s, "cgroup.cpu_quota_us", "cpu.max")
	wantEq(t, "quota left at zero", s.Cgroup.CPUQuotaUS, int64(0))
}

func TestCgroupV1KVM(t *testing.T) {
	t.Parallel()
	s := runAreas(t, tree(t, "kvm", nil), Options{}, collectCgroup)
	c := s.Cgroup
	wantEq(t, "version", c.Version, 1)
	wantEq(t, "quota", c.CPUQuotaUS, int64(-1))
	wantEq(t, "period", c.CPUPeriodUS, int64(100000))
	wantEq(t, "cpus", c.CPUs, []int{0, 1})
	wantEq(t, "mems", c.Mems, []int{0})
	wantEq(t, "memory (v1 prints unlimited as a huge number)", c.MemoryMaxBytes, int64(-1))
	wantPresent(t, s, "cgroup.nr_throttled")
}

func TestCgroupV1Limited(t *testing.T) {
	t.Parallel()
	fs := tree(t, "kvm", map[string]string{
		"/sys/fs/cgroup/cpu/cpu.cfs_quota_us": "50000\n",
		"/sys/fs/cgroup/cpu/cpu.stat":         "nr_periods 100\nnr_throttled 30\nthrottled_time 2500000000\nnr_bursts 0\nburst_time 0\n",
	})
	s := runAreas(t, fs, Options{}, collectCgroup)
	wantEq(t, "quota", s.Cgroup.CPUQuotaUS, int64(50000))
	wantEq(t, "quota dir", s.Cgroup.CPUQuotaDir, "/sys/fs/cgroup/cpu")
	wantEq(t, "throttled time ns → µs", s.Cgroup.ThrottledUS, int64(2500000))
	wantEq(t, "throttled", s.Cgroup.NrThrottled, int64(30))
}

func TestCgroupOfPIDAndMissing(t *testing.T) {
	t.Parallel()
	fs := tree(t, "metal", map[string]string{"/proc/4243/cgroup": "0::/system.slice\n"})
	s := runAreas(t, fs, Options{PID: 4243}, collectCgroup)
	wantEq(t, "path of pid", s.Cgroup.Path, "/system.slice")
	wantEq(t, "no quota there", s.Cgroup.CPUQuotaUS, int64(-1))

	s = runAreas(t, tree(t, "metal", map[string]string{"/proc/4242/cgroup": fixture.Delete}), Options{}, collectCgroup)
	wantMissing(t, s, "cgroup", "cgroup")

	// Without mountinfo the conventional /sys/fs/cgroup layout is assumed.
	s = runAreas(t, tree(t, "metal", map[string]string{"/proc/4242/mountinfo": fixture.Delete}), Options{}, collectCgroup)
	wantEq(t, "quota via default mount", s.Cgroup.CPUQuotaUS, int64(200000))
}

// Defect 6: a tree captured with `cp -r /proc/self` has proc/self as a
// directory, not a link. Every cgroup fact must still be read from it (procfs's
// Self() failed with "readlink … invalid argument").
func TestCgroupProcSelfDirectory(t *testing.T) {
	fs := fixture.Tree(t, "metal", nil)
	self := fs.Path("/proc/self")
	if err := os.Remove(self); err != nil {
		t.Fatal(err)
	}
	if err := fixture.Copy(fs.Path("/proc/4242"), self); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(fs.Path("/proc/4242")); err != nil { // only the copy is left
		t.Fatal(err)
	}
	s := runAreas(t, fs, Options{}, collectCgroup)
	wantEq(t, "cgroup", s.Cgroup, metalAppCgroup)
	if len(s.Unavailable) != 0 {
		t.Errorf("unavailable = %v", s.Unavailable)
	}
}

func TestParseProcCgroup(t *testing.T) {
	got, err := parseProcCgroup([]byte("12:cpu,cpuacct:/a:b\n1:name=systemd:/init.scope\n0::/\n"))
	if err != nil {
		t.Fatal(err)
	}
	wantEq(t, "lines", got, []procfs.Cgroup{
		{HierarchyID: 12, Controllers: []string{"cpu", "cpuacct"}, Path: "/a:b"},
		{HierarchyID: 1, Controllers: []string{"name=systemd"}, Path: "/init.scope"},
		{HierarchyID: 0, Path: "/"},
	})
	for _, bad := range []string{"x::/\n", "0:/\n", "-1::/\n"} {
		if _, err := parseProcCgroup([]byte(bad)); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}
