package container

import (
	"strings"
	"testing"
)

// FuzzResolve feeds arbitrary cgroup paths and references: resolution
// never panics, an id found is 64 hex digits, and a failure is one line.
func FuzzResolve(f *testing.F) {
	f.Add("/libpod_parent/libpod-"+podmanID, "web1")
	f.Add(kubeSlice+"/cri-containerd-"+nginxID+".scope", "pod/default/web-0/nginx")
	f.Add("0::/", "pod//")
	f.Fuzz(func(t *testing.T, cgroup, ref string) {
		id, _, _, ok := containerOfCgroup(cgroupOf("0::" + cgroup))
		if ok && (len(id) != 64 || !isHex(id)) {
			t.Fatalf("id %q from %q", id, cgroup)
		}
		inv := Inventory{
			Running: []Running{{ID: podmanID, Runtime: "podman", PID: 1, Cgroup: cgroup}},
			Names:   []Named{{ID: podmanID, Name: "web1", Runtime: "podman"}},
			Pods:    []PodLog{{Namespace: "default", Name: "web-0", UID: podUID, Containers: []string{"nginx"}}},
		}
		if ok {
			inv.Running = append(inv.Running, Running{ID: id, PID: 2})
		}
		if _, err := Resolve(inv, ref); err != nil && strings.Contains(err.Error(), "\n") && !strings.Contains(ref, "\n") {
			t.Fatalf("two lines: %q", err)
		}
	})
}
