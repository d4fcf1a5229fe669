package snapshot

import (
	"bufio"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/prometheus/procfs"
)

// Parsers for the cgroup interface files procfs does not read. Each takes
// the file's text and returns an error for anything that is not the kernel's
// format, so a corrupt snapshot tree is reported, never guessed at.

// parseProcCgroup parses /proc/<pid>/cgroup: "ID:CONTROLLERS:PATH" lines
// (cgroups(7)); ID 0 with no controllers is the cgroup v2 line, and the
// path, which may itself hold colons, runs to the end of the line. It
// returns procfs's type, so both readers of the file agree.
func parseProcCgroup(data []byte) ([]procfs.Cgroup, error) {
	var out []procfs.Cgroup
	for i, line := range strings.Split(string(data), "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		f := strings.SplitN(line, ":", 3)
		if len(f) != 3 {
			return nil, fmt.Errorf("line %d %q: want ID:CONTROLLERS:PATH", i+1, clip(line))
		}
		id, err := strconv.Atoi(f[0])
		if err != nil || id < 0 {
			return nil, fmt.Errorf("line %d %q: hierarchy ID is not a number", i+1, clip(line))
		}
		cg := procfs.Cgroup{HierarchyID: id, Path: f[2]}
		if f[1] != "" {
			cg.Controllers = strings.Split(f[1], ",")
		}
		out = append(out, cg)
	}
	return out, nil
}

// parseCPUMax parses cgroup v2 cpu.max: "$MAX $PERIOD" where $MAX is a
// number of microseconds or "max" (quota -1: unlimited).
func parseCPUMax(s string) (quota, period int64, err error) {
	f := strings.Fields(s)
	if len(f) == 0 || len(f) > 2 {
		return 0, 0, fmt.Errorf("cpu.max %q: want \"QUOTA PERIOD\"", s)
	}
	if f[0] == "max" {
		quota = -1
	} else if quota, err = strconv.ParseInt(f[0], 10, 64); err != nil || quota <= 0 {
		return 0, 0, fmt.Errorf("cpu.max %q: quota is not \"max\" or a positive number", s)
	}
	if len(f) == 2 {
		if period, err = strconv.ParseInt(f[1], 10, 64); err != nil || period <= 0 {
			return 0, 0, fmt.Errorf("cpu.max %q: period is not a positive number", s)
		}
	}
	return quota, period, nil
}

// parseCFSQuota parses cgroup v1 cpu.cfs_quota_us ("-1" is unlimited).
func parseCFSQuota(s string) (int64, error) {
	v, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil || v == 0 || v < -1 {
		return 0, fmt.Errorf("cpu.cfs_quota_us %q: want -1 or a positive number", s)
	}
	return v, nil
}

// parseFlatKeyed parses "key value" lines (cpu.stat, memory.stat,
// memory.events), the cgroup "flat keyed" format. Unparsable values are an
// error; duplicate keys keep the last value.
func parseFlatKeyed(s string) (map[string]int64, error) {
	out := map[string]int64{}
	sc := bufio.NewScanner(strings.NewReader(s))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		k, v, ok := strings.Cut(line, " ")
		if !ok || k == "" {
			return nil, fmt.Errorf("line %q: want \"key value\"", line)
		}
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("line %q: value is not a number", line)
		}
		out[k] = n
	}
	return out, sc.Err()
}

// v1Unlimited is the smallest value cgroup v1 prints for "no limit": it
// prints PAGE_COUNTER_MAX pages in bytes (9223372036854771712 with 4 KiB
// pages), never a round number, so anything this large means unlimited.
const v1Unlimited = int64(1) << 62

// parseMemoryMax parses v2 memory.max ("max" or bytes) and v1
// memory.limit_in_bytes; -1 means unlimited.
func parseMemoryMax(s string) (int64, error) {
	s = strings.TrimSpace(s)
	if s == "max" {
		return -1, nil
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("memory limit %q: want \"max\" or a number of bytes", s)
	}
	if v >= v1Unlimited {
		return -1, nil
	}
	return v, nil
}

// cgroupDirs returns the host directories of a cgroup and its ancestors up
// to the hierarchy's mount point, leaf first. mountRoot is the mountinfo
// root of the hierarchy (not "/" when a container sees only its subtree);
// the cgroup path from /proc/<pid>/cgroup is relative to the hierarchy root.
func cgroupDirs(mountPoint, mountRoot, cgPath string) ([]string, error) {
	if !strings.HasPrefix(cgPath, "/") {
		return nil, fmt.Errorf("cgroup path %q is not absolute", cgPath)
	}
	// A mount point from a copied mountinfo is data, not trusted: ".."
	// in it would lead reads out of the root.
	if !strings.HasPrefix(mountPoint, "/") || slices.Contains(strings.Split(mountPoint, "/"), "..") {
		return nil, fmt.Errorf("cgroup mount point %q is not a clean absolute path", mountPoint)
	}
	rel := cgPath
	if mountRoot != "/" && mountRoot != "" {
		switch {
		case cgPath == mountRoot:
			rel = "/"
		case strings.HasPrefix(cgPath, mountRoot+"/"):
			rel = strings.TrimPrefix(cgPath, mountRoot)
		default:
			return nil, fmt.Errorf("cgroup %s is outside the hierarchy mounted at %s (root %s)", cgPath, mountPoint, mountRoot)
		}
	}
	var parts []string
	for _, p := range strings.Split(rel, "/") {
		switch p {
		case "", ".":
		case "..":
			return nil, fmt.Errorf("cgroup path %q climbs out of its hierarchy", cgPath)
		default:
			parts = append(parts, p)
		}
	}
	mp := strings.TrimRight(mountPoint, "/")
	dirs := make([]string, 0, len(parts)+1)
	for i := len(parts); i >= 0; i-- {
		d := mp + "/" + strings.Join(parts[:i], "/")
		dirs = append(dirs, strings.TrimRight(d, "/"))
	}
	if dirs[len(dirs)-1] == "" {
		dirs[len(dirs)-1] = "/"
	}
	return dirs, nil
}
