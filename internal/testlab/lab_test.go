package testlab

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"
)

func TestLabHosts(t *testing.T) {
	l := Start(t, Options{Prefix: "remote", Hosts: []HostSpec{
		{Name: "alpha", Sysctls: map[string]string{"net.core.somaxconn": "123"}},
		{Name: "beta", CPUQuota: 0.5, RateMbit: 200, LossPct: 1},
	}})
	if err := l.TrustAll(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	sh := func(host, script string) string {
		t.Helper()
		out, err := l.Cmd(ctx, "ssh", "-F", l.Home+"/.ssh/config", "-o", "BatchMode=yes",
			"-o", "UserKnownHostsFile="+l.KnownHosts(), host, script).CombinedOutput()
		if err != nil {
			t.Fatalf("ssh %s %q: %v: %s", host, script, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	if got := sh("alpha", "hostname; sysctl -n net.core.somaxconn"); got != "alpha\n123" {
		t.Errorf("alpha: hostname and somaxconn = %q, want alpha and 123", got)
	}
	if got := sh("beta", "hostname; sysctl -n net.core.somaxconn"); got == "beta\n123" || !strings.HasPrefix(got, "beta\n") {
		t.Errorf("beta: hostname and somaxconn = %q, want beta and the default", got)
	}
	// beta's sessions run in its cgroup, with its quota.
	b := l.Host("beta")
	if b.Cgroup == "" {
		t.Fatal("beta has no cgroup")
	}
	cg := sh("beta", "cat /proc/self/cgroup")
	if !strings.Contains(cg, b.NS) {
		t.Errorf("beta's session is not in its cgroup %s: %s", b.NS, cg)
	}
	q, _ := os.ReadFile(b.Cgroup + "/cpu.cfs_quota_us")
	if q2, err := os.ReadFile(b.Cgroup + "/cpu.max"); err == nil {
		q = q2
	}
	if !strings.HasPrefix(string(q), "50000") {
		t.Errorf("beta quota = %q, want 50000 µs per 100000", q)
	}
	tcOut, err := b.Cmd(ctx, "tc", "qdisc", "show", "dev", "eth0").CombinedOutput()
	if err != nil || !strings.Contains(string(tcOut), "tbf") || !strings.Contains(string(tcOut), "200Mbit") {
		t.Errorf("beta qdisc: %v %s", err, tcOut)
	}
	nftOut, err := b.Cmd(ctx, "nft", "list", "table", "inet", nftTable).CombinedOutput()
	if err != nil || !strings.Contains(string(nftOut), "numgen random mod 100000 < 1000") {
		t.Errorf("beta loss rule: %v %s", err, nftOut)
	}
	// A cut host cannot be reached; restored, it can.
	if err := b.Cut(ctx); err != nil {
		t.Fatal(err)
	}
	dctx, dcancel := context.WithTimeout(ctx, time.Second)
	if c, err := l.Dial(dctx, "tcp", b.Addr+":22"); err == nil {
		c.Close()
		t.Error("dialled a cut host")
	}
	dcancel()
	if err := b.Restore(ctx); err != nil {
		t.Fatal(err)
	}
	if c, err := l.Dial(ctx, "tcp", b.Addr+":22"); err != nil {
		t.Errorf("restored host: %v", err)
	} else {
		c.Close()
	}
	// Close removes namespaces, cgroups and files.
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir("/run/netns")
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), l.Name+"-") {
			t.Errorf("namespace %s left behind", e.Name())
		}
	}
	if _, err := os.Stat(b.Cgroup); !os.IsNotExist(err) {
		t.Errorf("cgroup %s left behind: %v", b.Cgroup, err)
	}
	if _, err := os.Stat(l.Dir); !os.IsNotExist(err) {
		t.Errorf("lab dir left behind: %v", err)
	}
}
