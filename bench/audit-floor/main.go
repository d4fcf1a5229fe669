// Command audit-floor is the floor of `perflab audit` on this kernel: a
// static Go process that does nothing but the file-system work the live
// audit does — each open+read+close, directory listing, O_PATH resolution,
// stat and readlink, in a list captured from the real binary — on the
// same number of goroutines, and exits. It is never linked into perflab.
// bench/startup.sh captures the list (strace of `perflab audit` minus
// strace of `perflab --version`, so the Go runtime's and the package
// initialisers' own reads are not counted twice), builds this program and
// times it beside perflab: its median is what any process reading these
// files here costs, process start-up included.
//
// The list is one operation a line, "op<TAB>path":
//
//	read      open O_RDONLY, read until end of file, close
//	dir       open O_DIRECTORY, read every directory entry, close
//	path      open O_PATH, read the descriptor's name back, close
//	stat      stat
//	readlink  readlink
//
// A failing operation (a file that is absent here) is done all the same:
// the audit pays for its ENOENT too. The five SIOCETHTOOL ioctls of a NIC
// are not replayed (they are microseconds).
//
//	audit-floor [-workers 2] LIST
package main

import (
	"bufio"
	"cmp"
	"flag"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

type op struct {
	kind byte // 'r', 'd', 'p', 's', 'l'
	path string
}

func main() {
	workers := flag.Int("workers", 2, "goroutines sharing the list (the live audit reads on two collector halves)")
	verbose := flag.Bool("v", false, "print how many operations of each kind were done and how many failed")
	top := flag.Int("top", 0, "instead: do the list N times on one goroutine and print the N costliest operations (median of N)")
	flag.Parse()
	if flag.NArg() != 1 || *workers < 1 {
		fmt.Fprintln(os.Stderr, "usage: audit-floor [-workers N] LIST (bench/startup.sh writes LIST)")
		os.Exit(2)
	}
	ops, err := load(flag.Arg(0))
	if err != nil {
		fmt.Fprintln(os.Stderr, "audit-floor:", err)
		os.Exit(2)
	}
	if *top > 0 {
		costliest(ops, *top)
		return
	}
	fails := make([]int, *workers)
	var wg sync.WaitGroup
	for w := 0; w < *workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			buf := make([]byte, 16<<10)
			for i := w; i < len(ops); i += *workers { // interleaved: each worker gets a like share of every kind
				if !do(ops[i], buf) {
					fails[w]++
				}
			}
		}(w)
	}
	wg.Wait()
	if *verbose {
		kinds := map[byte]int{}
		for _, o := range ops {
			kinds[o.kind]++
		}
		failed := 0
		for _, f := range fails {
			failed += f
		}
		fmt.Printf("%d operations (read %d, dir %d, path %d, stat %d, readlink %d) on %d goroutines; %d failed\n",
			len(ops), kinds['r'], kinds['d'], kinds['p'], kinds['s'], kinds['l'], *workers, failed)
	}
}

// costliest times each operation n times (one goroutine, after a first
// warm pass) and prints the n costliest by median: where a floor's time
// goes.
func costliest(ops []op, n int) {
	buf := make([]byte, 16<<10)
	for _, o := range ops {
		do(o, buf)
	}
	costs := make([][]time.Duration, len(ops))
	for r := 0; r < n; r++ {
		for i, o := range ops {
			t := time.Now()
			do(o, buf)
			costs[i] = append(costs[i], time.Since(t))
		}
	}
	med := make([]time.Duration, len(ops))
	var total time.Duration
	for i, c := range costs {
		slices.Sort(c)
		med[i] = c[len(c)/2]
		total += med[i]
	}
	idx := make([]int, len(ops))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int { return cmp.Compare(med[b], med[a]) })
	fmt.Printf("%d operations, %v in all (sum of medians of %d passes)\n", len(ops), total, n)
	for _, i := range idx[:min(n, len(idx))] {
		fmt.Printf("%10v  %c %s\n", med[i], ops[i].kind, ops[i].path)
	}
}

func load(name string) ([]op, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var ops []op
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		kind, path, ok := strings.Cut(sc.Text(), "\t")
		if !ok || path == "" {
			return nil, fmt.Errorf("%s:%d: want \"op<TAB>path\", got %q", name, n, sc.Text())
		}
		k := map[string]byte{"read": 'r', "dir": 'd', "path": 'p', "stat": 's', "readlink": 'l'}[kind]
		if k == 0 {
			return nil, fmt.Errorf("%s:%d: unknown operation %q (read, dir, path, stat, readlink)", name, n, kind)
		}
		ops = append(ops, op{k, path})
	}
	return ops, sc.Err()
}

// do performs one operation with the system calls perflab's hostfs uses
// for it, and reports whether it succeeded.
func do(o op, buf []byte) bool {
	switch o.kind {
	case 's':
		var st unix.Stat_t
		return unix.Stat(o.path, &st) == nil
	case 'l':
		_, err := unix.Readlink(o.path, buf)
		return err == nil
	}
	flags := unix.O_RDONLY | unix.O_CLOEXEC
	switch o.kind {
	case 'd':
		flags |= unix.O_DIRECTORY
	case 'p':
		flags = unix.O_PATH | unix.O_CLOEXEC
	}
	fd, err := unix.Open(o.path, flags, 0)
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	switch o.kind {
	case 'p':
		_, err = unix.Readlink("/proc/self/fd/"+strconv.Itoa(fd), buf)
		return err == nil
	case 'd':
		for {
			n, err := unix.Getdents(fd, buf)
			if err != nil {
				return false
			}
			if n == 0 {
				return true
			}
		}
	}
	for {
		n, err := unix.Read(fd, buf)
		if err != nil {
			return false
		}
		if n == 0 {
			return true
		}
	}
}
