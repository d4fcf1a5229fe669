package hostfs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strconv"

	"github.com/vishvananda/netns"
)

// A network namespace's sysctls (/proc/sys/net) are those of the network
// namespace of the thread that opens them, /proc/PID/net is PID's, and the
// host's /sys/class/net lists the interfaces of the namespace sysfs was
// mounted in. A container's view therefore cannot be a path: WithNetNS
// makes an FS whose reads and writes under /proc/sys/net happen on a locked
// OS thread that joined the container's namespace (vishvananda/netns does
// the setns), and whose /proc/net is /proc/PID/net.
//
// In a captured tree (not the live root) the container's net sysctls are
// kept where a copy of the container's own /proc would put them:
// /proc/PID/root/proc/sys/net.

// ErrProcessGone is returned when the process whose namespace a view shows
// has exited (a container that stopped).
var ErrProcessGone = errors.New("the process has exited")

// WithNetNS returns the view of f in which the network-namespaced files
// are those of process pid's network namespace. pid 0 returns f's host view.
func (f FS) WithNetNS(pid int) FS {
	f.netPID = pid
	return f
}

// NetPID is the process whose network namespace the view shows; 0 for the
// host's own.
func (f FS) NetPID() int { return f.netPID }

// Host returns the same root without the network-namespace view.
func (f FS) Host() FS {
	f.netPID = 0
	return f
}

// netScoped reports whether reading p must happen inside the view's
// network namespace.
func (f FS) netScoped(p string) bool {
	if f.netPID <= 0 || !f.Live() {
		return false
	}
	_, ok := cutDir(filepath.Clean("/"+p), "/proc/sys/net")
	return ok
}

// NetNSInode is the inode of the view's network namespace (what `ls -L -i
// /proc/PID/ns/net` prints); 0 for the host view or when it cannot be read.
func (f FS) NetNSInode() uint64 {
	if f.netPID <= 0 {
		return 0
	}
	return inode(f.Path("/proc/" + strconv.Itoa(f.netPID) + "/ns/net"))
}

// InNetNS runs fn on an OS thread inside the view's network namespace and
// returns its error; on the host view, or in a captured tree, it calls fn
// directly. The thread is locked for the call and returned to the runtime
// only once it is back in its own namespace: if switching back fails the
// goroutine exits locked and the runtime ends the thread, so no other
// goroutine ever runs in the container's namespace.
func (f FS) InNetNS(fn func() error) error {
	if f.netPID <= 0 || !f.Live() {
		return fn()
	}
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		orig, err := netns.Get()
		if err != nil {
			runtime.UnlockOSThread()
			errc <- fmt.Errorf("open this thread's network namespace: %w", err)
			return
		}
		defer orig.Close()
		target, err := netns.GetFromPid(f.netPID)
		if err != nil {
			runtime.UnlockOSThread()
			if errors.Is(err, fs.ErrNotExist) {
				err = fmt.Errorf("process %d: %w", f.netPID, ErrProcessGone)
			}
			errc <- fmt.Errorf("open the network namespace of process %d: %w", f.netPID, err)
			return
		}
		defer target.Close()
		if err := netns.Set(target); err != nil {
			runtime.UnlockOSThread()
			errc <- fmt.Errorf("join the network namespace of process %d: %w", f.netPID, err)
			return
		}
		ferr := fn()
		if netns.Set(orig) == nil {
			runtime.UnlockOSThread()
		}
		errc <- ferr
	}()
	return <-errc
}

// inode returns a file's inode number, 0 when it cannot be read.
func inode(p string) uint64 {
	fi, err := os.Stat(p)
	if err != nil {
		return 0
	}
	if st, ok := statIno(fi); ok {
		return st
	}
	return 0
}
