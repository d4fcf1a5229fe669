// Command fanoutbench measures perflab's --inventory fan-out in a
// namespace lab (internal/testlab): it builds N lab hosts (network
// namespaces with their own sshd), runs one perflab command across the
// first n of them for every n of -sizes at -forks, and prints the wall
// time, the per-host outcome counts, the median and slowest host's
// phases, and the controller's peak RSS and CPU time (from wait4's
// rusage). It runs first on all hosts with nothing cached there (cold:
// each host gets a copy of perflab), then on each size with the build
// cached on the hosts by its hash (warm). Every lab host has its own home
// (testlab OwnHome), so caches are per host as on separate machines. The
// lab is removed at the end, on an error and on Ctrl-C.
//
//	go run ./internal/testlab/fanoutbench -bin ./perflab -sizes 10,25,50 -forks 10
//
// bench/fanout.sh builds perflab and runs it; docs/performance.md ("Many
// hosts at once") records the results.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/perflab/perflab/internal/testlab"
)

func main() {
	bin := flag.String("bin", "", "the perflab binary to run as the controller (and to copy to the hosts)")
	sizes := flag.String("sizes", "10,25,50", "numbers of hosts to run on, in this order; the lab has the largest")
	forks := flag.Int("forks", 10, "--forks")
	command := flag.String("command", "audit", "the perflab command to run on every host")
	prefix := flag.String("prefix", "fo", "lab namespace prefix")
	flag.Parse()
	if err := run(*bin, *sizes, *forks, *command, *prefix); err != nil {
		fmt.Fprintln(os.Stderr, "fanoutbench:", err)
		os.Exit(1)
	}
}

func run(bin, sizeList string, forks int, command, prefix string) error {
	if bin == "" {
		return fmt.Errorf("-bin PERFLAB is required (bench/fanout.sh builds one)")
	}
	bin, _ = filepath.Abs(bin)
	var ns []int
	for _, s := range strings.Split(sizeList, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 || n > 200 {
			return fmt.Errorf("-sizes %q: want numbers of hosts 1–200", sizeList)
		}
		ns = append(ns, n)
	}
	maxN := 0
	for _, n := range ns {
		maxN = max(maxN, n)
	}
	if err := testlab.Sweep(prefix); err != nil {
		fmt.Fprintln(os.Stderr, "sweeping old labs:", err)
	}
	specs := make([]testlab.HostSpec, maxN)
	start := time.Now()
	l, err := testlab.New(context.Background(), testlab.Options{Prefix: prefix, Hosts: specs, OwnHome: true})
	if err != nil {
		return err
	}
	defer l.Close()
	fmt.Printf("lab: %d hosts built in %.1f s\n", maxN, time.Since(start).Seconds())
	if err := l.TrustAll(); err != nil {
		return err
	}
	work := filepath.Join(l.Dir, "bench") // removed with the lab, also on Ctrl-C
	if err := os.Mkdir(work, 0o700); err != nil {
		return err
	}
	fmt.Printf("%-6s %-5s %-6s %9s %10s %9s  %s\n", "hosts", "forks", "cache", "wall", "peak RSS", "ctl CPU", "outcomes")
	// First on every host with nothing cached there (each gets a copy of
	// perflab), then each size again with the build cached on the hosts.
	if err := once(l, bin, work, command, maxN, forks, "cold"); err != nil {
		return err
	}
	for _, n := range ns {
		if err := once(l, bin, work, command, n, forks, "warm"); err != nil {
			return err
		}
	}
	return nil
}

// once runs the command on the first n hosts and prints one row.
func once(l *testlab.Lab, bin, work, command string, n, forks int, cache string) error {
	var ini strings.Builder
	ini.WriteString("[lab]\n")
	for _, h := range l.Hosts[:n] {
		fmt.Fprintf(&ini, "%s ansible_host=%s\n", h.Name, h.Addr)
	}
	fmt.Fprintf(&ini, "\n[all:vars]\nansible_user=root\nansible_ssh_private_key_file=%s\n", l.Key)
	inv := filepath.Join(work, fmt.Sprintf("lab-%d.ini", n))
	if err := os.WriteFile(inv, []byte(ini.String()), 0o600); err != nil {
		return err
	}
	db := filepath.Join(work, fmt.Sprintf("fleet-%d-%s.db", n, cache))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	c := l.Cmd(ctx, bin, command, "--inventory", inv, "--on", "all", "--forks", strconv.Itoa(forks), "--format", "json", "--db", db)
	var stdout, stderr bytes.Buffer
	c.Stdout, c.Stderr = &stdout, &stderr
	start := time.Now()
	err := c.Run()
	wall := time.Since(start)
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		return err
	}
	var rss int64
	if ru, ok := c.ProcessState.SysUsage().(*syscall.Rusage); ok {
		rss = ru.Maxrss // KiB
	}
	cpu := c.ProcessState.UserTime() + c.ProcessState.SystemTime()
	counts, err := outcomes(stdout.Bytes())
	if err != nil {
		return fmt.Errorf("%d hosts: %v\n%s", n, err, tail(stderr.String()))
	}
	fmt.Printf("%-6d %-5d %-6s %8.1fs %6.1f MiB %8.2fs  %s\n", n, forks, cache, wall.Seconds(), float64(rss)/1024, cpu.Seconds(), counts)
	if os.Getenv("FANOUT_VERBOSE") != "" {
		os.Stderr.Write(stderr.Bytes())
	}
	return nil
}

// outcomes counts the hosts of a fleet run's JSON by status.
func outcomes(out []byte) (string, error) {
	var rep struct {
		Hosts []struct {
			Status string             `json:"status"`
			Reason string             `json:"reason"`
			Phases map[string]float64 `json:"phases"`
		} `json:"hosts"`
	}
	if err := json.Unmarshal(out, &rep); err != nil {
		return "", fmt.Errorf("reading the fleet run's JSON: %v", err)
	}
	n := map[string]int{}
	reasons := map[string]bool{}
	phases := map[string][]float64{}
	for _, h := range rep.Hosts {
		for k, v := range h.Phases {
			phases[k] = append(phases[k], v)
		}
		n[h.Status]++
		if h.Reason != "" && h.Status != "ok" && h.Status != "findings" {
			reasons[h.Reason] = true
		}
	}
	var parts []string
	for s, k := range n {
		parts = append(parts, fmt.Sprintf("%d %s", k, s))
	}
	sort.Strings(parts)
	s := strings.Join(parts, ", ")
	for r := range reasons {
		s += "\n    reason: " + r
	}
	var names []string
	for k := range phases {
		names = append(names, k)
	}
	sort.Strings(names)
	if len(names) > 0 {
		s += "\n    per host, median (max) s:"
	}
	for _, k := range names {
		v := phases[k]
		sort.Float64s(v)
		s += fmt.Sprintf(" %s %.2f (%.2f)", k, v[len(v)/2], v[len(v)-1])
	}
	return s, nil
}

func tail(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > 20 {
		lines = lines[len(lines)-20:]
	}
	return strings.Join(lines, "\n")
}
