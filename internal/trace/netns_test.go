package trace

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// lossyPair is two network namespaces joined by a veth link whose client
// side drops a share of outgoing packets at random with nftables (this
// kernel has no netem).
type lossyPair struct {
	cli, srv         string
	cliAddr, srvAddr string
}

func run(t testing.TB, args ...string) {
	t.Helper()
	if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

func newLossyPair(t testing.TB, dropPct int) *lossyPair {
	t.Helper()
	id := os.Getpid() % 100000
	p := &lossyPair{
		cli: fmt.Sprintf("ebpf-c%d", id), srv: fmt.Sprintf("ebpf-s%d", id),
		cliAddr: "10.231.7.1", srvAddr: "10.231.7.2",
	}
	vc, vs := fmt.Sprintf("ebpfc%d", id), fmt.Sprintf("ebpfs%d", id)
	run(t, "ip", "netns", "add", p.cli)
	t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", p.cli).Run() })
	run(t, "ip", "netns", "add", p.srv)
	t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", p.srv).Run() })
	run(t, "ip", "link", "add", vc, "netns", p.cli, "type", "veth", "peer", "name", vs, "netns", p.srv)
	for _, c := range [][]string{
		{p.cli, "ip", "addr", "add", p.cliAddr + "/24", "dev", vc},
		{p.srv, "ip", "addr", "add", p.srvAddr + "/24", "dev", vs},
		{p.cli, "ip", "link", "set", vc, "up"},
		{p.srv, "ip", "link", "set", vs, "up"},
		{p.cli, "ip", "link", "set", "lo", "up"},
		{p.srv, "ip", "link", "set", "lo", "up"},
		{p.cli, "nft", "add", "table", "inet", "perflabloss"},
		{p.cli, "nft", "add", "chain", "inet", "perflabloss", "out", "{ type filter hook output priority 0; }"},
		{p.cli, "nft", "add", "rule", "inet", "perflabloss", "out", "oifname", vc, "numgen", "random", "mod", "100", "<", fmt.Sprint(dropPct), "drop"},
	} {
		run(t, append([]string{"ip", "netns", "exec"}, c...)...)
	}
	return p
}

// inNetns runs f on a thread that has joined namespace ns; the thread is
// discarded afterwards (never unlocked), so no other goroutine inherits it.
// Sockets keep the namespace they were created in.
func inNetns(t testing.TB, ns string, f func() error) error {
	t.Helper()
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		fd, err := unix.Open("/run/netns/"+ns, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			errc <- err
			return
		}
		defer unix.Close(fd)
		if err := unix.Setns(fd, unix.CLONE_NEWNET); err != nil {
			errc <- err
			return
		}
		errc <- f()
	}()
	return <-errc
}

func listenIn(t testing.TB, ns, addr string) net.Listener {
	var ln net.Listener
	if err := inNetns(t, ns, func() (err error) { ln, err = net.Listen("tcp", addr); return }); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return ln
}

func dialIn(t testing.TB, ns, addr string) net.Conn {
	var c net.Conn
	if err := inNetns(t, ns, func() (err error) { c, err = net.Dial("tcp", addr); return }); err != nil {
		t.Fatal(err)
	}
	return c
}

// nstatRetrans reads TcpRetransSegs in namespace ns with nstat.
func nstatRetrans(t testing.TB, ns string) float64 {
	t.Helper()
	out, err := exec.Command("ip", "netns", "exec", ns, "nstat", "-asz", "TcpRetransSegs").CombinedOutput()
	if err != nil {
		t.Fatalf("nstat: %v\n%s", err, out)
	}
	for _, l := range strings.Split(string(out), "\n") {
		f := strings.Fields(l)
		if len(f) >= 2 && f[0] == "TcpRetransSegs" {
			var v float64
			fmt.Sscan(f[1], &v)
			return v
		}
	}
	t.Fatalf("nstat printed no TcpRetransSegs:\n%s", out)
	return 0
}

// lossyTransfer sends over the lossy link from namespace ns in one-second
// rounds of four connections until at least minSegs segments have been
// retransmitted there (nstat), so a loaded machine that moves little data
// per second still gives the tracer enough to count. It returns the
// client ports used and nstat's TcpRetransSegs over the whole transfer.
func lossyTransfer(t testing.TB, ns string, minSegs float64, dial func() net.Conn) (map[int]bool, float64) {
	t.Helper()
	before := nstatRetrans(t, ns)
	ports := map[int]bool{}
	for round := 0; ; round++ {
		for p := range blast(t, 4, time.Second, dial) {
			ports[p] = true
		}
		if nstatRetrans(t, ns)-before >= minSegs {
			break
		}
		if round == 60 {
			t.Fatalf("only %v segments retransmitted in namespace %s after a minute of transfer: the loss did not work", nstatRetrans(t, ns)-before, ns)
		}
	}
	time.Sleep(300 * time.Millisecond) // the last retransmissions' timers
	return ports, nstatRetrans(t, ns) - before
}
