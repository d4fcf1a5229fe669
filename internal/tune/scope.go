package tune

import "github.com/perflab/perflab/internal/audit"

// Scope confines a Host to one container: FS is the container's view
// (hostfs.WithNetNS), its journal lives in its own directory, entries are
// bound to the container's network namespace, and a knob the container does
// not own — host-wide, read-only inside its namespace, or another cgroup's
// file — is refused with the reason instead of being written on the host.
type Scope interface {
	// Refuse says why c must not be written in this scope ("" when it may).
	Refuse(c audit.Change) string
	// NetNS is the inode of the network namespace writes reach.
	NetNS() uint64
}

// here is the namespace identity writes of h reach.
func (h Host) here() NS {
	if h.Scope != nil {
		return NS{Net: h.Scope.NetNS()}
	}
	return currentNS()
}

// Check marks the plan's items that cannot be applied through h (see
// Plan.Check), and in a container scope those the container does not own.
func (h Host) Check(p *Plan) (blocked int) {
	blocked = p.Check(h.FS)
	if h.Scope == nil {
		return blocked
	}
	for i := range p.Items {
		if p.Items[i].Blocked != "" {
			continue
		}
		if why := h.Scope.Refuse(p.Items[i].Change); why != "" {
			p.Items[i].Blocked = why
			blocked++
		}
	}
	return blocked
}
