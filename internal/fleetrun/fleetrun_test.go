package fleetrun

import (
	"bytes"
	"context"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/inventory"
	"github.com/perflab/perflab/internal/remote"
)

// silentServer accepts TCP connections and never speaks, so every SSH
// handshake holds its connection until the connect timeout.
func silentServer(t *testing.T) (int, func() int) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	accepted := 0
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			accepted++
			mu.Unlock()
			go func() {
				defer c.Close()
				buf := make([]byte, 512)
				for {
					if _, err := c.Read(buf); err != nil {
						return
					}
				}
			}()
		}
	}()
	t.Cleanup(func() { ln.Close() })
	return ln.Addr().(*net.TCPAddr).Port, func() int { mu.Lock(); defer mu.Unlock(); return accepted }
}

// --forks bounds the SSH connections open at once, every host is tried,
// and a host that never answers is reported unreachable with its reason.
func TestForksBoundConnections(t *testing.T) {
	port, accepted := silentServer(t)
	var inv []inventory.Host
	for i := 0; i < 7; i++ {
		inv = append(inv, inventory.Host{Name: "h" + strconv.Itoa(i), Address: "127.0.0.1", Port: port, User: "root"})
	}
	for _, forks := range []int{1, 2, 5} {
		var progress bytes.Buffer
		rep := Run(context.Background(), FromInventory(inv), Options{
			Forks: forks,
			Conn: remote.Options{Config: &remote.SSHConfig{}, KnownHosts: filepath.Join(t.TempDir(), "known_hosts"),
				ConnectTimeout: 300 * time.Millisecond},
			Args:     []string{"audit", "--format", "json"},
			Progress: &progress,
		})
		if rep.MaxOpenSessions != forks {
			t.Errorf("--forks %d: %d connections open at once, want exactly %d", forks, rep.MaxOpenSessions, forks)
		}
		if len(rep.Hosts) != len(inv) || rep.Failed() != len(inv) {
			t.Fatalf("--forks %d: %d outcomes, %d failed, want %d each", forks, len(rep.Hosts), rep.Failed(), len(inv))
		}
		for i, h := range rep.Hosts {
			if h.Host != inv[i].Name || h.Status != Unreachable || !strings.Contains(h.Reason, "handshake") {
				t.Errorf("--forks %d: host %d = %+v, want %s unreachable with the handshake failure", forks, i, h, inv[i].Name)
			}
			if !strings.Contains(progress.String(), "["+h.Host+"] unreachable") {
				t.Errorf("no progress line for %s:\n%s", h.Host, progress.String())
			}
		}
	}
	if got := accepted(); got != 3*len(inv) {
		t.Errorf("server saw %d connections, want %d (one per host and run)", got, 3*len(inv))
	}
}

// A host whose run exceeds --host-timeout fails with that reason while the
// others go on.
func TestHostTimeout(t *testing.T) {
	port, _ := silentServer(t)
	inv := []inventory.Host{{Name: "slow", Address: "127.0.0.1", Port: port, User: "root"}}
	rep := Run(context.Background(), FromInventory(inv), Options{
		HostTimeout: 200 * time.Millisecond,
		Conn: remote.Options{Config: &remote.SSHConfig{}, KnownHosts: filepath.Join(t.TempDir(), "kh"),
			ConnectTimeout: 10 * time.Second},
		Args: []string{"audit"},
	})
	h := rep.Hosts[0]
	if h.Status != TimedOut || !strings.Contains(h.Reason, "--host-timeout") || !strings.Contains(h.Reason, "connecting") || h.Seconds > 5 {
		t.Errorf("slow host = %+v, want timed out by --host-timeout while connecting, well before the 10 s connect timeout", h)
	}
}

// Results stream: with OnHost set, a host's outcome is handed over as
// soon as that host is done, while another is still running. The first
// host's server holds its connection until OnHost has received the second
// host's outcome, so a Run that held results until every host finished
// would never release it (the test's deadline fails it); no timing is
// asserted.
func TestOutcomesStream(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		if c, err := ln.Accept(); err == nil {
			accepted <- c
		}
	}()
	release := make(chan struct{})
	var once sync.Once
	inv := []inventory.Host{
		{Name: "held", Address: "127.0.0.1", Port: ln.Addr().(*net.TCPAddr).Port, User: "root"},
		{Name: "refused", Connection: "winrm"}, // fails without dialling
	}
	var order []string
	var heldDoneBeforeRelease bool
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	go func() {
		select {
		case c := <-accepted:
			<-release
			c.Close() // the held host's handshake now fails
		case <-ctx.Done():
		}
	}()
	rep := Run(ctx, FromInventory(inv), Options{
		Forks: 2,
		Conn: remote.Options{Config: &remote.SSHConfig{}, KnownHosts: filepath.Join(t.TempDir(), "kh"),
			ConnectTimeout: 5 * time.Minute},
		Args: []string{"audit"},
		OnHost: func(rep *Report, o Outcome) error {
			order = append(order, o.Host)
			if o.Host == "held" {
				select {
				case <-release:
				default:
					heldDoneBeforeRelease = true
				}
			}
			if o.Host == "refused" {
				once.Do(func() { close(release) })
			}
			return nil
		},
	})
	if ctx.Err() != nil {
		t.Fatal("the held host was never released: outcomes were not handed over as hosts finished")
	}
	if heldDoneBeforeRelease || strings.Join(order, ",") != "refused,held" {
		t.Errorf("OnHost order %v (held done before release: %v), want refused then held", order, heldDoneBeforeRelease)
	}
	if rep.Hosts[0].Host != "held" || rep.Hosts[1].Host != "refused" || rep.Hosts[1].Status != Failed {
		t.Errorf("report rows %+v, want inventory order with refused failed", rep.Hosts)
	}
}

func TestStatusAndTable(t *testing.T) {
	cases := []struct {
		code int
		out  string
		want Status
	}{
		{0, `{"summary":{"fail":3,"worst":"high"}}`, Findings},
		{0, `{"summary":{"fail":0}}`, OK},
		{0, "plain text", OK},
		{1, "", Findings},
		{2, "", Failed},
		{3, "", Failed},
	}
	for _, c := range cases {
		if got, _ := commandStatus(c.code, []byte(c.out)); got != c.want {
			t.Errorf("commandStatus(%d, %q) = %s, want %s", c.code, c.out, got, c.want)
		}
	}
	for err, want := range map[error]Status{
		&remote.Error{Kind: remote.KindHostKeyChanged, Msg: "HOST KEY CHANGED"}: HostKey,
		&remote.Error{Kind: remote.KindHostKeyUnknown, Msg: "unknown"}:          HostKey,
		&remote.Error{Kind: remote.KindUnreachable, Msg: "no route"}:            Unreachable,
		&remote.Error{Kind: remote.KindAuth, Msg: "permission denied"}:          AuthFailed,
		&remote.Error{Kind: remote.KindLost, Msg: "connection lost"}:            Failed,
	} {
		if got, reason := Classify(err); got != want || reason == "" {
			t.Errorf("Classify(%v) = %s %q, want %s with a reason", err, got, reason, want)
		}
	}
	rep := &Report{Forks: 2, MaxOpenSessions: 2, Hosts: []Outcome{
		{Host: "web1", Address: "10.0.0.1:22", Status: Findings, Reason: "2 failing finding(s), worst high", Stored: []string{"snapshot x"}, Output: []byte(`{"a":1}`)},
		{Host: "db9", Address: "10.0.0.9:22", Status: Unreachable, Reason: "no route to 10.0.0.9:22"},
	}}
	if rep.Failed() != 1 {
		t.Errorf("Failed() = %d, want 1", rep.Failed())
	}
}
