package remote

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// ProxyCommand is run as OpenSSH runs it: the command line of the config
// with %h, %p, %r, %n and %% expanded, through "/bin/sh -c 'exec CMD'",
// its stdin and stdout the connection to the SSH server, its stderr the
// user's. Expanded values come from the target, so a name with shell
// metacharacters is refused instead of reaching the shell (OpenSSH refuses
// such host names too).

// expandProxyCommand expands the tokens OpenSSH expands in ProxyCommand.
func expandProxyCommand(cmd string, t Target, alias string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(cmd); i++ {
		if cmd[i] != '%' {
			b.WriteByte(cmd[i])
			continue
		}
		if i+1 == len(cmd) {
			return "", errors.New("ProxyCommand ends with a lone %")
		}
		i++
		var v string
		switch cmd[i] {
		case '%':
			b.WriteByte('%')
			continue
		case 'h':
			v = t.Host
		case 'p':
			v = strconv.Itoa(t.Port)
		case 'r':
			v = t.User
		case 'n':
			v = alias
		default:
			return "", fmt.Errorf("ProxyCommand token %%%c is not supported (perflab expands %%h %%p %%r %%n %%%%)", cmd[i])
		}
		if !shellSafe(v) {
			return "", fmt.Errorf("ProxyCommand: %q would reach the shell with characters it interprets", v)
		}
		b.WriteString(v)
	}
	return b.String(), nil
}

func shellSafe(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', strings.ContainsRune("._-:@[]", r):
		default:
			return false
		}
	}
	return true
}

// proxyConn starts the ProxyCommand and returns the connection to it.
func proxyConn(command string) (net.Conn, error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	ours, theirs := os.NewFile(uintptr(fds[0]), "proxy"), os.NewFile(uintptr(fds[1]), "proxy-command")
	cmd := exec.Command("/bin/sh", "-c", "exec "+command)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = theirs, theirs, os.Stderr
	if err := cmd.Start(); err != nil {
		ours.Close()
		theirs.Close()
		return nil, fmt.Errorf("ProxyCommand: %w", err)
	}
	theirs.Close()
	c, err := net.FileConn(ours)
	ours.Close()
	if err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		return nil, err
	}
	return &cmdConn{Conn: c, cmd: cmd}, nil
}

// cmdConn ends the ProxyCommand with the connection.
type cmdConn struct {
	net.Conn
	cmd  *exec.Cmd
	once sync.Once
}

func (c *cmdConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() {
		c.cmd.Process.Kill()
		c.cmd.Wait()
	})
	return err
}
