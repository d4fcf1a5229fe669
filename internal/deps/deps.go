// Package deps knows the external tools perflab drives: which suites need
// them, which binary proves they are installed, how to ask their version,
// and which package provides them on each distribution family (Debian/Ubuntu
// apt, RHEL/Fedora/openEuler/Alibaba Cloud Linux dnf or yum, SUSE zypper).
// Lookups spawn nothing; Version runs the tool's own version flag.
package deps

import (
	"context"
	"fmt"
	"os/exec"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/perflab/perflab/internal/hostfs"
)

// Tool is one external program.
type Tool struct {
	Name        string            // what users call it
	Bins        []string          // any of these on PATH means installed
	VersionArgs []string          // how to ask its version
	Packages    map[string]string // package manager → package(s), space separated
	Suites      []string          // bench suites that use it
	Why         string
}

// Catalogue is every tool perflab can drive, in display order.
var Catalogue = []Tool{
	{Name: "sysbench", Bins: []string{"sysbench"}, VersionArgs: []string{"--version"},
		Packages: map[string]string{"apt": "sysbench", "dnf": "sysbench", "yum": "sysbench", "zypper": "sysbench"},
		Suites:   []string{"baseline", "cpu", "disk", "db"}, Why: "cpu prime, memory, threads, mutex, fileio, oltp_point_select"},
	{Name: "fio", Bins: []string{"fio"}, VersionArgs: []string{"--version"},
		Packages: map[string]string{"apt": "fio", "dnf": "fio", "yum": "fio", "zypper": "fio"},
		Suites:   []string{"baseline", "disk"}, Why: "sequential and random I/O with JSON output"},
	{Name: "dd", Bins: []string{"dd"}, VersionArgs: []string{"--version"},
		Packages: map[string]string{"apt": "coreutils", "dnf": "coreutils", "yum": "coreutils", "zypper": "coreutils"},
		Suites:   []string{"baseline", "disk"}, Why: "sequential write with conv=fdatasync and oflag=direct, read after dropping the file's cache"},
	{Name: "nginx", Bins: []string{"nginx"}, VersionArgs: []string{"-v"},
		Packages: map[string]string{"apt": "nginx-light", "dnf": "nginx", "yum": "nginx", "zypper": "nginx"},
		Suites:   []string{"baseline", "web"}, Why: "the server for wrk's short- and long-connection QPS"},
	{Name: "wrk", Bins: []string{"wrk"}, VersionArgs: []string{"--version"},
		Packages: map[string]string{"apt": "wrk", "dnf": "wrk", "yum": "wrk", "zypper": "wrk"},
		Suites:   []string{"baseline", "web"}, Why: "HTTP load generator"},
	{Name: "redis-server", Bins: []string{"redis-server"}, VersionArgs: []string{"--version"},
		Packages: map[string]string{"apt": "redis-server", "dnf": "redis", "yum": "redis", "zypper": "redis"},
		Suites:   []string{"baseline", "kv"}, Why: "the server for redis-benchmark"},
	{Name: "redis-benchmark", Bins: []string{"redis-benchmark"}, VersionArgs: []string{"--version"},
		Packages: map[string]string{"apt": "redis-tools", "dnf": "redis", "yum": "redis", "zypper": "redis"},
		Suites:   []string{"baseline", "kv"}, Why: "ping/set/get throughput"},
	{Name: "mariadb", Bins: []string{"mariadbd", "mysqld"}, VersionArgs: []string{"--version"},
		Packages: map[string]string{"apt": "mariadb-server", "dnf": "mariadb-server", "yum": "mariadb-server", "zypper": "mariadb"},
		Suites:   []string{"baseline", "db"}, Why: "the server for sysbench oltp_point_select"},
	{Name: "etcd", Bins: []string{"etcd"}, VersionArgs: []string{"--version"},
		Packages: map[string]string{"apt": "etcd-server", "dnf": "etcd", "yum": "etcd", "zypper": "etcd"},
		Suites:   []string{"baseline", "etcd"}, Why: "the server for the etcd put/range/txn/watch workloads"},
	{Name: "etcdctl", Bins: []string{"etcdctl"}, VersionArgs: []string{"version"},
		Packages: map[string]string{"apt": "etcd-client", "dnf": "etcd", "yum": "etcd", "zypper": "etcdctl"},
		Suites:   []string{"etcd"}, Why: "etcdctl check perf, etcd's standard pass/fail"},
	{Name: "qperf", Bins: []string{"qperf"}, VersionArgs: []string{"--version"},
		Packages: map[string]string{"apt": "qperf", "dnf": "qperf", "yum": "qperf", "zypper": "qperf"},
		Suites:   []string{"baseline", "net"}, Why: "tcp_lat, tcp_bw, udp_lat, udp_bw"},
	{Name: "iperf3", Bins: []string{"iperf3"}, VersionArgs: []string{"--version"},
		Packages: map[string]string{"apt": "iperf3", "dnf": "iperf3", "yum": "iperf3", "zypper": "iperf"},
		Suites:   []string{"net"}, Why: "TCP/UDP bandwidth with JSON output"},
	{Name: "sockperf", Bins: []string{"sockperf"}, VersionArgs: []string{"--version"},
		Packages: map[string]string{"apt": "sockperf", "dnf": "sockperf", "yum": "sockperf", "zypper": "sockperf"},
		Suites:   []string{"net"}, Why: "ping-pong latency percentiles"},
	{Name: "stress-ng", Bins: []string{"stress-ng"}, VersionArgs: []string{"--version"},
		Packages: map[string]string{"apt": "stress-ng", "dnf": "stress-ng", "yum": "stress-ng", "zypper": "stress-ng"},
		Suites:   []string{"cpu"}, Why: "stressor bogo-ops metrics"},
	{Name: "perf", Bins: []string{"perf"}, VersionArgs: []string{"--version"},
		Packages: map[string]string{"apt": "linux-perf", "dnf": "perf", "yum": "perf", "zypper": "perf"},
		Suites:   []string{"profile"}, Why: "perflab profile records with perf record -g"},
}

// Lookup finds a tool by name or binary.
func Lookup(name string) (Tool, bool) {
	for _, t := range Catalogue {
		if t.Name == name {
			return t, true
		}
		for _, b := range t.Bins {
			if b == name {
				return t, true
			}
		}
	}
	return Tool{}, false
}

// ForSuite returns the tools a suite uses ("" or "all" for every tool).
func ForSuite(suite string) []Tool {
	var out []Tool
	for _, t := range Catalogue {
		if suite == "" || suite == "all" {
			out = append(out, t)
			continue
		}
		for _, s := range t.Suites {
			if s == suite {
				out = append(out, t)
				break
			}
		}
	}
	return out
}

// Suites lists every suite any tool belongs to.
func Suites() []string {
	seen := map[string]bool{}
	for _, t := range Catalogue {
		for _, s := range t.Suites {
			seen[s] = true
		}
	}
	out := make([]string, 0, len(seen))
	for s := range seen {
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

// Path returns where the tool is installed, or "".
func (t Tool) Path() string {
	for _, b := range t.Bins {
		if p, err := exec.LookPath(b); err == nil {
			return p
		}
	}
	return ""
}

var versionRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\d+\.\d+(\.\d+)?`) })

// Version runs the tool's version flag (2 s limit) and extracts a version.
func (t Tool) Version(ctx context.Context) (string, error) {
	p := t.Path()
	if p == "" {
		return "", fmt.Errorf("%s is not installed", t.Name)
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	out, _ := exec.CommandContext(ctx, p, t.VersionArgs...).CombinedOutput() // wrk --version exits 1
	return ParseVersion(string(out))
}

// ParseVersion extracts the first dotted version from a tool's banner.
func ParseVersion(banner string) (string, error) {
	for _, line := range strings.Split(banner, "\n") {
		if m := versionRE().FindString(line); m != "" {
			return m, nil
		}
	}
	return "", fmt.Errorf("no version in %q", firstLine(banner))
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

// PackageManager picks apt, dnf, yum or zypper from /etc/os-release.
func PackageManager(fs hostfs.FS) string {
	b, err := fs.ReadFile("/etc/os-release")
	if err != nil {
		return "apt"
	}
	kv := map[string]string{}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, "=")
		if ok {
			kv[k] = strings.Trim(v, `"'`)
		}
	}
	ids := strings.Fields(kv["ID"] + " " + kv["ID_LIKE"])
	for _, id := range ids {
		switch id {
		case "debian", "ubuntu":
			return "apt"
		case "suse", "opensuse", "sles", "opensuse-leap", "opensuse-tumbleweed":
			return "zypper"
		case "rhel", "centos", "fedora", "rocky", "almalinux", "openEuler", "openeuler", "anolis", "alinux", "ol", "amzn":
			if strings.HasPrefix(kv["VERSION_ID"], "7") && id != "fedora" && id != "openEuler" && id != "openeuler" {
				return "yum"
			}
			return "dnf"
		}
	}
	return "apt"
}

// InstallCommand is the command that installs tools with pm.
func InstallCommand(pm string, tools []Tool) []string {
	seen := map[string]bool{}
	var pkgs []string
	for _, t := range tools {
		for _, p := range strings.Fields(t.Packages[pm]) {
			if !seen[p] {
				seen[p] = true
				pkgs = append(pkgs, p)
			}
		}
	}
	if len(pkgs) == 0 {
		return nil
	}
	switch pm {
	case "apt":
		return append([]string{"apt-get", "install", "-y", "--no-install-recommends"}, pkgs...)
	case "zypper":
		return append([]string{"zypper", "--non-interactive", "install"}, pkgs...)
	default:
		return append([]string{pm, "install", "-y"}, pkgs...)
	}
}

// InstallHint is the one-line advice for a missing tool on this host.
func InstallHint(fs hostfs.FS, name string) string {
	t, ok := Lookup(name)
	if !ok {
		return "install " + name
	}
	cmd := InstallCommand(PackageManager(fs), []Tool{t})
	if cmd == nil {
		return "install " + name
	}
	return "install it: " + strings.Join(cmd, " ") + " (or: perflab deps install)"
}
