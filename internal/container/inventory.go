package container

import (
	"encoding/json"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/perflab/perflab/internal/hostfs"
)

// Running is a container found running: a cgroup that names a container id
// and the processes in it.
type Running struct {
	ID      string `json:"id"`
	Runtime string `json:"runtime"`
	// PID is the container's first process (its init): the one whose parent
	// is outside the container, or the runtime's pidfile.
	PID    int    `json:"pid"`
	Cgroup string `json:"cgroup"`            // its cgroup path (the unified or cpu hierarchy's)
	PodUID string `json:"pod_uid,omitempty"` // Kubernetes pod UID from a kubepods path
}

// Named is a name a runtime's state gives a container id.
type Named struct {
	ID      string
	Name    string
	Runtime string
	// Pod, for a Kubernetes container, is NAMESPACE/NAME and Name the
	// container's name in the pod.
	Pod string
}

// PodLog is one pod directory of kubelet's /var/log/pods
// (NAMESPACE_NAME_UID) and the container names under it.
type PodLog struct {
	Namespace, Name, UID string
	Containers           []string
}

// Inventory is what the host's own files say about its containers.
type Inventory struct {
	Running []Running
	Names   []Named
	Pods    []PodLog
}

// idInCgroup matches the container id in the last element of a cgroup path:
// libpod-ID, docker-ID.scope, cri-containerd-ID.scope, crio-ID.scope, or a
// bare ID (Docker's and kubelet's cgroupfs layouts).
var idInCgroup = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(?:(libpod|docker|cri-containerd|crio)-)?([0-9a-f]{64})(?:\.scope)?$`)
})

// podInCgroup matches a kubepods pod element: pod<uid> (cgroupfs) or
// kubepods-<qos>-pod<uid with _>.slice (systemd).
// Static pods have a 32-digit UID without dashes.
var podInCgroup = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`pod([0-9a-f]{8}[-_][0-9a-f]{4}[-_][0-9a-f]{4}[-_][0-9a-f]{4}[-_][0-9a-f]{12}|[0-9a-f]{32})(?:\.slice)?$`)
})

// containerOfCgroup returns the container a cgroup path belongs to, or ok
// false. Nested cgroups below the container's (systemd inside it) count as
// the container's.
func containerOfCgroup(p string) (id, runtime, podUID string, ok bool) {
	elems := strings.Split(p, "/")
	for i := len(elems) - 1; i >= 0; i-- {
		m := idInCgroup().FindStringSubmatch(elems[i])
		if m == nil {
			continue
		}
		id = m[2]
		switch m[1] {
		case "libpod":
			runtime = "podman"
		case "cri-containerd":
			runtime = "containerd"
		case "crio":
			runtime = "cri-o"
		case "docker":
			runtime = "docker"
		default:
			runtime = "docker"
			if strings.Contains(p, "kubepods") {
				runtime = "kubernetes"
			}
		}
		for _, e := range elems[:i] {
			if pm := podInCgroup().FindStringSubmatch(e); pm != nil {
				podUID = strings.ReplaceAll(pm[1], "_", "-")
				if runtime == "docker" || runtime == "kubernetes" {
					runtime = "kubernetes"
				}
			}
		}
		return id, runtime, podUID, true
	}
	return "", "", "", false
}

// cgroupOf picks the path a /proc/PID/cgroup gives for the unified
// hierarchy, else the cpu controller's, else the first.
func cgroupOf(data string) string {
	var first, cpu, unified string
	for _, line := range strings.Split(strings.TrimSpace(data), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		if first == "" {
			first = parts[2]
		}
		if parts[0] == "0" && parts[1] == "" {
			unified = parts[2]
		}
		for _, c := range strings.Split(parts[1], ",") {
			if c == "cpu" {
				cpu = parts[2]
			}
		}
	}
	switch {
	case unified != "" && unified != "/":
		return unified
	case cpu != "":
		return cpu
	}
	return first
}

// Collect reads the inventory of the host behind fs. Unreadable files are
// skipped: a process that exits while it is read, or a runtime that is not
// installed, is not an error.
func Collect(fs hostfs.FS) Inventory {
	var inv Inventory
	inv.Running = scanProcs(fs)
	inv.Names = append(inv.Names, podmanNames(fs, "/var/lib/containers/storage/overlay-containers/containers.json")...)
	inv.Names = append(inv.Names, dockerNames(fs)...)
	inv.Names = append(inv.Names, kubeLogNames(fs)...)
	inv.Pods = podLogs(fs)
	return inv
}

type procInfo struct {
	pid, ppid int
	cgroup    string
}

func scanProcs(fs hostfs.FS) []Running {
	ents, err := fs.Host().ReadDir("/proc")
	if err != nil {
		return nil
	}
	byID := map[string][]procInfo{}
	meta := map[string]Running{}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid <= 0 {
			continue
		}
		data, err := fs.ReadFile("/proc/" + e.Name() + "/cgroup")
		if err != nil {
			continue
		}
		cg := cgroupOf(string(data))
		id, rt, pod, ok := containerOfCgroup(cg)
		if !ok {
			continue
		}
		byID[id] = append(byID[id], procInfo{pid: pid, ppid: ppidOf(fs, pid), cgroup: cg})
		if _, seen := meta[id]; !seen {
			meta[id] = Running{ID: id, Runtime: rt, Cgroup: cg, PodUID: pod}
		}
	}
	var out []Running
	for id, ps := range byID {
		r := meta[id]
		r.PID, r.Cgroup = initOf(ps)
		if p := pidFile(fs, id); p > 0 {
			for _, x := range ps {
				if x.pid == p {
					r.PID, r.Cgroup = p, x.cgroup
				}
			}
		}
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// initOf is the process whose parent is outside the group (the lowest such
// PID), else the lowest PID.
func initOf(ps []procInfo) (int, string) {
	in := map[int]bool{}
	for _, p := range ps {
		in[p.pid] = true
	}
	best := procInfo{}
	for _, p := range ps {
		if !in[p.ppid] && (best.pid == 0 || p.pid < best.pid) {
			best = p
		}
	}
	if best.pid == 0 {
		for _, p := range ps {
			if best.pid == 0 || p.pid < best.pid {
				best = p
			}
		}
	}
	return best.pid, best.cgroup
}

// ppidOf reads the parent PID from /proc/PID/stat (field 4, after the
// parenthesised command which may hold spaces).
func ppidOf(fs hostfs.FS, pid int) int {
	b, err := fs.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 2 {
		return 0
	}
	p, _ := strconv.Atoi(f[1])
	return p
}

// pidFile is the container's init PID from a runtime's state, 0 if none.
func pidFile(fs hostfs.FS, id string) int {
	cands := []string{
		"/run/containers/storage/overlay-containers/" + id + "/userdata/pidfile",
		"/run/docker/containerd/daemon/io.containerd.runtime.v2.task/moby/" + id + "/init.pid",
	}
	if m, _ := fs.Glob("/run/containerd/io.containerd.runtime.v2.task/*/" + id + "/init.pid"); len(m) > 0 {
		cands = append(cands, m...)
	}
	for _, p := range cands {
		if s, err := fs.ReadString(p); err == nil {
			if n, err := strconv.Atoi(s); err == nil && n > 0 {
				return n
			}
		}
	}
	return 0
}

// podmanNames reads containers/storage's containers.json (Podman, Buildah
// and CRI-O share it). CRI-O names its containers
// k8s_CONTAINER_POD_NAMESPACE_UID_ATTEMPT.
func podmanNames(fs hostfs.FS, file string) []Named {
	b, err := fs.ReadFile(file)
	if err != nil {
		return nil
	}
	var list []struct {
		ID    string   `json:"id"`
		Names []string `json:"names"`
	}
	if json.Unmarshal(b, &list) != nil {
		return nil
	}
	var out []Named
	for _, c := range list {
		for _, n := range c.Names {
			if parts := strings.Split(n, "_"); len(parts) == 6 && parts[0] == "k8s" {
				out = append(out, Named{ID: c.ID, Name: parts[1], Runtime: "cri-o", Pod: parts[3] + "/" + parts[2]})
				continue
			}
			out = append(out, Named{ID: c.ID, Name: n, Runtime: "podman"})
		}
	}
	return out
}

// dockerNames reads /var/lib/docker/containers/ID/config.v2.json.
func dockerNames(fs hostfs.FS) []Named {
	files, _ := fs.Glob("/var/lib/docker/containers/*/config.v2.json")
	var out []Named
	for _, f := range files {
		b, err := fs.ReadFile(f)
		if err != nil {
			continue
		}
		var c struct {
			ID   string `json:"ID"`
			Name string `json:"Name"`
		}
		if json.Unmarshal(b, &c) != nil || c.ID == "" {
			continue
		}
		out = append(out, Named{ID: c.ID, Name: strings.TrimPrefix(c.Name, "/"), Runtime: "docker"})
	}
	return out
}

// kubeLogName is kubelet's /var/log/containers/POD_NAMESPACE_CONTAINER-ID.log.
var kubeLogName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^([^_]+)_([^_]+)_(.+)-([0-9a-f]{64})\.log$`) })

// kubeLogNames names Kubernetes containers from kubelet's log links.
func kubeLogNames(fs hostfs.FS) []Named {
	ents, err := fs.ReadDir("/var/log/containers")
	if err != nil {
		return nil
	}
	var out []Named
	for _, e := range ents {
		m := kubeLogName().FindStringSubmatch(e.Name())
		if m == nil {
			continue
		}
		out = append(out, Named{ID: m[4], Name: m[3], Runtime: "kubernetes", Pod: m[2] + "/" + m[1]})
	}
	return out
}

// podLogs lists kubelet's /var/log/pods/NAMESPACE_NAME_UID directories.
func podLogs(fs hostfs.FS) []PodLog {
	ents, err := fs.ReadDir("/var/log/pods")
	if err != nil {
		return nil
	}
	var out []PodLog
	for _, e := range ents {
		parts := strings.Split(e.Name(), "_")
		if len(parts) != 3 || !e.IsDir() {
			continue
		}
		p := PodLog{Namespace: parts[0], Name: parts[1], UID: parts[2]}
		sub, _ := fs.ReadDir(path.Join("/var/log/pods", e.Name()))
		for _, s := range sub {
			if s.IsDir() {
				p.Containers = append(p.Containers, s.Name())
			}
		}
		out = append(out, p)
	}
	return out
}
