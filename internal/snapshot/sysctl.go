package snapshot

import (
	"os"
	"runtime"
	"strings"
	"sync"

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
// cost, so it lists them first and then reads them on up to 4 goroutines
// with raw open/read/close into one buffer each (os.ReadFile's fstat and
// growing allocation double the cost of a 6 µs read).
func collectSysctl(c *collector) {
	root := c.fs.Path("/proc/sys")
	if st, err := os.Stat(root); err != nil || !st.IsDir() {
		if err == nil {
			err = unix.ENOTDIR
		}
		c.missErr("sysctl", "/proc/sys", err)
		return
	}
	var files []sysctlFile
	for _, top := range sysctlTops {
		files = listSysctls(c, root+"/"+top, top, files)
	}
	workers := min(runtime.GOMAXPROCS(0), 4, len(files)/64+1)
	vals := make([]string, len(files))
	ok := make([]bool, len(files))
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, 32<<10)
			for i := w; i < len(files); i += workers {
				vals[i], ok[i] = readSysctl(files[i].path, buf)
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

type sysctlFile struct{ key, path string }

// listSysctls appends the regular files under dir, depth first.
func listSysctls(c *collector, dir, key string, out []sysctlFile) []sysctlFile {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return out
	}
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
			if perIface && !keepIface(c, e.Name(), keepIfaces) {
				continue
			}
			out = listSysctls(c, p, k, out)
		case isFile:
			out = append(out, sysctlFile{k, p})
		}
	}
	return out
}

func keepIface(c *collector, name string, hardware bool) bool {
	if name == "all" || name == "default" {
		return true
	}
	return hardware && (c.fs.Exists("/sys/class/net/"+name+"/device") || c.fs.Exists("/sys/class/net/"+name+"/bonding"))
}

// readSysctl returns a file's content trimmed of surrounding white space.
// A sysctl hands over its whole value in the first read when the buffer is
// larger, so a short read ends it without a second read for EOF.
func readSysctl(p string, buf []byte) (string, bool) {
	fd, err := unix.Open(p, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return "", false
	}
	defer unix.Close(fd)
	n := 0
	for n < len(buf) {
		m, err := unix.Read(fd, buf[n:])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return "", false
		}
		n += m
		if m == 0 || n < len(buf)/2 {
			break
		}
	}
	return strings.TrimSpace(string(buf[:n])), true
}
