package snapshot

import (
	"os"
	"path/filepath"
	"strings"
)

// watchedTools are the programs perflab's bench adapters, profiler and
// tuner drive. They are looked up, never run: a snapshot spawns nothing.
var watchedTools = []string{
	"sysbench", "fio", "wrk", "nginx", "redis-server", "redis-benchmark",
	"qperf", "iperf3", "sockperf", "stress-ng", "perf", "mysqld", "mariadbd",
	"ethtool",
}

// standardPath is where a Debian/RHEL root keeps programs; sbin is included
// because daemons (nginx, mysqld) live there and a non-root PATH lacks it.
var standardPath = []string{"/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"}

// collectTools records where each watched tool is. On the live host the
// search path is $PATH then the standard directories; on another root only
// the standard directories under it, since its $PATH is unknown.
func collectTools(c *collector) {
	if c.opt.NoTools {
		c.miss("tools", "not collected: perflab audit judges no tool")
		return
	}
	dirs := toolSearchPath(c.fs.Live(), os.Getenv("PATH"))
	for _, t := range watchedTools {
		if p := findTool(c, dirs, t); p != "" {
			c.s.Tools[t] = p
		} else {
			c.miss("tools."+t, t+" not found in "+strings.Join(dirs, ":"))
		}
	}
}

// toolSearchPath returns absolute, de-duplicated directories; relative
// $PATH entries are skipped, as exec.LookPath refuses them too.
func toolSearchPath(live bool, envPath string) []string {
	var dirs []string
	if live {
		dirs = filepath.SplitList(envPath)
	}
	dirs = append(dirs, standardPath...)
	seen := map[string]bool{}
	out := dirs[:0:0]
	for _, d := range dirs {
		d = filepath.Clean(d)
		if !filepath.IsAbs(d) || seen[d] {
			continue
		}
		seen[d] = true
		out = append(out, d)
	}
	return out
}

func findTool(c *collector, dirs []string, name string) string {
	for _, d := range dirs {
		p := filepath.Join(d, name)
		if st, err := statInRoot(c, p); err == nil && st.Mode().IsRegular() && st.Mode().Perm()&0o111 != 0 {
			return p
		}
	}
	return ""
}

// statInRoot stats a host path, following symlinks inside the root: an
// absolute link in a copied tree (/usr/bin/x -> /etc/alternatives/x) must
// resolve in that tree, not on the machine perflab runs on (hostfs).
func statInRoot(c *collector, p string) (os.FileInfo, error) { return c.fs.Stat(p) }
