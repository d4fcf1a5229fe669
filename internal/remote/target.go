// Package remote runs perflab on other hosts over SSH: it resolves a
// target (`[user@]host[:port]` or a Host of ~/.ssh/config, with User,
// Port, HostName, IdentityFile and ProxyJump), authenticates with
// ssh-agent or identity files, checks the host key strictly against
// known_hosts (skeema/knownhosts negotiates the algorithms the file holds,
// golang/go#29286), copies this perflab build to a private temp directory
// when the remote has not the same build, runs a command there under a
// watchdog agent, streams its output back and removes everything it copied
// or started — also when the connection drops or the user presses Ctrl-C.
//
// The SSH transport is golang.org/x/crypto/ssh; ~/.ssh/config is parsed by
// kevinburke/ssh_config. What no library does — the self-copy, the
// framed stream between the local side and the remote agent, the
// watchdog and the stale-directory sweep — is written here.
package remote

import (
	"fmt"
	"io"
	"net"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/kevinburke/ssh_config"
)

// Target is a host to reach, as resolved from what the user wrote and
// ~/.ssh/config.
type Target struct {
	Name          string   // as written, without user@: the name runs are attributed to
	User          string   // login user
	Host          string   // address to dial (HostName from the config, or as written)
	Port          int      // 22 unless given
	IdentityFiles []string // from the config; default keys are tried too
	ProxyJump     []string // jump hosts in order, each as written in the config
	// ProxyCommand is the config's ProxyCommand with its tokens expanded
	// (proxy.go); "" when there is none.
	ProxyCommand string
}

// Addr is host:port.
func (t Target) Addr() string { return net.JoinHostPort(t.Host, strconv.Itoa(t.Port)) }

// String is user@name.
func (t Target) String() string { return t.User + "@" + t.Name }

// ParseTarget splits `[user@]host[:port]` (an IPv6 address in brackets)
// without consulting any configuration.
func ParseTarget(s string) (user, host string, port int, err error) {
	if s == "" || strings.ContainsAny(s, " \t\n/") {
		return "", "", 0, fmt.Errorf("bad target %q: want [user@]host[:port]", s)
	}
	if i := strings.LastIndex(s, "@"); i >= 0 {
		user, s = s[:i], s[i+1:]
		if user == "" {
			return "", "", 0, fmt.Errorf("bad target: empty user before @")
		}
	}
	host = s
	if h, p, err := net.SplitHostPort(s); err == nil {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return "", "", 0, fmt.Errorf("bad target %q: port %q is not 1–65535", s, p)
		}
		host, port = h, n
	} else if strings.Count(s, ":") == 1 {
		return "", "", 0, fmt.Errorf("bad target %q: %v", s, err)
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if host == "" {
		return "", "", 0, fmt.Errorf("bad target %q: no host", s)
	}
	return user, host, port, nil
}

// SSHConfig is the parsed ~/.ssh/config (nil when there is none).
type SSHConfig struct {
	cfg *ssh_config.Config
	// Warnings are the parts of the file perflab skipped (Match blocks it
	// cannot evaluate), one line each with the file and line.
	Warnings []string
}

// LoadSSHConfig reads path (default ~/.ssh/config); a missing file is an
// empty configuration.
func LoadSSHConfig(path string) (*SSHConfig, error) {
	if path == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return &SSHConfig{}, nil
		}
		path = filepath.Join(home, ".ssh", "config")
	}
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return &SSHConfig{}, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, 4<<20))
	if err != nil {
		return nil, err
	}
	data, warnings := skipMatch(path, data)
	cfg, err := ssh_config.DecodeBytes(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return &SSHConfig{cfg: cfg, Warnings: warnings}, nil
}

// skipMatch blanks the Match blocks the parser cannot evaluate (exec, user,
// localuser, canonical, final, several criteria …) so that one such block
// does not make every target fail; "Match all" and "Match host PATTERNS"
// stay. Each skipped block is one warning. Line numbers are kept.
func skipMatch(path string, data []byte) ([]byte, []string) {
	lines := strings.Split(string(data), "\n")
	var warnings []string
	skipping := false
	for i, l := range lines {
		f := strings.Fields(strings.ReplaceAll(l, "=", " "))
		if len(f) > 0 && (strings.EqualFold(f[0], "Host") || strings.EqualFold(f[0], "Match")) {
			skipping = false
			if strings.EqualFold(f[0], "Match") && !matchSupported(f[1:]) {
				skipping = true
				warnings = append(warnings, fmt.Sprintf("%s:%d: %q skipped: perflab evaluates only 'Match all' and 'Match host PATTERNS'; put what --on needs under a Host block", path, i+1, strings.TrimSpace(l)))
			}
		}
		if skipping {
			lines[i] = ""
		}
	}
	return []byte(strings.Join(lines, "\n")), warnings
}

func matchSupported(crit []string) bool {
	switch {
	case len(crit) == 1 && strings.EqualFold(crit[0], "all"):
		return true
	case len(crit) == 2 && strings.EqualFold(crit[0], "host"):
		return true
	}
	return false
}

func (c *SSHConfig) get(alias, key string) string {
	if c == nil || c.cfg == nil {
		return ""
	}
	v, _ := c.cfg.Get(alias, key)
	return v
}

func (c *SSHConfig) getAll(alias, key string) []string {
	if c == nil || c.cfg == nil {
		return nil
	}
	v, _ := c.cfg.GetAll(alias, key)
	return v
}

// Resolve turns what the user wrote into a Target: explicit user and port
// win over the config's, which win over the defaults (the local user, 22).
func (c *SSHConfig) Resolve(s string) (Target, error) {
	user, host, port, err := ParseTarget(s)
	if err != nil {
		return Target{}, err
	}
	t := Target{Name: host, User: user, Host: host, Port: port}
	if port != 0 && port != 22 {
		t.Name = net.JoinHostPort(host, strconv.Itoa(port))
	}
	if hn := c.get(host, "HostName"); hn != "" {
		t.Host = strings.NewReplacer("%%", "%", "%h", host).Replace(hn)
	}
	if t.User == "" {
		t.User = c.get(host, "User")
	}
	if t.User == "" {
		t.User = localUser()
	}
	if t.Port == 0 {
		if p := c.get(host, "Port"); p != "" {
			n, err := strconv.Atoi(p)
			if err != nil || n < 1 || n > 65535 {
				return Target{}, fmt.Errorf("~/.ssh/config: Port %q for %s is not 1–65535", p, host)
			}
			t.Port = n
		}
	}
	if t.Port == 0 {
		t.Port = 22
	}
	for _, f := range c.getAll(host, "IdentityFile") {
		t.IdentityFiles = append(t.IdentityFiles, expandTokens(expandHome(f), t, host))
	}
	if pc := c.get(host, "ProxyCommand"); pc != "" && !strings.EqualFold(pc, "none") {
		if pj := c.get(host, "ProxyJump"); pj != "" && !strings.EqualFold(pj, "none") {
			return Target{}, fmt.Errorf("~/.ssh/config gives %s both ProxyCommand and ProxyJump; keep one", host)
		}
		if t.ProxyCommand, err = expandProxyCommand(pc, t, host); err != nil {
			return Target{}, fmt.Errorf("~/.ssh/config for %s: %v", host, err)
		}
	}
	if pj := c.get(host, "ProxyJump"); pj != "" && !strings.EqualFold(pj, "none") {
		for _, j := range strings.Split(pj, ",") {
			if j = strings.TrimSpace(j); j != "" {
				t.ProxyJump = append(t.ProxyJump, strings.TrimPrefix(j, "ssh://"))
			}
		}
	}
	return t, nil
}

// Chain resolves s and its jump hosts into the hops to dial, in order, the
// target last, as OpenSSH does: a ProxyJump list J1,…,Jn of the target
// becomes `ssh -J J1,…,Jn-1 -W target Jn`, so J2…Jn are reached through the
// jumps before them (their own ProxyJump lines are overridden, as a
// command-line -J overrides a config file), while J1 is dialled as ssh
// would dial it on its own — with its own ProxyJump, recursively
// (bastion → inner-bastion → far when far jumps through inner and inner
// through bastion). A user or port written in a jump spec wins over the
// config's. A chain that loops back on itself is an error.
func (c *SSHConfig) Chain(s string) ([]Target, error) {
	return c.chain(s, map[string]bool{})
}

func (c *SSHConfig) chain(s string, seen map[string]bool) ([]Target, error) {
	if seen[s] || len(seen) > 16 {
		return nil, fmt.Errorf("ProxyJump loops back to %s", s)
	}
	seen[s] = true
	defer delete(seen, s)
	t, err := c.Resolve(s)
	if err != nil {
		return nil, err
	}
	return c.chainTarget(t, seen)
}

// ChainTarget is Chain for a target already resolved elsewhere (an
// inventory host): its ProxyJump hosts are resolved through the config.
func (c *SSHConfig) ChainTarget(t Target) ([]Target, error) {
	return c.chainTarget(t, map[string]bool{t.Name: true})
}

func (c *SSHConfig) chainTarget(t Target, seen map[string]bool) ([]Target, error) {
	if len(t.ProxyJump) == 0 {
		return []Target{t}, nil
	}
	hops, err := c.chain(t.ProxyJump[0], seen)
	if err != nil {
		return nil, fmt.Errorf("ProxyJump %s: %w", t.ProxyJump[0], err)
	}
	for _, j := range t.ProxyJump[1:] {
		jt, err := c.Resolve(j)
		if err != nil {
			return nil, fmt.Errorf("ProxyJump %s: %w", j, err)
		}
		jt.ProxyJump = nil
		hops = append(hops, jt)
	}
	return append(hops, t), nil
}

// expandTokens expands the % tokens OpenSSH allows in IdentityFile (and
// CertificateFile, ControlPath …) for target t reached as original:
// %% a literal %, %d the local home directory, %h the remote host name
// (after HostName), %n the host as written, %p the port, %r the remote
// user, %u the local user, %i the local uid, %l the local host name and
// %L its first component. Unknown tokens are left as written.
func expandTokens(s string, t Target, original string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	home, _ := os.UserHomeDir()
	local, _ := os.Hostname()
	short, _, _ := strings.Cut(local, ".")
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '%' || i == len(s)-1 {
			b.WriteByte(s[i])
			continue
		}
		i++
		switch s[i] {
		case '%':
			b.WriteByte('%')
		case 'd':
			b.WriteString(home)
		case 'h':
			b.WriteString(t.Host)
		case 'n':
			b.WriteString(original)
		case 'p':
			b.WriteString(strconv.Itoa(t.Port))
		case 'r':
			b.WriteString(t.User)
		case 'u':
			b.WriteString(localUser())
		case 'i':
			b.WriteString(strconv.Itoa(os.Getuid()))
		case 'l':
			b.WriteString(local)
		case 'L':
			b.WriteString(short)
		default:
			b.WriteByte('%')
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

func localUser() string {
	if u, err := user.Current(); err == nil {
		return u.Username
	}
	return os.Getenv("USER")
}

func expandHome(p string) string {
	if rest, ok := strings.CutPrefix(p, "~/"); ok {
		if home, err := os.UserHomeDir(); err == nil {
			return filepath.Join(home, rest)
		}
	}
	return p
}
