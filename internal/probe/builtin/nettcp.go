package builtin

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/perflab/perflab/internal/probe"
	"github.com/perflab/perflab/internal/run"
	"golang.org/x/sys/unix"
)

// NetTCP measures loopback TCP: 1-byte round-trip latency, stream
// bandwidth and short-connection rate, against servers it runs itself on
// 127.0.0.1.
type NetTCP struct {
	cfg     tcpConfig
	srv     fdSet
	wg      sync.WaitGroup
	ports   map[string]int
	latConn int // client side of the persistent latency connection
	hasLat  bool
	buf     []byte
	procs   procsGuard
	// CPUs of the client thread and of the server threads (-1: unpinned).
	clientCPU, serverCPU int
	// peer, when set, serves on another host; dst is where the client
	// connects (loopback without a peer).
	peer *PeerInfo
	dst  [4]byte
}

// SetPeer makes the probe a client of a peer server on another host.
func (n *NetTCP) SetPeer(p *PeerInfo) error {
	if _, err := peerAddr(p); err != nil {
		return err
	}
	n.peer = p
	return nil
}

type tcpConfig struct {
	msgSize   int
	duration  time.Duration
	tests     []string
	placement string
}

var tcpTests = []string{"latency", "bandwidth", "connect"}

func (*NetTCP) Name() string { return "net.tcp" }

func (*NetTCP) Doc() string {
	return "Loopback TCP on 127.0.0.1 with blocking sockets on OS threads. latency: a 1-byte ping-pong (TCP_NODELAY) for " +
		"`duration`, reported one-way in µs = round trip / 2, which is what `qperf tcp_lat` prints. bandwidth: " +
		"one connection (Nagle on, as in qperf) streams `msg_size`-byte writes (default 64 KiB, qperf's default; msg_size=1 shows the " +
		"small-packet cost of seed 000) for `duration`, the server reads `msg_size` at a time; MB/s (1 MB = 1e6 " +
		"bytes) of bytes received, as `qperf tcp_bw` reports; retrans beside it is the share of that connection's data segments " +
		"the kernel sent again (TCP_INFO total_retrans / data_segs_out, %), which is the loss the path caused. connect: short connections like HTTP without " +
		"keep-alive: connect, 1-byte request, 1-byte response, server closes first; connections/s. " +
		"placement=spread (default) pins client and server threads on two different CPUs, so every message is " +
		"a cross-CPU wake-up as between two processes (and as qperf usually runs); same puts both on one CPU; " +
		"os leaves them to the scheduler."
}

func (*NetTCP) Defaults(quick bool) probe.Params {
	p := probe.Params{"msg_size": "65536", "duration": "300ms", "tests": "latency,bandwidth,connect", "placement": "spread"}
	if quick {
		p["duration"] = "100ms"
	}
	return p
}

func (n *NetTCP) parse(p probe.Params) (tcpConfig, error) {
	const name = "net.tcp"
	var cfg tcpConfig
	var err error
	if err = checkKnown(name, p, withPeerParam(n.Defaults(false), n.peer)); err != nil {
		return cfg, err
	}
	ms, err := sizeParam(name, p, "msg_size", 65536, 1, 16<<20, 1)
	if err != nil {
		return cfg, err
	}
	cfg.msgSize = int(ms)
	if cfg.duration, err = durationParam(name, p, "duration", 300*time.Millisecond, time.Millisecond, time.Minute); err != nil {
		return cfg, err
	}
	if cfg.tests, err = choicesParam(name, p, "tests", tcpTests, tcpTests); err != nil {
		return cfg, err
	}
	if cfg.placement, err = choiceParam(name, p, "placement", "spread", placements); err != nil {
		return cfg, err
	}
	return cfg, nil
}

func (n *NetTCP) Metrics(p probe.Params) ([]run.Metric, error) {
	cfg, err := n.parse(p)
	if err != nil {
		return nil, err
	}
	all := map[string]run.Metric{
		"latency":   {Name: "latency", Unit: "µs", Better: run.Lower},
		"bandwidth": {Name: "bandwidth", Unit: "MB/s", Better: run.Higher},
		"connect":   {Name: "connect_rate", Unit: "conn/s", Better: run.Higher},
	}
	var ms []run.Metric
	for _, t := range cfg.tests {
		ms = append(ms, all[t])
		if t == "bandwidth" {
			ms = append(ms, run.Metric{Name: "retrans", Unit: "%", Better: run.Lower})
		}
	}
	return ms, nil
}

func (n *NetTCP) Setup(_ context.Context, env *probe.Env) error {
	cfg, err := n.parse(env.Params)
	if err != nil {
		return err
	}
	n.cfg = cfg
	n.srv = fdSet{}
	n.ports = map[string]int{}
	n.buf = make([]byte, cfg.msgSize)
	ping, pong := placePairs(allowedCPUs(env), 1, cfg.placement)
	n.clientCPU, n.serverCPU = ping[0], pong[0]
	// Client, server handler and the accept threads may all be runnable.
	n.procs.raise(6)
	n.dst = loopback
	if n.peer != nil {
		return n.setupPeer(env)
	}
	servers := map[string]func(fd int){"latency": n.serveEcho, "bandwidth": n.serveSink, "connect": n.serveShort}
	for _, t := range cfg.tests {
		fd, port, err := listenTCP()
		if err != nil {
			return fmt.Errorf("net.tcp: %w", err)
		}
		if !n.srv.add(fd) {
			return errors.New("net.tcp: torn down during setup")
		}
		n.ports[t] = port
		n.wg.Add(1)
		go n.acceptLoop(fd, t == "connect", servers[t])
	}
	if port, ok := n.ports["latency"]; ok {
		if n.latConn, err = dialTCPTo(n.dst, port, true); err != nil {
			return fmt.Errorf("net.tcp: %w", err)
		}
		n.hasLat = true
	}
	return nil
}

// acceptLoop serves each connection on its own locked thread (inline for
// short connections, like one event-loop worker) until the listener is shut.
func (n *NetTCP) acceptLoop(lfd int, inline bool, serve func(fd int)) {
	defer n.wg.Done()
	defer n.srv.close(lfd)
	if inline && lockAndPin(n.serverCPU) != nil {
		return
	}
	for {
		fd, _, err := unix.Accept4(lfd, unix.SOCK_CLOEXEC)
		if err == unix.EINTR || err == unix.ECONNABORTED {
			continue
		}
		if err != nil {
			return
		}
		if !n.srv.add(fd) {
			return
		}
		if inline {
			serve(fd)
			n.srv.close(fd)
			continue
		}
		n.wg.Add(1)
		go func() {
			defer n.wg.Done()
			defer n.srv.close(fd)
			if lockAndPin(n.serverCPU) == nil {
				serve(fd)
			}
		}()
	}
}

// serveEcho answers every byte with one byte.
func (n *NetTCP) serveEcho(fd int) {
	var b [1]byte
	for {
		if err := readFull(fd, b[:]); err != nil {
			return
		}
		if err := writeFull(fd, b[:]); err != nil {
			return
		}
	}
}

// serveSink reads msg_size at a time until EOF, then reports the byte count.
func (n *NetTCP) serveSink(fd int) {
	buf := make([]byte, n.cfg.msgSize)
	var total uint64
	for {
		k, err := unix.Read(fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return
		}
		if k == 0 {
			break
		}
		total += uint64(k)
	}
	var out [8]byte
	binary.LittleEndian.PutUint64(out[:], total)
	_ = writeFull(fd, out[:])
}

// serveShort reads the request, answers and returns (the caller closes).
func (n *NetTCP) serveShort(fd int) {
	var b [1]byte
	if readFull(fd, b[:]) == nil {
		_ = writeFull(fd, b[:])
	}
}

func (n *NetTCP) Iterate(ctx context.Context, env *probe.Env) (map[string]float64, error) {
	if n.ports == nil || (!n.hasLat && n.ports["latency"] != 0) {
		return nil, fmt.Errorf("net.tcp: Iterate before Setup")
	}
	defer pauseGC()()
	stop, release := stopFlag(ctx)
	defer release()
	out := map[string]float64{}
	for _, t := range n.cfg.tests {
		var v, retrans float64
		res := runPinned([]int{n.clientCPU}, 1, func(int) workerResult {
			var err error
			switch t {
			case "latency":
				v, err = n.latency(stop)
			case "bandwidth":
				v, retrans, err = n.bandwidth(stop)
			default:
				v, err = n.connectRate(stop)
			}
			return workerResult{err: err}
		})
		if stop.Load() {
			return nil, ctx.Err()
		}
		if res[0].err != nil {
			return nil, fmt.Errorf("net.tcp: %s: %w", t, res[0].err)
		}
		name := t
		if t == "connect" {
			name = "connect_rate"
		}
		out[name] = v
		if t == "bandwidth" {
			out["retrans"] = retrans
		}
	}
	return out, nil
}

// latency is qperf's tcp_lat: µs per one-way trip.
func (n *NetTCP) latency(stop *atomic.Bool) (float64, error) {
	var b [1]byte
	trips := 0
	start := time.Now()
	for {
		if err := writeFull(n.latConn, b[:]); err != nil {
			return 0, err
		}
		if err := readFull(n.latConn, b[:]); err != nil {
			return 0, err
		}
		trips++
		if el := time.Since(start); el >= n.cfg.duration || stop.Load() {
			return float64(el.Nanoseconds()) / float64(trips) / 2 / 1e3, nil
		}
	}
}

// bandwidth streams for the duration on a fresh connection; MB/s of bytes
// the server received, timed until it confirms the last of them, and the
// percentage of the connection's data segments retransmitted.
func (n *NetTCP) bandwidth(stop *atomic.Bool) (mbs, retrans float64, err error) {
	// Nagle stays on, as in qperf: small writes coalesce as they would
	// for an application streaming without TCP_NODELAY.
	fd, err := dialTCPTo(n.dst, n.ports["bandwidth"], false)
	if err != nil {
		return 0, 0, err
	}
	defer unix.Close(fd)
	start := time.Now()
	for time.Since(start) < n.cfg.duration && !stop.Load() {
		if err := writeFull(fd, n.buf); err != nil {
			return 0, 0, err
		}
	}
	if err := unix.Shutdown(fd, unix.SHUT_WR); err != nil {
		return 0, 0, err
	}
	var got [8]byte
	if err := readFull(fd, got[:]); err != nil {
		return 0, 0, fmt.Errorf("reading the server's byte count: %w", err)
	}
	el := time.Since(start)
	// The server has read every byte, so every data segment is acked and
	// the counters are final.
	info, err := unix.GetsockoptTCPInfo(fd, unix.IPPROTO_TCP, unix.TCP_INFO)
	if err != nil {
		return 0, 0, fmt.Errorf("TCP_INFO: %w", err)
	}
	return float64(binary.LittleEndian.Uint64(got[:])) / el.Seconds() / 1e6, retransPct(info), nil
}

// retransPct is the share of a connection's data segments sent again, in
// percent (0 before any data segment).
func retransPct(info *unix.TCPInfo) float64 {
	if info.Data_segs_out == 0 {
		return 0
	}
	return 100 * float64(info.Total_retrans) / float64(info.Data_segs_out)
}

// connectRate opens short connections back to back; connections/s.
func (n *NetTCP) connectRate(stop *atomic.Bool) (float64, error) {
	port := n.ports["connect"]
	var b [1]byte
	conns := 0
	start := time.Now()
	for {
		fd, err := dialTCPTo(n.dst, port, true)
		if err != nil {
			return 0, err
		}
		err = writeFull(fd, b[:])
		if err == nil {
			err = readFull(fd, b[:])
		}
		if err == nil {
			// Wait for the server's FIN so the server side closes first and
			// keeps the TIME_WAIT: the client never runs out of ports.
			var k int
			for k, err = unix.Read(fd, b[:]); err == unix.EINTR; k, err = unix.Read(fd, b[:]) {
			}
			if err == nil && k != 0 {
				err = errors.New("server sent more than the response")
			}
		}
		unix.Close(fd)
		if err != nil {
			return 0, err
		}
		conns++
		if el := time.Since(start); el >= n.cfg.duration || stop.Load() {
			return float64(conns) / el.Seconds(), nil
		}
	}
}

func (n *NetTCP) Teardown(*probe.Env) error {
	if n.hasLat {
		unix.Close(n.latConn)
		n.hasLat = false
	}
	n.srv.shutdownAll()
	n.wg.Wait()
	n.ports = nil
	n.buf = nil
	n.procs.restore()
	return nil
}

// setupPeer points the client at the peer's servers; nothing listens here.
func (n *NetTCP) setupPeer(env *probe.Env) error {
	n.dst, _ = peerAddr(n.peer)
	n.serverCPU = -1
	all := map[string]int{"latency": n.peer.Ports.TCPEcho, "bandwidth": n.peer.Ports.TCPSink, "connect": n.peer.Ports.TCPShort}
	for _, t := range n.cfg.tests {
		n.ports[t] = all[t]
	}
	env.Notes = append(env.Notes, peerNote(n.peer)+"; latency is one-way = round trip / 2, as qperf tcp_lat reports")
	if port, ok := n.ports["latency"]; ok {
		var err error
		if n.latConn, err = dialTCPTo(n.dst, port, true); err != nil {
			return fmt.Errorf("net.tcp: %w", err)
		}
		n.hasLat = true
	}
	return nil
}

// withPeerParam allows the "peer" parameter (the peer's name, recorded so
// runs against different peers are different measurements) when a peer
// is set.
func withPeerParam(d probe.Params, p *PeerInfo) probe.Params {
	if p != nil {
		d["peer"] = p.Name
	}
	return d
}

func peerNote(p *PeerInfo) string {
	s := fmt.Sprintf("between hosts: client here, server on peer %s (%s)", p.Name, p.Addr)
	if p.SnapshotID != "" {
		s += ", peer snapshot " + p.SnapshotID
	}
	return s
}
