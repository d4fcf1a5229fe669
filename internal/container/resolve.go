package container

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Container is a resolved running container: the process whose namespaces
// and cgroup it runs in, and how the host names it.
type Container struct {
	ID      string `json:"id"`
	Name    string `json:"name"`
	Runtime string `json:"runtime"`
	Pod     string `json:"pod,omitempty"` // NAMESPACE/NAME
	PID     int    `json:"pid"`
	Cgroup  string `json:"cgroup"`
}

// Label is how the container is named in output: the name, or the short id.
func (c Container) Label() string {
	switch {
	case c.Pod != "" && c.Name != "":
		return "pod/" + c.Pod + "/" + c.Name
	case c.Name != "":
		return c.Name
	case c.ID != "":
		return short(c.ID)
	}
	return "pid " + strconv.Itoa(c.PID)
}

func short(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}

// RefError is a reference that names no running container, or more than
// one: a usage error (exit 2) with what to do.
type RefError struct {
	Ref     string
	Problem string // "no running container matches", "is not running", …
	Hint    string
}

func (e *RefError) Error() string {
	msg := fmt.Sprintf("container %q: %s", e.Ref, e.Problem)
	if e.Hint != "" {
		msg += "; " + e.Hint
	}
	return msg
}

// minPrefix is the shortest id prefix accepted, as short ids go.
const minPrefix = 3

// Resolve finds the running container ref names in inv: a full id, a unique
// id prefix (3 or more hex digits), a name, or pod/NAMESPACE/NAME[/CONTAINER].
// Pure: inv holds everything read from the host.
func Resolve(inv Inventory, ref string) (Container, error) {
	ref = strings.TrimSpace(ref)
	if ref == "" {
		return Container{}, &RefError{Ref: ref, Problem: "empty reference", Hint: "give an id, a name or pod/NAMESPACE/NAME[/CONTAINER]"}
	}
	if rest, ok := strings.CutPrefix(ref, "pod/"); ok {
		return resolvePod(inv, ref, rest)
	}
	running := map[string]Running{}
	for _, r := range inv.Running {
		running[r.ID] = r
	}
	// Names first: a name that happens to be hex is still a name.
	var byName []string
	for _, n := range inv.Names {
		if n.Name == ref {
			byName = appendUnique(byName, n.ID)
		}
	}
	if len(byName) > 0 {
		return pick(inv, ref, byName, running)
	}
	lower := strings.ToLower(ref)
	var ids []string
	if len(lower) >= minPrefix && isHex(lower) {
		for _, r := range inv.Running {
			if strings.HasPrefix(r.ID, lower) {
				ids = appendUnique(ids, r.ID)
			}
		}
		if len(ids) == 0 {
			for _, n := range inv.Names {
				if strings.HasPrefix(n.ID, lower) {
					ids = appendUnique(ids, n.ID)
				}
			}
		}
	}
	if len(ids) > 0 {
		return pick(inv, ref, ids, running)
	}
	hint := "perflab reads running containers from /proc/*/cgroup and names from the runtimes' state (" + knownList(inv) + ")"
	if len(lower) < minPrefix && isHex(lower) {
		hint = fmt.Sprintf("an id prefix needs at least %d hex digits", minPrefix)
	}
	return Container{}, &RefError{Ref: ref, Problem: "no container has this name or id", Hint: hint}
}

// pick turns the candidate ids of a reference into one running container.
func pick(inv Inventory, ref string, ids []string, running map[string]Running) (Container, error) {
	var live []string
	for _, id := range ids {
		if _, ok := running[id]; ok {
			live = append(live, id)
		}
	}
	switch {
	case len(live) == 1:
		return fill(inv, running[live[0]]), nil
	case len(live) > 1:
		sort.Strings(live)
		var shorts []string
		for _, id := range live {
			shorts = append(shorts, short(id))
		}
		return Container{}, &RefError{Ref: ref, Problem: fmt.Sprintf("matches %d running containers (%s)", len(live), strings.Join(shorts, ", ")),
			Hint: "give more of the id"}
	}
	return Container{}, &RefError{Ref: ref, Problem: "is not running (container " + short(ids[0]) + " has no process)",
		Hint: "start it, or name a running container"}
}

// fill names a running container from the runtimes' state.
func fill(inv Inventory, r Running) Container {
	c := Container{ID: r.ID, Runtime: r.Runtime, PID: r.PID, Cgroup: r.Cgroup}
	for _, n := range inv.Names {
		if n.ID != r.ID {
			continue
		}
		if c.Name == "" || n.Pod != "" {
			c.Name, c.Pod = n.Name, n.Pod
		}
		if c.Runtime == "" || c.Runtime == "docker" || c.Runtime == "kubernetes" {
			if n.Runtime != "kubernetes" {
				c.Runtime = n.Runtime
			}
		}
	}
	if c.Pod == "" && r.PodUID != "" {
		for _, p := range inv.Pods {
			if p.UID == r.PodUID {
				c.Pod = p.Namespace + "/" + p.Name
			}
		}
	}
	return c
}

// resolvePod resolves pod/NAMESPACE/NAME[/CONTAINER] through kubelet's
// /var/log/pods (pod UID) and the container names the host records.
func resolvePod(inv Inventory, ref, rest string) (Container, error) {
	parts := strings.Split(rest, "/")
	if len(parts) < 2 || len(parts) > 3 || parts[0] == "" || parts[1] == "" {
		return Container{}, &RefError{Ref: ref, Problem: "not of the form pod/NAMESPACE/NAME[/CONTAINER]"}
	}
	ns, name, cname := parts[0], parts[1], ""
	if len(parts) == 3 {
		cname = parts[2]
	}
	var pod *PodLog
	for i := range inv.Pods {
		if inv.Pods[i].Namespace == ns && inv.Pods[i].Name == name {
			pod = &inv.Pods[i]
		}
	}
	if pod == nil {
		return Container{}, &RefError{Ref: ref, Problem: "no pod " + ns + "/" + name + " on this host",
			Hint: "kubelet keeps one directory per pod in /var/log/pods/NAMESPACE_NAME_UID; the pod may run on another node"}
	}
	if cname == "" {
		if len(pod.Containers) != 1 {
			return Container{}, &RefError{Ref: ref, Problem: fmt.Sprintf("pod has %d containers (%s)", len(pod.Containers), strings.Join(pod.Containers, ", ")),
				Hint: "name one: pod/" + ns + "/" + name + "/CONTAINER"}
		}
		cname = pod.Containers[0]
	}
	running := map[string]Running{}
	var inPod []Running
	for _, r := range inv.Running {
		running[r.ID] = r
		if r.PodUID == pod.UID {
			inPod = append(inPod, r)
		}
	}
	var ids []string
	for _, n := range inv.Names {
		if n.Pod == ns+"/"+name && n.Name == cname {
			ids = appendUnique(ids, n.ID)
		}
	}
	var live []Running
	for _, id := range ids {
		if r, ok := running[id]; ok && r.PodUID == pod.UID {
			live = append(live, r)
		}
	}
	if len(live) == 1 {
		c := fill(inv, live[0])
		c.Pod, c.Name = ns+"/"+name, cname
		return c, nil
	}
	if len(ids) == 0 && len(inPod) == 1 && len(pod.Containers) == 1 {
		// No name on record (containerd without log links), but the pod has
		// one container and one running cgroup.
		c := fill(inv, inPod[0])
		c.Pod, c.Name = ns+"/"+name, cname
		return c, nil
	}
	if len(live) > 1 {
		return Container{}, &RefError{Ref: ref, Problem: fmt.Sprintf("%d running containers carry this name", len(live)), Hint: "give the container id"}
	}
	return Container{}, &RefError{Ref: ref, Problem: fmt.Sprintf("container %q of pod %s/%s (uid %s) is not running", cname, ns, name, pod.UID),
		Hint: fmt.Sprintf("%d of its containers run (cgroups under pod%s); give the container id", len(inPod), pod.UID)}
}

// ForPID is the target of --pid: the process, and the container its cgroup
// names if any.
func ForPID(inv Inventory, pid int, cgroup string) Container {
	if id, rt, pod, ok := containerOfCgroup(cgroup); ok {
		c := fill(inv, Running{ID: id, Runtime: rt, PID: pid, Cgroup: cgroup, PodUID: pod})
		c.PID = pid
		return c
	}
	return Container{Runtime: "process", PID: pid, Cgroup: cgroup}
}

func knownList(inv Inventory) string {
	if len(inv.Running) == 0 {
		return "none runs now"
	}
	var names []string
	for _, r := range inv.Running {
		names = append(names, fill(inv, r).Label())
	}
	sort.Strings(names)
	if len(names) > 8 {
		names = append(names[:8], "…")
	}
	return "running: " + strings.Join(names, ", ")
}

func isHex(s string) bool {
	for _, r := range s {
		if !(r >= '0' && r <= '9' || r >= 'a' && r <= 'f') {
			return false
		}
	}
	return s != ""
}

func appendUnique(s []string, v string) []string {
	for _, x := range s {
		if x == v {
			return s
		}
	}
	return append(s, v)
}
