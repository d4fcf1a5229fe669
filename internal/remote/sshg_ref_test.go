package remote

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/testenv"
)

// TestSSHConfigReference resolves every host of a set of ssh_config files
// (nested ProxyJump chains, jump specs with user and port, Include, %
// tokens in HostName and IdentityFile) with perflab and with OpenSSH
// itself: `ssh -G` for each hop's host name, user, port and ProxyJump —
// the chain is then built from those by OpenSSH's rule (see Chain) — and
// `ssh -v` with a ProxyCommand that connects nowhere for the identity
// files after token expansion. Nothing is dialled.
func TestSSHConfigReference(t *testing.T) {
	ssh := testenv.RequireTool(t, "ssh")
	dir := t.TempDir()
	inc := filepath.Join(dir, "included.conf")
	write := func(p, body string) {
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(inc, `Host db-*
  User postgres
  Port 5022
  ProxyJump inner
  IdentityFile ~/.ssh/db/%n_%r
`)
	cfg := filepath.Join(dir, "config")
	write(cfg, `Include `+inc+`

Host far
  HostName far.internal
  User app
  Port 2201
  ProxyJump inner
  IdentityFile ~/.ssh/%r@%h-%p
  IdentityFile %d/keys/%u-%n.key

Host inner
  HostName 10.1.0.5
  ProxyJump ops@bastion:2222
  IdentityFile ~/.ssh/inner_%%_key

Host bastion
  HostName bastion.example.com
  User jump

Host two-jumps
  HostName 192.0.2.50
  ProxyJump bastion,inner

Host alias-%h
  HostName %h.example.org

Host direct
  HostName 198.51.100.7
  User root
  ProxyJump none

Host loop-a
  ProxyJump loop-b
Host loop-b
  ProxyJump loop-a
`)
	c, err := LoadSSHConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, host := range []string{"far", "inner", "bastion", "two-jumps", "db-main", "direct", "plain.example.net", "deploy@far:2300"} {
		t.Run(host, func(t *testing.T) {
			got, err := c.Chain(host)
			if err != nil {
				t.Fatal(err)
			}
			want, err := opensshChain(ssh, cfg, host, map[string]bool{})
			if err != nil {
				t.Fatal(err)
			}
			if g, w := chainString(got), chainString(want); g != w {
				t.Errorf("chain\nperflab %s\nopenssh %s", g, w)
			}
			t.Logf("%s", chainString(got))
			last := got[len(got)-1]
			keys, err := opensshIdentities(ssh, cfg, host)
			if err != nil {
				t.Fatal(err)
			}
			if len(last.IdentityFiles) > 0 && strings.Join(last.IdentityFiles, " ") != strings.Join(keys, " ") {
				t.Errorf("identity files\nperflab %v\nopenssh %v", last.IdentityFiles, keys)
			}
		})
	}
	if _, err := c.Chain("loop-a"); err == nil || !strings.Contains(err.Error(), "loops back") {
		t.Errorf("a ProxyJump loop: %v, want an error saying it loops", err)
	}
}

func chainString(ts []Target) string {
	var parts []string
	for _, t := range ts {
		parts = append(parts, fmt.Sprintf("%s@%s:%d", t.User, t.Host, t.Port))
	}
	return strings.Join(parts, " -> ")
}

// opensshG runs `ssh -G` (plus -l/-p for a spec with user or port).
func opensshG(ssh, cfg, spec string) (map[string]string, error) {
	user, host, port, err := ParseTarget(strings.TrimPrefix(spec, "ssh://"))
	if err != nil {
		return nil, err
	}
	args := []string{"-G", "-F", cfg}
	if user != "" {
		args = append(args, "-l", user)
	}
	if port != 0 {
		args = append(args, "-p", strconv.Itoa(port))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, ssh, append(args, host)...).Output()
	if err != nil {
		return nil, fmt.Errorf("ssh -G %s: %v", spec, err)
	}
	m := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), " ")
		if _, dup := m[k]; !dup {
			m[k] = v
		}
	}
	return m, nil
}

// opensshChain builds the hop list from ssh -G by OpenSSH's ProxyJump
// rule: the first jump with its own jumps, the others as they are.
func opensshChain(ssh, cfg, spec string, seen map[string]bool) ([]Target, error) {
	if seen[spec] {
		return nil, fmt.Errorf("loop at %s", spec)
	}
	seen[spec] = true
	g, err := opensshG(ssh, cfg, spec)
	if err != nil {
		return nil, err
	}
	port, _ := strconv.Atoi(g["port"])
	t := Target{User: g["user"], Host: g["hostname"], Port: port}
	pj := g["proxyjump"]
	if pj == "" || pj == "none" {
		return []Target{t}, nil
	}
	jumps := strings.Split(pj, ",")
	hops, err := opensshChain(ssh, cfg, jumps[0], seen)
	if err != nil {
		return nil, err
	}
	for _, j := range jumps[1:] {
		jg, err := opensshG(ssh, cfg, j)
		if err != nil {
			return nil, err
		}
		p, _ := strconv.Atoi(jg["port"])
		hops = append(hops, Target{User: jg["user"], Host: jg["hostname"], Port: p})
	}
	return append(hops, t), nil
}

// opensshIdentities lists the identity files ssh -v reports after token
// expansion, with a ProxyCommand that connects nowhere.
func opensshIdentities(ssh, cfg, spec string) ([]string, error) {
	user, host, port, err := ParseTarget(spec)
	if err != nil {
		return nil, err
	}
	args := []string{"-v", "-F", cfg, "-o", "BatchMode=yes", "-o", "ProxyJump=none", "-o", "ProxyCommand=cat /dev/null"}
	if user != "" {
		args = append(args, "-l", user)
	}
	if port != 0 {
		args = append(args, "-p", strconv.Itoa(port))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	out, _ := exec.CommandContext(ctx, ssh, append(args, host)...).CombinedOutput()
	var keys []string
	for _, line := range strings.Split(string(out), "\n") {
		rest, ok := strings.CutPrefix(line, "debug1: identity file ")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) > 0 && !strings.HasSuffix(f[0], "-cert") {
			keys = append(keys, f[0])
		}
	}
	return keys, nil
}
