package snapshot

import (
	"os"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/perflab/perflab/internal/hostfs"
	"github.com/perflab/perflab/internal/knob"
	"golang.org/x/sys/unix"
)

// sysctlTops are the /proc/sys subtrees recorded ("dev", "abi", "user" and
// "debug" hold nothing a performance rule reads).
var sysctlTops = []string{"kernel", "vm", "fs", "net"}

// sysctlSkip are entries that are not values: binfmt_misc is a separate
// filesystem mounted on /proc/sys/fs, and reading vm.stat_refresh makes
// every CPU fold its counters (90 ms on the 2-vCPU CI machine).
var sysctlSkip = map[string]bool{"fs.binfmt_misc": true, "vm.stat_refresh": true}

// perIfaceDirs hold one subdirectory per network interface, about 100
// files each. A Kubernetes node with 500 veths would have tens of thousands,
// so conf/ keeps only "all", "default" and interfaces that are hardware or
// bonds, and neigh/ only "default".
var perIfaceDirs = map[string]bool{
	"net.ipv4.conf": true, "net.ipv6.conf": true,
	"net.ipv4.neigh": false, "net.ipv6.neigh": false,
}

// collectSysctl records every readable sysctl under kernel, vm, fs and net
// as "dotted.name" → value with the kernel's inner white space kept. Files
// that cannot be read (write-only like vm.drop_caches, root-only when not
// root, or refusing reads with EIO/EINVAL) are not sysctl values and are
// skipped silently.
//
// This collector reads close to a thousand files, most of a snapshot's
// cost, so it lists them first, keeping each directory open, and then
// reads them on up to 4 goroutines with openat and a single read into a
// reused buffer: a sysctl hands over its whole value in one read, and
// openat saves the path walk through /proc/sys (together about a quarter
// of the cost of os.ReadFile).
func collectSysctl(c *collector) {
	// The walk opens files itself: in a tree, only a proc/ that Check
	// found closed (no link out, no FIFO, nothing over the read limit).
	if err := c.fs.Check("/proc"); err != nil {
		c.missErr("sysctl", "/proc/sys", err)
		return
	}
	root := c.fs.Path("/proc/sys")
	if st, err := os.Stat(root); err != nil || !st.IsDir() {
		if err == nil {
			err = unix.ENOTDIR
		}
		c.missErr("sysctl", "/proc/sys", err)
		return
	}
	if c.opt.Sysctls != nil && c.fs.NetPID() == 0 && readNamedSysctls(c, root, c.opt.Sysctls) {
		return
	}
	l := sysctlLister{c: c}
	defer l.close()
	for _, top := range sysctlTops {
		if top == "net" && c.fs.NetPID() > 0 {
			collectNetnsSysctl(c)
			continue
		}
		l.list(root+"/"+top, top)
	}
	files := l.files
	workers := min(runtime.GOMAXPROCS(0), 4, len(files)/64+1)
	vals := make([]string, len(files))
	ok := make([]bool, len(files))
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, 64<<10)
			for i := w; i < len(files); i += workers {
				vals[i], ok[i] = readSysctlAt(files[i].dirfd, files[i].name, buf)
			}
		}()
	}
	wg.Wait()
	for i, f := range files {
		if ok[i] {
			c.s.Sysctl[f.key] = vals[i]
		}
	}
	if len(c.s.Sysctl) == 0 {
		c.miss("sysctl", "no readable file under /proc/sys")
	}
}

// readNamedSysctls reads only the named sysctls, each with one openat
// from /proc/sys, and records them as the full walk would. It returns
// false, having recorded nothing, when none could be read: the walk then
// decides how to word the absence, as it would without a subset.
func readNamedSysctls(c *collector, root string, names []string) bool {
	d, err := os.Open(root)
	if err != nil {
		return false
	}
	defer d.Close()
	dirfd := int(d.Fd())
	buf := make([]byte, 64<<10)
	got := map[string]string{}
	for _, name := range names {
		if !walkKeeps(c, name) {
			continue
		}
		rel := strings.TrimPrefix(knob.SysctlPath(name), "/proc/sys/")
		if v, ok := readSysctlAt(dirfd, rel, buf); ok {
			got[name] = v
		}
	}
	if len(got) == 0 {
		return false
	}
	for k, v := range got {
		c.s.Sysctl[k] = v
	}
	return true
}

// walkKeeps reports whether the full walk of /proc/sys would record the
// sysctl name: one of the recorded subtrees, not skipped, and under a
// per-interface directory only for an interface the walk keeps.
func walkKeeps(c *collector, name string) bool {
	parts := strings.Split(name, ".")
	if len(parts) < 2 || !slices.Contains(sysctlTops, parts[0]) {
		return false
	}
	for i := 2; i <= len(parts); i++ {
		prefix := strings.Join(parts[:i], ".")
		if sysctlSkip[prefix] {
			return false
		}
		if hw, per := perIfaceDirs[prefix]; per && i < len(parts)-1 && !keepIface(c, parts[i], hw) {
			return false
		}
	}
	return true
}

type sysctlFile struct {
	key   string // dotted name
	dirfd int    // the open directory holding it
	name  string // its name there
}

// sysctlLister walks /proc/sys, keeping the directories open for openat.
type sysctlLister struct {
	c     *collector
	dirs  []*os.File
	files []sysctlFile
}

func (l *sysctlLister) close() {
	for _, d := range l.dirs {
		d.Close()
	}
}

// list appends the regular files under dir, depth first.
func (l *sysctlLister) list(dir, key string) {
	d, err := os.Open(dir)
	if err != nil {
		return
	}
	l.dirs = append(l.dirs, d)
	ents, err := d.ReadDir(-1)
	if err != nil {
		return
	}
	sort.Slice(ents, func(i, j int) bool { return ents[i].Name() < ents[j].Name() })
	dirfd := int(d.Fd())
	keepIfaces, perIface := perIfaceDirs[key]
	for _, e := range ents {
		k := key + "." + e.Name()
		if sysctlSkip[k] {
			continue
		}
		p := dir + "/" + e.Name()
		isDir, isFile := e.IsDir(), e.Type().IsRegular()
		if e.Type()&os.ModeSymlink != 0 {
			// /proc/sys has no links, but a copied tree may.
			if fi, err := os.Stat(p); err == nil {
				isDir, isFile = fi.IsDir(), fi.Mode().IsRegular()
			}
		}
		switch {
		case isDir:
			if perIface && !keepIface(l.c, e.Name(), keepIfaces) {
				continue
			}
			l.list(p, k)
		case isFile:
			l.files = append(l.files, sysctlFile{k, dirfd, e.Name()})
		}
	}
}

func keepIface(c *collector, name string, hardware bool) bool {
	if name == "all" || name == "default" {
		return true
	}
	return hardware && (c.fs.Exists("/sys/class/net/"+name+"/device") || c.fs.Exists("/sys/class/net/"+name+"/bonding"))
}

// readSysctlAt returns a file's content trimmed of surrounding white
// space, cut at len(buf): one read returns a whole sysctl value.
func readSysctlAt(dirfd int, name string, buf []byte) (string, bool) {
	fd, err := unix.Openat(dirfd, name, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return "", false
	}
	defer unix.Close(fd)
	n, err := unix.Read(fd, buf)
	for err == unix.EINTR {
		n, err = unix.Read(fd, buf)
	}
	if err != nil {
		return "", false
	}
	return strings.TrimSpace(string(buf[:n])), true
}

// collectNetnsSysctl records the net sysctls of a container's view: listed
// and read on one thread inside its network namespace, because a sysctl
// file opened elsewhere is the host's (hostfs.WithNetNS).
func collectNetnsSysctl(c *collector) {
	err := c.fs.InNetNS(func() error {
		l := sysctlLister{c: c}
		defer l.close()
		l.list(c.fs.Path("/proc/sys/net"), "net")
		buf := make([]byte, 64<<10)
		for _, f := range l.files {
			if v, ok := readSysctlAt(f.dirfd, f.name, buf); ok {
				c.s.Sysctl[f.key] = v
			}
		}
		return nil
	})
	if err != nil {
		c.miss("sysctl.net", err.Error())
	}
}

// NetSysctls reads only the net sysctls of fs's view (the host's, or a
// container's with hostfs.WithNetNS), keyed as in Snapshot.Sysctl: what a
// container view compares with the host's.
func NetSysctls(fs hostfs.FS) map[string]string {
	s := &Snapshot{Sysctl: map[string]string{}, Unavailable: map[string]string{}}
	c := &collector{fs: fs, s: s}
	if fs.NetPID() > 0 {
		collectNetnsSysctl(c)
		return s.Sysctl
	}
	l := sysctlLister{c: c}
	defer l.close()
	l.list(fs.Path("/proc/sys/net"), "net")
	buf := make([]byte, 64<<10)
	for _, f := range l.files {
		if v, ok := readSysctlAt(f.dirfd, f.name, buf); ok {
			s.Sysctl[f.key] = v
		}
	}
	return s.Sysctl
}
