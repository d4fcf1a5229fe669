package container

import (
	"fmt"
	"strconv"

	"github.com/perflab/perflab/internal/audit"
	"github.com/perflab/perflab/internal/hostfs"
	"github.com/perflab/perflab/internal/snapshot"
)

// Target is a running container on a host: the host's filesystem and the
// container found on it.
type Target struct {
	Host hostfs.FS
	C    Container
}

// Open resolves ref on the host behind fs.
func Open(fs hostfs.FS, ref string) (*Target, error) {
	c, err := Resolve(Collect(fs), ref)
	if err != nil {
		return nil, err
	}
	return &Target{Host: fs, C: c}, nil
}

// OpenPID is the target of --pid: the process's namespaces and cgroup.
func OpenPID(fs hostfs.FS, pid int) (*Target, error) {
	if pid <= 0 {
		return nil, &RefError{Ref: strconv.Itoa(pid), Problem: "not a process id"}
	}
	data, err := fs.ReadFile("/proc/" + strconv.Itoa(pid) + "/cgroup")
	if err != nil && !fs.Exists("/proc/"+strconv.Itoa(pid)+"/stat") {
		return nil, &RefError{Ref: "pid " + strconv.Itoa(pid), Problem: "no such process (" + hostfs.Reason("/proc/"+strconv.Itoa(pid)+"/cgroup", err) + ")"}
	}
	// A process whose cgroup file a captured tree lacks is still a
	// process: its own facts are collected, its cgroup is unknown.
	inv := Inventory{Names: append(podmanNames(fs, "/var/lib/containers/storage/overlay-containers/containers.json"), dockerNames(fs)...), Pods: podLogs(fs)}
	inv.Names = append(inv.Names, kubeLogNames(fs)...)
	return &Target{Host: fs, C: ForPID(inv, pid, cgroupOf(string(data)))}, nil
}

// ErrStopped is returned when the container's process is gone: it stopped
// (or was restarted with a new process) while perflab was looking at it.
type ErrStopped struct{ C Container }

func (e *ErrStopped) Error() string {
	return fmt.Sprintf("container %s stopped: its process %d is gone; nothing was recorded for it — start it again and rerun", e.C.Label(), e.C.PID)
}

// Alive reports ErrStopped when the container's process has exited.
func (t *Target) Alive() error {
	if !t.Host.Exists("/proc/"+strconv.Itoa(t.C.PID)+"/ns") && !t.Host.Exists("/proc/"+strconv.Itoa(t.C.PID)+"/cgroup") {
		return &ErrStopped{C: t.C}
	}
	return nil
}

// View is the hostfs view for collection: the container's network
// namespace for net sysctls and /proc/net, the host for the rest.
func (t *Target) View() hostfs.FS {
	if t.HostNetwork() {
		return t.Host
	}
	return t.Host.WithNetNS(t.C.PID)
}

// HostNetwork reports whether the container shares the host's network
// namespace (docker --network host, hostNetwork: true): then its net
// sysctls are the host's. On a captured tree without namespace links it
// is false.
func (t *Target) HostNetwork() bool {
	mine := t.Host.WithNetNS(t.C.PID).NetNSInode()
	host := t.Host.WithNetNS(1).NetNSInode()
	return mine != 0 && mine == host
}

// NetNSInode is the container's network namespace inode (0 unknown).
func (t *Target) NetNSInode() uint64 { return t.Host.WithNetNS(t.C.PID).NetNSInode() }

// Snapshot collects the container's view: the host's facts with the
// container's network namespace and cgroup (opt.PID is the container's
// process), its identity, and the host's value of each net sysctl that
// differs inside.
func (t *Target) Snapshot(opt snapshot.Options) (*snapshot.Snapshot, error) {
	if err := t.Alive(); err != nil {
		return nil, err
	}
	opt.PID = t.C.PID
	s, err := snapshot.Collect(t.View(), opt)
	if err != nil {
		return nil, err
	}
	if err := t.Alive(); err != nil {
		return nil, err
	}
	s.Container = t.Fact(s.Sysctl)
	return s, nil
}

// Fact is the snapshot's record of the container, with the host's values
// of the net sysctls that differ from sysctl (the container's).
func (t *Target) Fact(sysctl map[string]string) *snapshot.Container {
	f := &snapshot.Container{Runtime: t.C.Runtime, ID: t.C.ID, Name: t.C.Name, Pod: t.C.Pod, PID: t.C.PID, HostNetwork: t.HostNetwork()}
	if f.HostNetwork {
		return f
	}
	host := snapshot.NetSysctls(t.Host.Host())
	for k, v := range sysctl {
		if hv, ok := host[k]; ok && hv != v && audit.NetNamespaced(k) {
			if f.HostSysctl == nil {
				f.HostSysctl = map[string]string{}
			}
			f.HostSysctl[k] = hv
		}
	}
	return f
}
