package remote

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func loadConfig(t *testing.T, text string) *SSHConfig {
	t.Helper()
	p := filepath.Join(t.TempDir(), "config")
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := LoadSSHConfig(p)
	if err != nil {
		t.Fatalf("LoadSSHConfig: %v", err)
	}
	return c
}

// TestMatchExecSkipped: a Match exec block anywhere no longer fails every
// target; it is skipped with one warning naming the line.
func TestMatchExecSkipped(t *testing.T) {
	c := loadConfig(t, "Match exec \"test -f /tmp/x\"\n  User evil\n\nHost db1\n  HostName 10.0.0.7\n  User ops\nMatch user root canonical\n  Port 2222\nMatch host web*\n  Port 2200\n")
	if len(c.Warnings) != 2 || !strings.Contains(c.Warnings[0], ":1:") || !strings.Contains(c.Warnings[0], "skipped") {
		t.Errorf("warnings = %q, want two naming their lines", c.Warnings)
	}
	tg, err := c.Resolve("db1")
	if err != nil || tg.Host != "10.0.0.7" || tg.User != "ops" || tg.Port != 22 {
		t.Errorf("Resolve(db1) = %+v, %v", tg, err)
	}
	if tg, err := c.Resolve("web3"); err != nil || tg.Port != 2200 {
		t.Errorf("Match host still applies: %+v, %v", tg, err)
	}
}

// TestProxyCommand: ProxyCommand is expanded as OpenSSH expands it, never
// silently ignored, and refuses values that would reach the shell.
func TestProxyCommand(t *testing.T) {
	c := loadConfig(t, "Host bastioned\n  HostName 10.1.2.3\n  User u1\n  Port 2022\n  ProxyCommand ssh -W %h:%p -l %r gw %n %%\nHost both\n  ProxyCommand nc %h %p\n  ProxyJump gw\nHost off\n  ProxyCommand none\n")
	tg, err := c.Resolve("bastioned")
	if err != nil || tg.ProxyCommand != "ssh -W 10.1.2.3:2022 -l u1 gw bastioned %" {
		t.Errorf("Resolve(bastioned) = %q, %v", tg.ProxyCommand, err)
	}
	if _, err := c.Resolve("both"); err == nil || !strings.Contains(err.Error(), "keep one") {
		t.Errorf("ProxyCommand and ProxyJump together: %v", err)
	}
	if tg, err := c.Resolve("off"); err != nil || tg.ProxyCommand != "" {
		t.Errorf("ProxyCommand none: %q, %v", tg.ProxyCommand, err)
	}
	for _, bad := range []Target{{Host: "a;reboot", Port: 22, User: "u"}, {Host: "h", Port: 22, User: "$(id)"}, {Host: "h`x`", Port: 22, User: "u"}} {
		if s, err := expandProxyCommand("nc %h %p %r", bad, "x"); err == nil {
			t.Errorf("expanded %+v into %q", bad, s)
		}
	}
	if _, err := expandProxyCommand("nc %h %z", Target{Host: "h", Port: 1, User: "u"}, "x"); err == nil {
		t.Error("an unknown token was accepted")
	}
}

// TestProxyConnIsTheCommand: the connection is the command's stdin and
// stdout (cat echoes), and closing it ends the command.
func TestProxyConnIsTheCommand(t *testing.T) {
	c, err := proxyConn("cat")
	if err != nil {
		t.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := io.WriteString(c, "SSH-2.0-hello\r\n"); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 15)
	if _, err := io.ReadFull(c, buf); err != nil || string(buf) != "SSH-2.0-hello\r\n" {
		t.Fatalf("read back %q, %v", buf, err)
	}
	cc := c.(*cmdConn)
	c.Close()
	if cc.cmd.ProcessState == nil {
		t.Error("the ProxyCommand outlived its connection")
	}
}
