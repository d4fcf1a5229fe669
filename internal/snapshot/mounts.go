package snapshot

import (
	"fmt"
	"sort"
	"strconv"
	"sync"

	"github.com/prometheus/procfs"
)

// pseudoFS are kernel interface filesystems: no data lives on them and no
// mount option of theirs changes I/O speed. hugetlbfs and tmpfs stay, since
// where huge pages and RAM-backed files are mounted matters.
var pseudoFS = map[string]bool{
	"proc": true, "sysfs": true, "cgroup": true, "cgroup2": true, "devpts": true,
	"mqueue": true, "debugfs": true, "tracefs": true, "securityfs": true,
	"pstore": true, "bpf": true, "configfs": true, "fusectl": true,
	"autofs": true, "binfmt_misc": true, "rpc_pipefs": true, "nsfs": true,
	"efivarfs": true, "selinuxfs": true, "devtmpfs": true,
}

// collectMounts records the filesystems in the mount namespace of the
// target process (perflab itself, or --pid), from its mountinfo
// (parseMountInfo). Options are the per-mount ones (noatime…) followed by the
// superblock ones (discard, barrier…), each once; rw/ro lead and the rest
// are sorted, because they are kept as maps.
func collectMounts(c *collector) {
	if !c.hasProc() {
		c.miss("mounts", "no /proc under the root")
		return
	}
	mis, file, err := targetMounts(c)
	if err != nil {
		c.missErr("mounts", file, unwrapPathErr(err))
		return
	}
	for _, m := range mis {
		if pseudoFS[m.FSType] {
			continue
		}
		c.s.Mounts = append(c.s.Mounts, Mount{
			Device:     m.Source,
			MountPoint: m.MountPoint,
			FSType:     m.FSType,
			Options:    mountOptions(m.Options, m.SuperOptions),
		})
	}
}

// targetMounts reads /proc/<pid>/mountinfo of the target process.
func targetMounts(c *collector) ([]*procfs.MountInfo, string, error) {
	file := "/proc/self/mountinfo"
	if c.opt.PID > 0 {
		file = "/proc/" + strconv.Itoa(c.opt.PID) + "/mountinfo"
	}
	m, err := readMountInfo(c, file)
	return m, file, err
}

// mountInfoCache is each mountinfo file of one snapshot, read and parsed
// once: the kernel writes the whole mount table out at every read (about
// 60 µs here), and three collectors on two goroutines want perflab's own.
// Callers only read the parsed mounts.
type mountInfoCache struct {
	mu    sync.Mutex
	files map[string]mountInfoRead
}

type mountInfoRead struct {
	mounts []*procfs.MountInfo
	err    error
}

// readMountInfo reads and parses one mountinfo file, once per snapshot.
func readMountInfo(c *collector, file string) ([]*procfs.MountInfo, error) {
	if c.mountinfo == nil {
		return parseMountInfoFile(c, file)
	}
	c.mountinfo.mu.Lock()
	defer c.mountinfo.mu.Unlock()
	if r, ok := c.mountinfo.files[file]; ok {
		return r.mounts, r.err
	}
	m, err := parseMountInfoFile(c, file)
	if c.mountinfo.files == nil {
		c.mountinfo.files = map[string]mountInfoRead{}
	}
	c.mountinfo.files[file] = mountInfoRead{m, err}
	return m, err
}

func parseMountInfoFile(c *collector, file string) ([]*procfs.MountInfo, error) {
	data, err := c.fs.ReadFile(file)
	if err != nil {
		return nil, err
	}
	m, err := parseMountInfo(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return m, nil
}

// mountOptions flattens procfs's option maps to the kernel's "key" and
// "key=value" words: per-mount options first, then superblock options that
// add something.
func mountOptions(mount, super map[string]string) []string {
	word := func(k, v string) string {
		if v == "" {
			return k
		}
		return k + "=" + v
	}
	var out []string
	seen := map[string]bool{}
	for _, set := range []map[string]string{mount, super} {
		keys := make([]string, 0, len(set))
		for k := range set {
			if k != "" && !seen[k] {
				keys = append(keys, k)
			}
		}
		// rw/ro first, as the kernel prints it; the rest sorted.
		sort.Slice(keys, func(i, j int) bool {
			ai, aj := keys[i] == "rw" || keys[i] == "ro", keys[j] == "rw" || keys[j] == "ro"
			if ai != aj {
				return ai
			}
			return keys[i] < keys[j]
		})
		for _, k := range keys {
			seen[k] = true
			out = append(out, word(k, set[k]))
		}
	}
	return out
}
