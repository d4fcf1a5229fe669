package container

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/perflab/perflab/internal/audit"
	"github.com/perflab/perflab/internal/hostfs"
	"github.com/perflab/perflab/internal/tune"
)

// Scope is tune's scope for a container: its network namespace and its
// cgroup directories.
type Scope struct {
	T *Target
	// CgroupDirs are the host directories of the container's cgroup (one
	// per v1 hierarchy, or the unified one) that writes may touch.
	CgroupDirs []string
	netns      uint64
}

// TuneScope is the tune scope of t.
func (t *Target) TuneScope() *Scope {
	s := &Scope{T: t, netns: t.NetNSInode()}
	if t.C.Cgroup != "" {
		s.CgroupDirs = []string{filepath.Join("/sys/fs/cgroup", t.C.Cgroup)}
		for _, ctl := range []string{"cpuset", "cpu", "cpu,cpuacct", "memory", "pids"} {
			s.CgroupDirs = append(s.CgroupDirs, filepath.Join("/sys/fs/cgroup", ctl, t.C.Cgroup))
		}
	}
	return s
}

// NetNS implements tune.Scope.
func (s *Scope) NetNS() uint64 { return s.netns }

// Refuse implements tune.Scope: what a container may have written in its
// name, and why not.
func (s *Scope) Refuse(c audit.Change) string {
	label := s.T.C.Label()
	switch c.Kind {
	case audit.KindSysctl:
		return s.refuseSysctl(c.Target, label)
	case audit.KindFile:
		if name, ok := strings.CutPrefix(c.Target, "/proc/sys/"); ok {
			return s.refuseSysctl(strings.ReplaceAll(name, "/", "."), label)
		}
		if strings.HasPrefix(c.Target, "/sys/fs/cgroup/") {
			for _, d := range s.CgroupDirs {
				if strings.HasPrefix(c.Target, d+"/") {
					return ""
				}
			}
			return fmt.Sprintf("%s is not in container %s's cgroup (%s): refused", c.Target, label, s.T.C.Cgroup)
		}
		return fmt.Sprintf("%s is host-wide (the same file for every container): set it on the host with 'perflab tune apply' without --container", c.Target)
	case audit.KindChannels:
		return fmt.Sprintf("NIC channels of %s are the host's hardware: tune them on the host", c.Target)
	}
	return ""
}

func (s *Scope) refuseSysctl(name, label string) string {
	if s.T.HostNetwork() && strings.HasPrefix(name, "net.") {
		return fmt.Sprintf("container %s shares the host's network namespace: %s would change the host; tune it on the host", label, name)
	}
	if !audit.NetNamespaced(name) {
		return fmt.Sprintf("%s is host-wide, not per network namespace: writing it for container %s would change the host; set it on the host with 'perflab tune apply' without --container", name, label)
	}
	if audit.ReadOnlyInNetNS(name) {
		return fmt.Sprintf("%s is read-only inside a network namespace (Linux 6.10+): only the host's value can be set", name)
	}
	return ""
}

// TuneHost is the tune.Host of a container: its view, its own journal
// directory (under the host's, named by the container id) and its scope.
func (t *Target) TuneHost() tune.Host {
	id := t.C.ID
	if id == "" {
		id = fmt.Sprintf("pid-%d", t.C.PID)
	}
	return tune.Host{FS: t.View(), Dir: JournalDir(t.Host, id), Scope: t.TuneScope()}
}

// JournalDir is where the tune journal of container id lives on the host.
func JournalDir(fs hostfs.FS, id string) string {
	return fs.Path("/var/lib/perflab/tune/container-" + short(id))
}
