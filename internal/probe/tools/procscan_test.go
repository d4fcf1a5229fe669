package tools

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Helpers that look at this test's own child processes in the live /proc:
// what a probe started, what it listens on, and whether it is gone.

type proc struct {
	pid, ppid int
	cmdline   string
}

func allProcs() []proc {
	ents, _ := os.ReadDir("/proc")
	var out []proc
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// comm may contain spaces and parentheses: fields follow the last ')'.
		s := string(stat)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) < 2 || f[0] == "Z" {
			continue // zombies hold no resources and are their parent's to reap
		}
		ppid, _ := strconv.Atoi(f[1])
		cl, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		out = append(out, proc{pid: pid, ppid: ppid, cmdline: strings.ReplaceAll(string(cl), "\x00", " ")})
	}
	return out
}

// descendants are the live processes below pid.
func descendants(pid int) []proc {
	ps := allProcs()
	children := map[int][]proc{}
	for _, p := range ps {
		children[p.ppid] = append(children[p.ppid], p)
	}
	var out []proc
	var walk func(int)
	walk = func(p int) {
		for _, c := range children[p] {
			out = append(out, c)
			walk(c.pid)
		}
	}
	walk(pid)
	return out
}

// mentioning are live processes whose command line contains s.
func mentioning(s string) []proc {
	var out []proc
	for _, p := range allProcs() {
		if p.pid != os.Getpid() && strings.Contains(p.cmdline, s) {
			out = append(out, p)
		}
	}
	return out
}

// listenPorts are the TCP ports in LISTEN and bound UDP ports held by pids.
func listenPorts(t *testing.T, ps []proc) map[string]bool {
	t.Helper()
	inodes := map[uint64]bool{}
	for _, p := range ps {
		fds, _ := os.ReadDir(filepath.Join("/proc", strconv.Itoa(p.pid), "fd"))
		for _, fd := range fds {
			l, err := os.Readlink(filepath.Join("/proc", strconv.Itoa(p.pid), "fd", fd.Name()))
			if err != nil || !strings.HasPrefix(l, "socket:[") {
				continue
			}
			ino, _ := strconv.ParseUint(strings.TrimSuffix(strings.TrimPrefix(l, "socket:["), "]"), 10, 64)
			inodes[ino] = true
		}
	}
	out := map[string]bool{}
	for _, proto := range []string{"tcp", "udp"} {
		socks, err := localSockets(proto)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range socks {
			if inodes[s.inode] {
				out[proto+"/"+strconv.Itoa(s.port)] = true
			}
		}
	}
	return out
}

// stillBound are the ones of ports that something still listens on.
func stillBound(t *testing.T, ports map[string]bool) []string {
	t.Helper()
	var out []string
	for k := range ports {
		proto, port, _ := strings.Cut(k, "/")
		n, _ := strconv.Atoi(port)
		ok, err := portBound(proto, n)
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			out = append(out, k)
		}
	}
	return out
}

func alive(ps []proc) []proc {
	live := map[int]bool{}
	for _, p := range allProcs() {
		live[p.pid] = true
	}
	var out []proc
	for _, p := range ps {
		if live[p.pid] {
			out = append(out, p)
		}
	}
	return out
}
