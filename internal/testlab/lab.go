// Package testlab builds a lab of real "hosts" on one machine for tests
// that need two or more Linux hosts: each host is a network namespace with
// its own UTS namespace (hostname), its own sshd (Debian's openssh-server,
// started here with its own host key and config, listening only on the
// namespace's address), its own per-namespace sysctls, optionally its own
// CPU cgroup quota, a tc rate limit on its link and nftables random loss.
//
// Topology: a controller namespace (the "test's namespace", where the
// client side of every test runs) holds a bridge; every host namespace is
// joined to it by a veth pair. Addresses are 10.77.0.0/24 inside namespaces
// this package creates, so nothing leaves the machine and two labs never
// see each other.
//
// Shaping uses tc tbf (no netem, no fq on the target kernel) and loss uses
// nftables' random number generator (`numgen random mod N`); no test may
// rely on injected delay.
//
// A lab tears itself down on Close, when the test ends (Start registers a
// cleanup), and on SIGTERM/SIGINT of the test process; Sweep removes labs
// left behind by a killed process (matched by name prefix and creator pid).
//
// No library manages namespaces, sshd instances and qdiscs together for
// tests, so this package drives ip, tc, nft and sshd directly.
package testlab

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Subnet is the lab's address prefix; the controller is .1, host i is .(10+i).
const Subnet = "10.77.0"

// HostSpec configures one host of the lab.
type HostSpec struct {
	// Name is the host's name (hostname in its UTS namespace and its Host
	// alias in the lab's ssh config). Default h1, h2, …
	Name string
	// Sysctls are written in the host's network namespace (net.* keys are
	// per namespace), e.g. "net.core.somaxconn": "128".
	Sysctls map[string]string
	// CPUQuota limits the host's processes to this many CPUs (0.5 = half a
	// CPU) with a cgroup (cpu.max on v2, cpu.cfs_quota_us on v1); 0 = none.
	CPUQuota float64
	// RateMbit limits the host's link in both directions with tbf; 0 = none.
	RateMbit int
	// LossPct drops this percentage of the host's packets at random in
	// both directions with nftables; 0 = none.
	LossPct float64
}

// Options configures a lab.
type Options struct {
	// Prefix starts every namespace and cgroup name (Sweep matches it).
	// Default "plab".
	Prefix string
	Hosts  []HostSpec
	// OwnHome gives every host its own empty home directory for root
	// (bind-mounted over /root in the host's mount namespace), as separate
	// machines have: its own ~/.cache (perflab's cached build), and none
	// of this machine's shell start-up files run in its SSH sessions.
	OwnHome bool
}

// Host is one running lab host.
type Host struct {
	Name    string
	NS      string // network namespace name (under /run/netns)
	Addr    string // its IPv4 address
	Port    int    // sshd port (22)
	Dir     string // its sshd files
	HostKey string // public host key, authorized_keys format ("ssh-ed25519 AAAA…")
	Cgroup  string // cgroup directory or ""
	lab     *Lab
	ctlIf   string // its veth end in the controller namespace
	sshd    *exec.Cmd
}

// Lab is a running set of hosts.
type Lab struct {
	Name  string // prefix-pid-seq
	Ctl   string // controller namespace
	Dir   string // keys, configs; HOME for clients is Dir/home
	Home  string // a HOME with .ssh/{id_ed25519,config,known_hosts}
	Key   string // client private key path
	Hosts []*Host

	mu     sync.Mutex
	closed bool
}

var (
	seqMu sync.Mutex
	seq   int
	open  = map[*Lab]bool{}
	sigOn sync.Once
)

// New builds a lab. On error everything it created is removed.
func New(ctx context.Context, o Options) (l *Lab, err error) {
	if o.Prefix == "" {
		o.Prefix = "plab"
	}
	if len(o.Hosts) == 0 || len(o.Hosts) > 200 {
		return nil, fmt.Errorf("testlab: %d hosts (want 1–200)", len(o.Hosts))
	}
	for _, t := range []string{"ip", "tc", "nft", "ethtool", "ssh-keygen", "unshare", SSHD} {
		if _, err := exec.LookPath(t); err != nil {
			return nil, fmt.Errorf("testlab: %s not installed (apt-get install iproute2 nftables openssh-server util-linux)", t)
		}
	}
	seqMu.Lock()
	seq++
	name := fmt.Sprintf("%s-%d-%d", o.Prefix, os.Getpid(), seq)
	seqMu.Unlock()
	dir, err := os.MkdirTemp("", name+".")
	if err != nil {
		return nil, err
	}
	l = &Lab{Name: name, Ctl: name + "-ctl", Dir: dir, Home: filepath.Join(dir, "home")}
	register(l)
	defer func() {
		if err != nil {
			l.Close()
			l = nil
		}
	}()
	if err := l.setupCtl(ctx); err != nil {
		return l, err
	}
	if err := l.clientKey(ctx); err != nil {
		return l, err
	}
	for i, spec := range o.Hosts {
		if spec.Name == "" {
			spec.Name = "h" + strconv.Itoa(i+1)
		}
		h, err := l.addHost(ctx, i, spec, o.OwnHome)
		if err != nil {
			return l, fmt.Errorf("testlab: host %s: %w", spec.Name, err)
		}
		l.Hosts = append(l.Hosts, h)
	}
	if err := l.writeSSHConfig(); err != nil {
		return l, err
	}
	for _, h := range l.Hosts {
		if err := h.waitSSH(ctx); err != nil {
			return l, err
		}
	}
	return l, nil
}

// SSHD is the OpenSSH server binary.
var SSHD = "/usr/sbin/sshd"

func (l *Lab) setupCtl(ctx context.Context) error {
	if err := run(ctx, "ip", "netns", "add", l.Ctl); err != nil {
		return err
	}
	return l.inCtl(ctx,
		[]string{"ip", "link", "set", "lo", "up"},
		[]string{"ip", "link", "add", "br0", "type", "bridge"},
		[]string{"ip", "addr", "add", Subnet + ".1/24", "dev", "br0"},
		[]string{"ip", "link", "set", "br0", "up"},
	)
}

func (l *Lab) inCtl(ctx context.Context, cmds ...[]string) error {
	for _, c := range cmds {
		if err := run(ctx, "ip", append([]string{"netns", "exec", l.Ctl}, c...)...); err != nil {
			return err
		}
	}
	return nil
}

func (l *Lab) clientKey(ctx context.Context) error {
	ssh := filepath.Join(l.Home, ".ssh")
	if err := os.MkdirAll(ssh, 0o700); err != nil {
		return err
	}
	l.Key = filepath.Join(ssh, "id_ed25519")
	if err := run(ctx, "ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "perflab-testlab", "-f", l.Key); err != nil {
		return err
	}
	pub, err := os.ReadFile(l.Key + ".pub")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(l.Dir, "authorized_keys"), pub, 0o600)
}

func (l *Lab) addHost(ctx context.Context, i int, spec HostSpec, ownHome bool) (*Host, error) {
	h := &Host{
		Name: spec.Name, NS: fmt.Sprintf("%s-h%d", l.Name, i+1),
		Addr: fmt.Sprintf("%s.%d", Subnet, 10+i), Port: 22,
		Dir: filepath.Join(l.Dir, spec.Name), lab: l, ctlIf: fmt.Sprintf("v%d", i+1),
	}
	if err := os.MkdirAll(h.Dir, 0o700); err != nil {
		return h, err
	}
	if err := run(ctx, "ip", "netns", "add", h.NS); err != nil {
		return h, err
	}
	if err := run(ctx, "ip", "link", "add", h.ctlIf, "netns", l.Ctl, "type", "veth", "peer", "name", "eth0", "netns", h.NS); err != nil {
		return h, err
	}
	if err := l.inCtl(ctx,
		[]string{"ip", "link", "set", h.ctlIf, "master", "br0"},
		[]string{"ip", "link", "set", h.ctlIf, "up"},
	); err != nil {
		return h, err
	}
	if err := h.in(ctx,
		[]string{"ip", "link", "set", "lo", "up"},
		[]string{"ip", "addr", "add", h.Addr + "/24", "dev", "eth0"},
		[]string{"ip", "link", "set", "eth0", "up"},
	); err != nil {
		return h, err
	}
	for k, v := range spec.Sysctls {
		if err := h.in(ctx, []string{"sysctl", "-q", "-w", k + "=" + v}); err != nil {
			return h, err
		}
	}
	if spec.RateMbit > 0 {
		if err := h.SetRate(ctx, spec.RateMbit); err != nil {
			return h, err
		}
	}
	if spec.LossPct > 0 {
		if err := h.SetLoss(ctx, spec.LossPct); err != nil {
			return h, err
		}
	}
	if err := h.startSSHD(ctx, ownHome); err != nil {
		return h, err
	}
	if spec.CPUQuota > 0 {
		cg, err := newCgroup(h.NS, spec.CPUQuota)
		if err != nil {
			return h, err
		}
		h.Cgroup = cg
		if err := os.WriteFile(filepath.Join(cg, "cgroup.procs"), []byte(strconv.Itoa(h.sshd.Process.Pid)), 0o644); err != nil {
			return h, fmt.Errorf("moving sshd into %s: %w", cg, err)
		}
	}
	return h, nil
}

// in runs commands in the host's network namespace.
func (h *Host) in(ctx context.Context, cmds ...[]string) error {
	for _, c := range cmds {
		if err := run(ctx, "ip", append([]string{"netns", "exec", h.NS}, c...)...); err != nil {
			return err
		}
	}
	return nil
}

// Cmd returns a command that runs in the host's network namespace (with
// the lab's hostname only when started through its sshd).
func (h *Host) Cmd(ctx context.Context, name string, args ...string) *exec.Cmd {
	return exec.CommandContext(ctx, "ip", append([]string{"netns", "exec", h.NS, name}, args...)...)
}

// Cmd returns a command that runs in the controller namespace with HOME set
// to the lab's client home (its ssh config, key and known_hosts).
func (l *Lab) Cmd(ctx context.Context, name string, args ...string) *exec.Cmd {
	c := exec.CommandContext(ctx, "ip", append([]string{"netns", "exec", l.Ctl, "sh", "-c", cgroupRemount() + `exec "$0" "$@"`, name}, args...)...)
	c.Env = append(os.Environ(), "HOME="+l.Home, "SSH_AUTH_SOCK=")
	return c
}

func (h *Host) startSSHD(ctx context.Context, ownHome bool) error {
	key := filepath.Join(h.Dir, "ssh_host_ed25519_key")
	if err := run(ctx, "ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", h.Name, "-f", key); err != nil {
		return err
	}
	pub, err := os.ReadFile(key + ".pub")
	if err != nil {
		return err
	}
	f := strings.Fields(string(pub))
	h.HostKey = f[0] + " " + f[1]
	cfg := strings.Join([]string{
		"ListenAddress " + h.Addr + ":" + strconv.Itoa(h.Port),
		"HostKey " + key,
		"PidFile " + filepath.Join(h.Dir, "sshd.pid"),
		"AuthorizedKeysFile " + filepath.Join(h.lab.Dir, "authorized_keys"),
		"PermitRootLogin prohibit-password",
		"PasswordAuthentication no",
		"KbdInteractiveAuthentication no",
		"UsePAM no",
		"StrictModes no",
		"MaxStartups 100",
		"MaxSessions 100",
		"Subsystem sftp internal-sftp", // Ansible copies files over SFTP
		"LogLevel ERROR",
		"",
	}, "\n")
	cfgPath := filepath.Join(h.Dir, "sshd_config")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		return err
	}
	// sshd's privilege separation directory (Debian creates it when the
	// service starts; the lab does not start the service).
	if err := os.MkdirAll("/run/sshd", 0o755); err != nil {
		return err
	}
	// unshare --uts gives the host its own hostname; sshd -D stays in the
	// foreground so the lab owns the process. ip netns exec mounts a
	// sysfs of the namespace over /sys, which hides the cgroup mounts:
	// they are mounted again there so the host sees its cgroup (and its
	// quota) as a real host would.
	// With OwnHome, /root is the host's own directory in that mount
	// namespace (ip netns exec makes it a slave of the machine's: the
	// bind mount is not seen outside).
	script := cgroupRemount() + `hostname "$1" && exec "$2" -D -e -f "$3"`
	args := []string{"netns", "exec", h.NS, "unshare", "--uts", "sh", "-c", script, "sh", h.Name, SSHD, cfgPath}
	if ownHome {
		dir := filepath.Join(h.Dir, "root")
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return err
		}
		script = cgroupRemount() + `mount --bind "$4" /root && ` + `hostname "$1" && exec "$2" -D -e -f "$3"`
		args = []string{"netns", "exec", h.NS, "unshare", "--uts", "sh", "-c", script, "sh", h.Name, SSHD, cfgPath, dir}
	}
	c := exec.Command("ip", args...)
	logf, err := os.Create(filepath.Join(h.Dir, "sshd.log"))
	if err != nil {
		return err
	}
	c.Stdout, c.Stderr = logf, logf
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	if err := c.Start(); err != nil {
		logf.Close()
		return err
	}
	logf.Close()
	h.sshd = c
	go c.Wait() //nolint:errcheck // reaped; the lab kills it on Close
	return nil
}

func (h *Host) waitSSH(ctx context.Context) error {
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := h.lab.Dial(ctx, "tcp", net.JoinHostPort(h.Addr, strconv.Itoa(h.Port)))
		if err == nil {
			c.Close()
			return nil
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(filepath.Join(h.Dir, "sshd.log"))
			return fmt.Errorf("testlab: sshd of %s not listening after 10s: %v; log: %s", h.Name, err, strings.TrimSpace(string(log)))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// writeSSHConfig writes the client's ~/.ssh/config with a Host alias per
// lab host (HostName, User root, the lab key). known_hosts is left empty:
// tests decide whether a host is known (TrustAll, or the TOFU flag).
func (l *Lab) writeSSHConfig() error {
	var b strings.Builder
	for _, h := range l.Hosts {
		fmt.Fprintf(&b, "Host %s\n  HostName %s\n  Port %d\n  User root\n  IdentityFile %s\n\n", h.Name, h.Addr, h.Port, l.Key)
	}
	if err := os.WriteFile(filepath.Join(l.Home, ".ssh", "config"), []byte(b.String()), 0o600); err != nil {
		return err
	}
	return os.WriteFile(l.KnownHosts(), nil, 0o600)
}

// KnownHosts is the client's known_hosts path.
func (l *Lab) KnownHosts() string { return filepath.Join(l.Home, ".ssh", "known_hosts") }

// KnownHostsLine is h's known_hosts line (the form ssh-keyscan prints).
func (h *Host) KnownHostsLine() string {
	if h.Port == 22 {
		return h.Addr + " " + h.HostKey
	}
	return fmt.Sprintf("[%s]:%d %s", h.Addr, h.Port, h.HostKey)
}

// TrustAll writes every host's key into the client's known_hosts.
func (l *Lab) TrustAll() error {
	var b strings.Builder
	for _, h := range l.Hosts {
		b.WriteString(h.KnownHostsLine() + "\n")
	}
	return os.WriteFile(l.KnownHosts(), []byte(b.String()), 0o600)
}

// Host returns the host named name.
func (l *Lab) Host(name string) *Host {
	for _, h := range l.Hosts {
		if h.Name == name {
			return h
		}
	}
	return nil
}

// Close removes everything the lab created: processes in its namespaces,
// cgroups, namespaces (and with them the veths and bridge), files. It is
// safe to call more than once.
func (l *Lab) Close() error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return nil
	}
	l.closed = true
	l.mu.Unlock()
	unregister(l)
	var errs []error
	for _, h := range l.Hosts {
		if h.sshd != nil && h.sshd.Process != nil {
			syscall.Kill(-h.sshd.Process.Pid, syscall.SIGKILL) //nolint:errcheck
		}
	}
	errs = append(errs, removeNamespaces(l.Name))
	if err := os.RemoveAll(l.Dir); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

func register(l *Lab) {
	seqMu.Lock()
	open[l] = true
	seqMu.Unlock()
	sigOn.Do(func() {
		ch := make(chan os.Signal, 1)
		signal.Notify(ch, syscall.SIGTERM, syscall.SIGINT)
		go func() {
			s := <-ch
			seqMu.Lock()
			labs := make([]*Lab, 0, len(open))
			for l := range open {
				labs = append(labs, l)
			}
			seqMu.Unlock()
			for _, l := range labs {
				l.Close()
			}
			fmt.Fprintf(os.Stderr, "testlab: %v: labs removed\n", s)
			os.Exit(2)
		}()
	})
}

func unregister(l *Lab) {
	seqMu.Lock()
	delete(open, l)
	seqMu.Unlock()
}

func run(ctx context.Context, name string, args ...string) error {
	out, err := exec.CommandContext(ctx, name, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %v: %s", name, strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}
