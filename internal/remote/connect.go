package remote

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/skeema/knownhosts"
	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"
	xknownhosts "golang.org/x/crypto/ssh/knownhosts"
)

// Options configure a connection.
type Options struct {
	// KnownHosts is the known_hosts file (default ~/.ssh/known_hosts).
	KnownHosts string
	// AcceptNewHostKey trusts and records the key of a host not yet in
	// KnownHosts (trust on first use). A changed key is refused anyway.
	AcceptNewHostKey bool
	// Config is ~/.ssh/config; nil loads it.
	Config *SSHConfig
	// Dial opens the TCP connection to the first hop (default net.Dialer).
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// ConnectTimeout bounds dialling and the SSH handshake (default 10 s).
	ConnectTimeout time.Duration
	// Notes receives one-line notes (a host key recorded). nil discards.
	Notes io.Writer
	// Resolved, when set, is the target already resolved (from an
	// inventory: address, user, port, key file); the target string is then
	// only its name and ~/.ssh/config is not consulted for it.
	Resolved *Target
}

func (o *Options) defaults() error {
	if o.Config == nil {
		c, err := LoadSSHConfig("")
		if err != nil {
			return err
		}
		notes := o.Notes
		if notes == nil {
			notes = os.Stderr
		}
		for _, w := range c.Warnings {
			fmt.Fprintln(notes, "perflab: warning: "+w)
		}
		o.Config = c
	}
	if o.KnownHosts == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return fmt.Errorf("no home directory for ~/.ssh/known_hosts: %v", err)
		}
		o.KnownHosts = filepath.Join(home, ".ssh", "known_hosts")
	}
	if o.Dial == nil {
		var d net.Dialer
		o.Dial = d.DialContext
	}
	if o.ConnectTimeout == 0 {
		o.ConnectTimeout = 10 * time.Second
	}
	if o.Notes == nil {
		o.Notes = io.Discard
	}
	return nil
}

// Client is an SSH connection to a target (through its jump hosts).
type Client struct {
	*ssh.Client
	Target Target
	Input  string // the target as written

	hops []*ssh.Client
	once sync.Once
	lost chan struct{}
	done chan struct{}
}

// Connect resolves target and opens an authenticated SSH connection with a
// strictly checked host key. Errors are *Error with one-line messages.
func Connect(ctx context.Context, target string, o Options) (*Client, error) {
	if err := o.defaults(); err != nil {
		return nil, &Error{Kind: KindBadTarget, Target: target, Msg: err.Error()}
	}
	t, err := o.resolve(target)
	if err != nil {
		return nil, &Error{Kind: KindBadTarget, Target: target, Msg: err.Error(), Hint: "write [user@]host[:port] or a Host of ~/.ssh/config"}
	}
	c := &Client{Target: t, Input: target, lost: make(chan struct{}), done: make(chan struct{})}
	hops, err := o.Config.ChainTarget(t)
	if err != nil {
		return nil, &Error{Kind: KindBadTarget, Target: target, Msg: err.Error()}
	}
	var prev *ssh.Client
	for i, ht := range hops {
		cl, err := dialHop(ctx, prev, ht, target, i < len(hops)-1, &o)
		if err != nil {
			c.closeHops()
			return nil, err
		}
		c.hops = append(c.hops, cl)
		prev = cl
	}
	c.Client = prev
	go c.keepalive()
	return c, nil
}

func (o *Options) resolve(target string) (Target, error) {
	if o.Resolved == nil {
		return o.Config.Resolve(target)
	}
	t := *o.Resolved
	if t.Name == "" {
		t.Name = target
	}
	if t.User == "" {
		t.User = localUser()
	}
	if t.Port == 0 {
		t.Port = 22
	}
	if t.Host == "" {
		return Target{}, fmt.Errorf("no address for %s", target)
	}
	return t, nil
}

func dialHop(ctx context.Context, via *ssh.Client, t Target, input string, jump bool, o *Options) (*ssh.Client, error) {
	name := input
	if jump {
		name = input + " (jump host " + t.Name + ")"
	}
	dctx, cancel := context.WithTimeout(ctx, o.ConnectTimeout)
	defer cancel()
	var conn net.Conn
	var err error
	switch {
	case via == nil && t.ProxyCommand != "":
		conn, err = proxyConn(t.ProxyCommand)
	case via == nil:
		conn, err = o.Dial(dctx, "tcp", t.Addr())
	default:
		conn, err = dialVia(dctx, via, t.Addr())
	}
	if err != nil {
		return nil, dialError(name, t.Addr(), err)
	}
	hk, algos, err := hostKeyCheck(t, name, o)
	if err != nil {
		conn.Close()
		return nil, err
	}
	signers, tried := authSigners(t)
	cfg := &ssh.ClientConfig{
		User:              t.User,
		Auth:              []ssh.AuthMethod{ssh.PublicKeysCallback(func() ([]ssh.Signer, error) { return signers, nil })},
		HostKeyCallback:   hk.callback,
		HostKeyAlgorithms: algos,
		Timeout:           o.ConnectTimeout,
	}
	// The handshake must not outlive the connect timeout either.
	if d, ok := dctx.Deadline(); ok {
		conn.SetDeadline(d)
	}
	sc, chans, reqs, err := ssh.NewClientConn(conn, t.Addr(), cfg)
	if err != nil {
		conn.Close()
		if hk.err != nil {
			return nil, hk.err
		}
		if strings.Contains(err.Error(), "unable to authenticate") {
			return nil, &Error{Kind: KindAuth, Target: name, Err: err,
				Msg:  fmt.Sprintf("permission denied for user %q (publickey; tried %s)", t.User, tried),
				Hint: "check the user name, and that one of these keys is in that user's authorized_keys"}
		}
		if isTimeout(err) || errors.Is(err, io.EOF) {
			return nil, &Error{Kind: KindUnreachable, Target: name, Err: err,
				Msg: "SSH handshake with " + t.Addr() + " failed: " + lastPart(err), Hint: "is that port an SSH server?"}
		}
		return nil, &Error{Kind: KindFailed, Target: name, Err: err, Msg: "SSH handshake with " + t.Addr() + ": " + lastPart(err)}
	}
	conn.SetDeadline(time.Time{})
	if hk.note != "" {
		fmt.Fprintln(o.Notes, hk.note)
	}
	return ssh.NewClient(sc, chans, reqs), nil
}

func dialVia(ctx context.Context, via *ssh.Client, addr string) (net.Conn, error) {
	type res struct {
		c   net.Conn
		err error
	}
	ch := make(chan res, 1)
	go func() {
		c, err := via.Dial("tcp", addr)
		ch <- res{c, err}
	}()
	select {
	case r := <-ch:
		return r.c, r.err
	case <-ctx.Done():
		go func() {
			if r := <-ch; r.c != nil {
				r.c.Close()
			}
		}()
		return nil, ctx.Err()
	}
}

// hostKeyChecker remembers why it refused a key: x/crypto wraps the
// callback's error in a handshake error.
type hostKeyChecker struct {
	callback ssh.HostKeyCallback
	err      error
	note     string
}

func hostKeyCheck(t Target, name string, o *Options) (*hostKeyChecker, []string, error) {
	var db *knownhosts.HostKeyDB
	if _, err := os.Stat(o.KnownHosts); err == nil {
		if db, err = knownhosts.NewDB(o.KnownHosts); err != nil {
			return nil, nil, &Error{Kind: KindBadTarget, Target: name, Msg: "reading " + o.KnownHosts + ": " + err.Error(), Hint: "fix or remove the malformed line"}
		}
	}
	hk := &hostKeyChecker{}
	var algos []string
	if db != nil {
		algos = db.HostKeyAlgorithms(t.Addr())
	}
	hk.callback = func(hostname string, remote net.Addr, key ssh.PublicKey) error {
		var err error
		if db != nil {
			err = db.HostKeyCallback()(hostname, remote, key)
			if err == nil {
				return nil
			}
		}
		fp := ssh.FingerprintSHA256(key)
		line := knownhosts.Line([]string{knownhosts.Normalize(hostname)}, key)
		if db != nil && knownhosts.IsHostKeyChanged(err) {
			where := o.KnownHosts
			var ke *xknownhosts.KeyError
			if errors.As(err, &ke) && len(ke.Want) > 0 {
				where = fmt.Sprintf("%s:%d", ke.Want[0].Filename, ke.Want[0].Line)
			}
			hk.err = &Error{Kind: KindHostKeyChanged, Target: name, Err: err,
				Msg:  fmt.Sprintf("HOST KEY CHANGED: %s now presents %s %s, which differs from the key recorded at %s — refused (someone may be intercepting the connection, or the host was reinstalled)", hostname, key.Type(), fp, where),
				Hint: fmt.Sprintf("if the change is expected, confirm the new fingerprint out of band, then run 'ssh-keygen -R %s -f %s'", knownhosts.Normalize(hostname), o.KnownHosts)}
			return hk.err
		}
		if db == nil || knownhosts.IsHostUnknown(err) {
			if o.AcceptNewHostKey {
				if err := appendKnownHost(o.KnownHosts, line); err != nil {
					hk.err = &Error{Kind: KindFailed, Target: name, Msg: "recording the host key: " + err.Error()}
					return hk.err
				}
				hk.note = fmt.Sprintf("note: %s: new host key %s %s recorded in %s (--accept-new-host-key)", name, key.Type(), fp, o.KnownHosts)
				return nil
			}
			scan := "ssh-keyscan -t " + keyscanType(key.Type())
			if t.Port != 22 {
				scan += fmt.Sprintf(" -p %d", t.Port)
			}
			scan += " " + t.Host
			hk.err = &Error{Kind: KindHostKeyUnknown, Target: name, Err: err,
				Msg:  fmt.Sprintf("host key %s %s is not in %s — refused", key.Type(), fp, o.KnownHosts),
				Hint: fmt.Sprintf("review it with '%s', which should print: %s — then append that line to %s, or pass --accept-new-host-key to trust it on first use", scan, line, o.KnownHosts)}
			return hk.err
		}
		hk.err = &Error{Kind: KindFailed, Target: name, Err: err, Msg: "host key check: " + err.Error()}
		return hk.err
	}
	return hk, algos, nil
}

// keyscanType is ssh-keyscan's -t name for a key type.
func keyscanType(t string) string {
	switch {
	case t == ssh.KeyAlgoED25519:
		return "ed25519"
	case t == ssh.KeyAlgoRSA:
		return "rsa"
	case strings.HasPrefix(t, "ecdsa-"):
		return "ecdsa"
	}
	return t
}

func appendKnownHost(path, line string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(line + "\n"); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// authSigners are the agent's keys, then the identity files' (the
// config's, else the default names). tried describes them for errors.
func authSigners(t Target) ([]ssh.Signer, string) {
	var signers []ssh.Signer
	var tried []string
	if sock := os.Getenv("SSH_AUTH_SOCK"); sock != "" {
		if c, err := net.Dial("unix", sock); err == nil {
			if s, err := agent.NewClient(c).Signers(); err == nil && len(s) > 0 {
				signers = append(signers, s...)
				tried = append(tried, fmt.Sprintf("%d agent key(s)", len(s)))
			}
		}
	}
	files := t.IdentityFiles
	if len(files) == 0 {
		if home, err := os.UserHomeDir(); err == nil {
			for _, n := range []string{"id_ed25519", "id_ecdsa", "id_rsa"} {
				files = append(files, filepath.Join(home, ".ssh", n))
			}
		}
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		s, err := ssh.ParsePrivateKey(b)
		if err != nil {
			var pm *ssh.PassphraseMissingError
			if errors.As(err, &pm) {
				tried = append(tried, f+" (passphrase-protected: load it into ssh-agent)")
			}
			continue
		}
		signers = append(signers, s)
		tried = append(tried, f)
	}
	if len(tried) == 0 {
		return nil, "no keys: no ssh-agent and no identity file"
	}
	return signers, strings.Join(tried, ", ")
}

// keepalive detects a dead connection (a cut link sends no FIN): when
// the server stops answering keepalive requests for 15 s the connection is
// closed, which ends every session with an error.
func (c *Client) keepalive() {
	tick := time.NewTicker(3 * time.Second)
	defer tick.Stop()
	for {
		select {
		case <-c.done:
			return
		case <-tick.C:
		}
		reply := make(chan error, 1)
		go func() {
			_, _, err := c.SendRequest("keepalive@openssh.com", true, nil)
			reply <- err
		}()
		select {
		case <-c.done:
			return
		case err := <-reply:
			if err != nil {
				c.markLost()
				return
			}
		case <-time.After(15 * time.Second):
			c.markLost()
			return
		}
	}
}

func (c *Client) markLost() {
	select {
	case <-c.lost:
	default:
		close(c.lost)
	}
	c.Close()
}

// Lost is closed when the connection was found dead.
func (c *Client) Lost() <-chan struct{} { return c.lost }

// Close closes the connection and its jump hosts.
func (c *Client) Close() error {
	c.once.Do(func() { close(c.done) })
	return c.closeHops()
}

func (c *Client) closeHops() error {
	var err error
	for i := len(c.hops) - 1; i >= 0; i-- {
		if e := c.hops[i].Close(); e != nil && err == nil {
			err = e
		}
	}
	return err
}
