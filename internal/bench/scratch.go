package bench

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/prometheus/procfs"
	"golang.org/x/sys/unix"
)

// A probe's scratch directory is removed when its run ends, also on Ctrl-C
// and SIGTERM. Only a process killed outright (SIGKILL, the OOM killer)
// leaves one behind, and the disk probe's file alone is 256 MiB. Each
// directory therefore names its owner, and every bench session removes the
// directories whose owner is provably gone before it makes its own.
//
// The owner is "PID STARTTIME BOOTID PIDNS MACHINEID": the pid and that
// process's start time, so that a pid reused by another process does not
// pass for the owner, and the boot, pid namespace and machine they are
// counted in. A --dir can be shared — a host directory mounted into
// containers, an NFS export tested from two clients — and a pid of another
// namespace or host looks dead here while its run is live. So only an
// owner of this boot and pid namespace is judged by its pid, one of an
// earlier boot of this machine is gone, and any other is not ours to judge
// and stays.
//
// The sweep removes only what this process could have made: a real
// directory (never a symlink) directly in --dir, named perflab-*, owned by
// this user, holding a small regular owner file. os.RemoveAll does not
// follow symlinks inside it.
const ownerFile = ".perflab-owner"

// ownerMax bounds the owner file read: ours is under 100 bytes, and a FIFO
// or a huge file planted in its place must not hang or bloat the sweep.
const ownerMax = 256

// makeScratch creates a scratch directory under parent for probe name and
// records this process as its owner.
func makeScratch(parent, name string) (string, error) {
	dir, err := os.MkdirTemp(parent, "perflab-"+name+"-*")
	if err != nil {
		return "", err
	}
	me, err := self()
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, ownerFile), []byte(me.String()+"\n"), 0o600)
	}
	if err != nil {
		os.RemoveAll(dir)
		return "", err
	}
	return dir, nil
}

// owner identifies a process across pid reuse, reboots, pid namespaces
// and hosts.
type owner struct {
	Pid   int
	Start uint64 // clock ticks after boot (/proc/PID/stat field 22)
	host
	// short is the two-field form that earlier builds wrote, without a
	// host: it was this boot and namespace.
	short bool
}

func (o owner) String() string {
	return fmt.Sprintf("%d %d %s %s %s", o.Pid, o.Start, orDash(o.Boot), orDash(o.PidNS), orDash(o.Machine))
}

// host is where a pid is counted: boot_id, the pid namespace's inode, and
// /etc/machine-id ("" where unknown).
type host struct {
	Boot, PidNS, Machine string
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func unDash(s string) string {
	if s == "-" {
		return ""
	}
	return s
}

func self() (owner, error) {
	pid := os.Getpid()
	start, err := startTime(pid)
	if err != nil {
		return owner{}, err
	}
	// Without a boot id or namespace the owner is written as unknown
	// ("-"): no sweep can judge it, which is safe, and the run goes on.
	return owner{Pid: pid, Start: start, host: thisHost()}, nil
}

func thisHost() host {
	var h host
	if b, err := os.ReadFile("/proc/sys/kernel/random/boot_id"); err == nil {
		h.Boot = strings.TrimSpace(string(b))
	}
	if fi, err := os.Stat("/proc/self/ns/pid"); err == nil {
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			h.PidNS = strconv.FormatUint(st.Ino, 10)
		}
	}
	if b, err := os.ReadFile("/etc/machine-id"); err == nil {
		if m := strings.TrimSpace(string(b)); len(strings.Fields(m)) == 1 {
			h.Machine = m
		}
	}
	return h
}

// sweepScratch removes the scratch directories under parent whose owner
// is gone, and says which.
func sweepScratch(parent string) []string {
	return sweep(parent, thisHost(), ownerRuns)
}

// sweep is sweepScratch with the host and the liveness test given, so
// tests can play another boot or namespace. Entries are listed, not
// globbed: a --dir with glob metacharacters ("run[1]") must not match a
// sibling directory.
func sweep(parent string, h host, runs func(pid int, start uint64) bool) []string {
	entries, err := os.ReadDir(parent)
	if err != nil {
		return nil
	}
	uid := uint32(os.Geteuid())
	var removed []string
	for _, e := range entries {
		// ReadDir does not follow symlinks: a symlink named perflab-x is
		// not a directory here and is skipped, whatever it points to.
		if !e.IsDir() || !strings.HasPrefix(e.Name(), "perflab-") {
			continue
		}
		dir := filepath.Join(parent, e.Name())
		fi, err := os.Lstat(dir)
		if err != nil || !fi.IsDir() {
			continue
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); !ok || st.Uid != uid {
			continue
		}
		o, err := readOwner(filepath.Join(dir, ownerFile))
		if err != nil || !gone(o, h, runs) {
			continue
		}
		if os.RemoveAll(dir) == nil {
			removed = append(removed, fmt.Sprintf("%s (pid %d)", dir, o.Pid))
		}
	}
	return removed
}

// readOwner reads an owner file without following a symlink and without
// blocking on a FIFO; anything but a small regular file is an error.
func readOwner(path string) (owner, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return owner{}, err
	}
	f := os.NewFile(uintptr(fd), path)
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return owner{}, err
	}
	if !fi.Mode().IsRegular() {
		return owner{}, fmt.Errorf("%s is not a regular file", path)
	}
	b, err := io.ReadAll(io.LimitReader(f, ownerMax+1))
	if err != nil {
		return owner{}, err
	}
	if len(b) > ownerMax {
		return owner{}, fmt.Errorf("%s is too large for an owner file", path)
	}
	o, ok := parseOwner(string(b))
	if !ok {
		return owner{}, fmt.Errorf("%s: not an owner", path)
	}
	return o, nil
}

// gone reports whether owner o provably no longer runs.
func gone(o owner, h host, runs func(pid int, start uint64) bool) bool {
	switch {
	case o.short: // written by this boot and namespace
	case o.Boot == "" || h.Boot == "":
		return false
	case o.Boot != h.Boot:
		// An earlier boot of this machine ended the owner; another
		// host sharing this directory may still be running it.
		return o.Machine != "" && o.Machine == h.Machine
	case o.PidNS == "" || o.PidNS != h.PidNS:
		return false // another container's pid means nothing here
	}
	return !runs(o.Pid, o.Start)
}

// parseOwner reads "PID STARTTIME BOOTID PIDNS MACHINEID" (MACHINEID "-"
// where unknown), or "PID STARTTIME" as earlier builds wrote it.
func parseOwner(s string) (owner, bool) {
	f := strings.Fields(s)
	if len(f) != 2 && len(f) != 5 {
		return owner{}, false
	}
	p, err1 := strconv.Atoi(f[0])
	st, err2 := strconv.ParseUint(f[1], 10, 64)
	if err1 != nil || err2 != nil || p <= 0 {
		return owner{}, false
	}
	o := owner{Pid: p, Start: st, short: len(f) == 2}
	if len(f) == 5 {
		o.Boot, o.PidNS, o.Machine = unDash(f[2]), unDash(f[3]), unDash(f[4])
	}
	return o, true
}

// ownerRuns reports whether process pid still runs and is the one that
// started at start (clock ticks after boot).
func ownerRuns(pid int, start uint64) bool {
	st, err := startTime(pid)
	return err == nil && st == start
}

// startTime is a process's start time in clock ticks after boot
// (/proc/PID/stat field 22), which with the pid identifies a process.
func startTime(pid int) (uint64, error) {
	p, err := procfs.NewProc(pid)
	if err != nil {
		return 0, err
	}
	st, err := p.Stat()
	if err != nil {
		return 0, err
	}
	return st.Starttime, nil
}
