package remote

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestParseTarget(t *testing.T) {
	for _, tc := range []struct {
		in         string
		user, host string
		port       int
		bad        bool
	}{
		{in: "db1", host: "db1"},
		{in: "root@db1", user: "root", host: "db1"},
		{in: "root@10.0.0.1:2222", user: "root", host: "10.0.0.1", port: 2222},
		{in: "[fe80::1]:22", host: "fe80::1", port: 22},
		{in: "fe80::1", host: "fe80::1"},
		{in: "a@b@host", user: "a@b", host: "host"},
		{in: "host:0", bad: true},
		{in: "host:ssh", bad: true},
		{in: "@host", bad: true},
		{in: "", bad: true},
		{in: "host name", bad: true},
		{in: "root@", bad: true},
	} {
		u, h, p, err := ParseTarget(tc.in)
		if tc.bad {
			if err == nil {
				t.Errorf("%q: accepted as %q %q %d", tc.in, u, h, p)
			}
			continue
		}
		if err != nil || u != tc.user || h != tc.host || p != tc.port {
			t.Errorf("%q = %q %q %d %v, want %q %q %d", tc.in, u, h, p, err, tc.user, tc.host, tc.port)
		}
	}
}

func FuzzParseTarget(f *testing.F) {
	for _, s := range []string{"root@h:22", "[::1]:2", "h", "a@b:c:d"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		u, h, p, err := ParseTarget(s)
		if err != nil {
			return
		}
		if h == "" || p < 0 || p > 65535 || strings.ContainsAny(u+h, " \t\n") {
			t.Fatalf("%q parsed as %q %q %d", s, u, h, p)
		}
	})
}

func TestResolveSSHConfig(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("HOME", dir)
	cfg := filepath.Join(dir, "config")
	os.WriteFile(cfg, []byte(`Host db1
  HostName 10.1.2.3
  User admin
  Port 2200
  IdentityFile ~/.ssh/db_key
  ProxyJump bastion,admin@jump2:2022

Host bastion
  HostName 192.0.2.1
`), 0o600)
	c, err := LoadSSHConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.Resolve("db1")
	if err != nil {
		t.Fatal(err)
	}
	want := Target{Name: "db1", User: "admin", Host: "10.1.2.3", Port: 2200,
		IdentityFiles: []string{filepath.Join(dir, ".ssh/db_key")}, ProxyJump: []string{"bastion", "admin@jump2:2022"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Resolve(db1) = %+v\nwant %+v", got, want)
	}
	// What the user wrote wins over the config.
	got, _ = c.Resolve("ops@db1:22")
	if got.User != "ops" || got.Port != 22 || got.Host != "10.1.2.3" {
		t.Errorf("Resolve(ops@db1:22) = %+v", got)
	}
	got, _ = c.Resolve("other:2222")
	if got.Name != "other:2222" || got.Host != "other" || got.Port != 2222 || len(got.ProxyJump) != 0 {
		t.Errorf("Resolve(other:2222) = %+v", got)
	}
	if _, err := c.Resolve("bad host"); err == nil {
		t.Error("bad target accepted")
	}
}

func TestForwardArgs(t *testing.T) {
	in := []string{"bench", "cpu", "--on", "h1", "--on=h2", "--db", "x.db", "-o", "out.json", "-oy", "--output=z",
		"--accept-new-host-key", "--remote-binary", "b", "--format", "json", "--", "--on", "kept"}
	want := []string{"bench", "cpu", "--format", "json", "--", "--on", "kept"}
	got := ForwardArgs(in, []string{"--on", "--remote-binary", "--db", "-o", "--output"}, []string{"--accept-new-host-key"})
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ForwardArgs = %q, want %q", got, want)
	}
}

func TestShellQuote(t *testing.T) {
	for in, want := range map[string]string{"plain-1.0": "plain-1.0", "a b": "'a b'", "it's": `'it'\''s'`, "": "''", "$(x)": "'$(x)'"} {
		if got := shellQuote(in); got != want {
			t.Errorf("shellQuote(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestGoArch(t *testing.T) {
	for in, want := range map[string]string{"x86_64\n": "amd64", "aarch64": "arm64", "armv7l": "", "riscv64": ""} {
		if got := goArch(in); got != want {
			t.Errorf("goArch(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestDropLines(t *testing.T) {
	var b bytes.Buffer
	d := &dropLines{w: &b, drop: "/tmp/perflab-remote.x/data"}
	d.Write([]byte("keep 1\nstored 1 run(s) in /tmp/perflab-remote.x/data/perflab/perflab.db\nkee"))
	d.Write([]byte("p 2\npartial"))
	d.flush()
	if b.String() != "keep 1\nkeep 2\npartial" {
		t.Errorf("dropLines passed %q", b.String())
	}
}

// The agent's watchdog stops on EOF and on a missing heartbeat, not while
// heartbeats arrive.
func TestWatchStdin(t *testing.T) {
	pr, pw, _ := os.Pipe()
	stopped := make(chan struct{})
	var once sync.Once
	// Heartbeats every 100 ms against a 2 s limit: a loaded machine may
	// delay one, not by twenty times.
	go watchStdin(pr, 2*time.Second, func() { once.Do(func() { close(stopped) }) })
	for i := 0; i < 5; i++ {
		pw.Write([]byte{'\n'})
		time.Sleep(100 * time.Millisecond)
	}
	select {
	case <-stopped:
		t.Fatal("stopped while heartbeats arrived")
	default:
	}
	select {
	case <-stopped:
	case <-time.After(30 * time.Second):
		t.Fatal("did not stop when heartbeats stopped")
	}
	pw.Close()
	pr.Close()

	pr2, pw2, _ := os.Pipe()
	stopped2 := make(chan struct{})
	go watchStdin(pr2, time.Hour, func() { close(stopped2) })
	pw2.Close()
	select {
	case <-stopped2:
	case <-time.After(30 * time.Second):
		t.Fatal("did not stop on EOF")
	}
	pr2.Close()
}

func TestSweepStale(t *testing.T) {
	parent := t.TempDir()
	mk := func(name, pid string, age time.Duration) string {
		d := filepath.Join(parent, name)
		os.Mkdir(d, 0o700)
		if pid != "" {
			os.WriteFile(filepath.Join(d, "agent.pid"), []byte(pid), 0o600)
		}
		old := time.Now().Add(-age)
		os.Chtimes(d, old, old)
		return d
	}
	dead := mk(DirPrefix+"dead", "999999999", time.Hour)
	nopid := mk(DirPrefix+"nopid", "", time.Hour)
	young := mk(DirPrefix+"young", "", time.Second)
	other := mk("unrelated", "", time.Hour)
	keep := mk(DirPrefix+"keep", "", time.Hour)
	SweepStale(parent, keep, time.Minute)
	for d, want := range map[string]bool{dead: false, nopid: false, young: true, other: true, keep: true} {
		_, err := os.Stat(d)
		if (err == nil) != want {
			t.Errorf("%s: exists=%v, want %v", filepath.Base(d), err == nil, want)
		}
	}
}
