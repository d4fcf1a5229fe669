package tune

import (
	"fmt"
	"os"
	"strings"
	"syscall"

	"github.com/perflab/perflab/internal/audit"
)

// Namespaces binds journal entries to the namespaces they were written in.
//
// A net sysctl (/proc/sys/net/…), an RPS/XPS mask under /sys/class/net and a
// NIC's channel count belong to the network namespace of the process that
// writes them. Other /sys and /proc knobs do not depend on the namespace:
// every sysfs instance shows the same kernel objects (only its net class is
// tagged by network namespace), so THP or a disk's read-ahead written from
// inside `ip netns exec` — which makes a new mount namespace on every call —
// is the host's knob and is reverted from anywhere. A journal applied inside a
// container's namespace and reverted from the host would otherwise write
// the container's old values into the host's knobs. Each entry records the
// namespace inodes (what `ls -L -i /proc/self/ns/net` prints, and `ip netns
// identify` matches); revert and verify act on an entry only in the same
// namespace and name the others. An entry without ids (a journal written by
// an older perflab) is not bound.

// NS is a process's namespace identity: the inodes of its ns files. Zero
// means unknown.
type NS struct {
	Net uint64 `json:"netns,omitempty"`
	// Mnt was recorded for /sys writes by the first namespace-aware
	// perflab; a mount namespace binds nothing (see above), so it is kept
	// only to read those journals and never compared.
	Mnt uint64 `json:"mntns,omitempty"`
}

// nsInode returns the inode of /proc/thread-self/ns/<kind> (the calling
// thread's, which a setns on a locked OS thread changes), falling back to
// /proc/self; 0 when neither can be read. These are the process's own
// namespaces, read from the real /proc whatever root perflab tunes: that is
// where its writes go.
func nsInode(kind string) uint64 {
	for _, p := range []string{"/proc/thread-self/ns/" + kind, "/proc/self/ns/" + kind} {
		fi, err := os.Stat(p)
		if err != nil {
			continue
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			return st.Ino
		}
	}
	return 0
}

// currentNS is the namespace identity of the calling thread. A variable so
// that tests can simulate another namespace.
var currentNS = func() NS { return NS{Net: nsInode("net"), Mnt: nsInode("mnt")} }

// bind returns the namespaces an entry for c is bound to, given where the
// writer runs: only those that decide what the write reaches.
func bind(c audit.Change, here NS) NS {
	var ns NS
	if netScoped(c) {
		ns.Net = here.Net
	}
	return ns
}

// elsewhere says why an entry bound to ns must not be touched from here
// ("" when it may).
func (ns NS) elsewhere(here NS) string {
	var why []string
	if ns.Net != 0 && here.Net != 0 && ns.Net != here.Net {
		why = append(why, fmt.Sprintf("network namespace net:[%d], this is net:[%d]", ns.Net, here.Net))
	}
	return strings.Join(why, " and ")
}

// sameNS reports whether two bindings name the same knob instance.
func (ns NS) same(o NS) bool { return ns.Net == o.Net }

// Skipped is a journal entry revert left alone because it belongs to
// another namespace.
type Skipped struct {
	Entry  Entry  `json:"entry"`
	Reason string `json:"reason"` // "applied in network namespace net:[…], this is net:[…]"
}

// ErrOtherNamespace is returned by Revert when some entries were applied in
// another namespace: they were skipped and stay in the journal.
type ErrOtherNamespace struct {
	Skipped []Skipped
}

func (e *ErrOtherNamespace) Error() string {
	var targets, reasons []string
	seen := map[string]bool{}
	for _, s := range e.Skipped {
		targets = append(targets, s.Entry.Change.Target)
		if !seen[s.Reason] {
			seen[s.Reason] = true
			reasons = append(reasons, s.Reason)
		}
	}
	return fmt.Sprintf("not reverted here: %d knob(s) were applied in another namespace (%s): %s; they stay in the journal: "+
		"run 'perflab tune revert' inside that namespace (e.g. ip netns exec NAME perflab tune revert, or nsenter -t PID -n -m)",
		len(e.Skipped), strings.Join(reasons, "; "), strings.Join(targets, ", "))
}

// Elsewhere says, for display, why this entry belongs to another namespace
// than the caller's ("" when it may be reverted from here).
func (e Entry) Elsewhere() string {
	if why := e.NS.elsewhere(currentNS()); why != "" {
		return "applied in " + why
	}
	return ""
}
