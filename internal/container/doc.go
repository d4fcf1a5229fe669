// Package container makes a container a target, like a host: it resolves a
// reference (a Docker, Podman, containerd or CRI-O id, a unique id prefix,
// a name, pod/NAMESPACE/NAME[/CONTAINER] for Kubernetes, or a bare PID) to
// the process whose namespaces and cgroup the container runs in, and gives
// the views the commands need: a hostfs view for collection whose
// network-namespaced files are the container's (hostfs.WithNetNS), a
// snapshot with the container's identity and the host values its namespace
// does not see, the journal scope for tune, and a way to run perflab
// itself inside the container's network namespace and cgroup (exec.go).
//
// References are resolved from the host's own data only — /proc/*/cgroup,
// the runtimes' state directories (Podman/CRI-O containers.json and
// pidfiles, Docker's config.v2.json, containerd's init.pid) and kubelet's
// /var/log/pods and /var/log/containers — so no runtime CLI, socket or API
// is needed and a captured tree resolves like the live host. No library
// reads all of these layouts without talking to the daemons, hence this
// package. Inventory (inventory.go) is the I/O; Resolve is pure.
package container
