package testlab

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// cgroupRoots are where a lab cgroup is made: cgroup v2 when the unified
// hierarchy owns the cpu controller, else v1's cpu hierarchy (this
// project's CI machine is hybrid: v1 controllers plus an empty v2 mount).
func cpuCgroupRoot() (dir string, v2 bool, err error) {
	if b, err := os.ReadFile("/sys/fs/cgroup/cgroup.controllers"); err == nil {
		if !slices.Contains(strings.Fields(string(b)), "cpu") {
			return "", false, fmt.Errorf("cgroup v2 without the cpu controller")
		}
		sub, _ := os.ReadFile("/sys/fs/cgroup/cgroup.subtree_control")
		if !strings.Contains(string(sub), "cpu") {
			if err := os.WriteFile("/sys/fs/cgroup/cgroup.subtree_control", []byte("+cpu"), 0o644); err != nil {
				return "", false, fmt.Errorf("enabling the cpu controller: %w", err)
			}
		}
		return "/sys/fs/cgroup", true, nil
	}
	for _, d := range []string{"/sys/fs/cgroup/cpu", "/sys/fs/cgroup/cpu,cpuacct"} {
		if _, err := os.Stat(filepath.Join(d, "cpu.cfs_quota_us")); err == nil {
			return d, false, nil
		}
	}
	return "", false, fmt.Errorf("no cgroup cpu controller found (v2 cpu.max or v1 cpu.cfs_quota_us)")
}

// newCgroup makes a cgroup named name limited to cpus CPUs.
func newCgroup(name string, cpus float64) (string, error) {
	root, v2, err := cpuCgroupRoot()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(root, name)
	if err := os.Mkdir(dir, 0o755); err != nil {
		return "", err
	}
	const period = 100000
	quota := int(cpus * period)
	if v2 {
		err = os.WriteFile(filepath.Join(dir, "cpu.max"), []byte(fmt.Sprintf("%d %d", quota, period)), 0o644)
	} else {
		if err = os.WriteFile(filepath.Join(dir, "cpu.cfs_period_us"), []byte(strconv.Itoa(period)), 0o644); err == nil {
			err = os.WriteFile(filepath.Join(dir, "cpu.cfs_quota_us"), []byte(strconv.Itoa(quota)), 0o644)
		}
	}
	if err != nil {
		os.Remove(dir)
		return "", err
	}
	return dir, nil
}

// removeCgroups removes the lab's cgroups whose names start with prefix
// (their processes are already gone).
func removeCgroups(prefix string) error {
	root, _, err := cpuCgroupRoot()
	if err != nil {
		return nil
	}
	ents, _ := os.ReadDir(root)
	var last error
	for _, e := range ents {
		if e.IsDir() && strings.HasPrefix(e.Name(), prefix) {
			if err := removeCgroup(filepath.Join(root, e.Name())); err != nil {
				last = err
			}
		}
	}
	return last
}

// removeCgroup kills what is left in dir and removes it, waiting for the
// killed processes to be reaped (a cgroup with zombies is busy).
func removeCgroup(dir string) error {
	var err error
	for i := 0; i < 100; i++ {
		if b, rerr := os.ReadFile(filepath.Join(dir, "cgroup.procs")); rerr == nil {
			for _, f := range strings.Fields(string(b)) {
				if pid, perr := strconv.Atoi(f); perr == nil {
					syscall.Kill(pid, syscall.SIGKILL) //nolint:errcheck
				}
			}
		}
		if err = os.Remove(dir); err == nil || os.IsNotExist(err) {
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return err
}

// cgroupRemount is a shell snippet that mounts this machine's cgroup
// hierarchies again under /sys/fs/cgroup (as listed in /proc/self/mounts:
// a tmpfs with v1 hierarchies, or cgroup2), for a mount namespace whose
// /sys is a fresh sysfs. Failures are ignored: a host without its cgroup
// only misses the cgroup facts.
func cgroupRemount() string {
	b, err := os.ReadFile("/proc/self/mounts")
	if err != nil {
		return ""
	}
	var sh strings.Builder
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 4 || !strings.HasPrefix(f[1], "/sys/fs/cgroup") {
			continue
		}
		switch f[2] {
		case "tmpfs", "cgroup", "cgroup2":
			fmt.Fprintf(&sh, "mkdir -p %s 2>/dev/null; mount -t %s -o %s %s %s 2>/dev/null; ", f[1], f[2], f[3], f[0], f[1])
		}
	}
	return sh.String()
}
