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

// NetUDP measures loopback UDP packet rate with small datagrams.
type NetUDP struct {
	cfg      udpConfig
	rx, tx   int
	hasRx    bool
	hasTx    bool
	received atomic.Uint64
	quit     atomic.Bool
	wg       sync.WaitGroup
	payload  []byte
	procs    procsGuard
	// CPUs of the sender and the receiver (-1: unpinned).
	txCPU, rxCPU int
	// peer, when set, receives on another host; ctl asks it for its count.
	peer   *PeerInfo
	ctl    int
	hasCtl bool
}

// SetPeer makes the probe send to a peer server on another host.
func (u *NetUDP) SetPeer(p *PeerInfo) error {
	if _, err := peerAddr(p); err != nil {
		return err
	}
	u.peer = p
	return nil
}

type udpConfig struct {
	size      int
	duration  time.Duration
	placement string
}

func (*NetUDP) Name() string { return "net.udp" }

func (*NetUDP) Doc() string {
	return "Loopback UDP packet rate: one thread sends `size`-byte datagrams (default 64) as fast as it can on a " +
		"connected socket to 127.0.0.1 for `duration`, another receives and counts them; rx_pps is datagrams " +
		"received per second during the send window, tx_pps datagrams sent (the gap is loss at the receiver's " +
		"socket buffer). One send() per datagram, like `sockperf throughput -m 64` or `iperf3 -u -l 64 -b 0`. " +
		"placement=spread (default) pins sender and receiver on different CPUs; same on one; os unpinned."
}

func (*NetUDP) Defaults(quick bool) probe.Params {
	p := probe.Params{"size": "64", "duration": "300ms", "placement": "spread"}
	if quick {
		p["duration"] = "100ms"
	}
	return p
}

func (u *NetUDP) parse(p probe.Params) (udpConfig, error) {
	const name = "net.udp"
	var cfg udpConfig
	var err error
	if err = checkKnown(name, p, withPeerParam(u.Defaults(false), u.peer)); err != nil {
		return cfg, err
	}
	sz, err := sizeParam(name, p, "size", 64, 1, 65507, 1)
	if err != nil {
		return cfg, err
	}
	cfg.size = int(sz)
	if cfg.duration, err = durationParam(name, p, "duration", 300*time.Millisecond, time.Millisecond, time.Minute); err != nil {
		return cfg, err
	}
	if cfg.placement, err = choiceParam(name, p, "placement", "spread", placements); err != nil {
		return cfg, err
	}
	return cfg, nil
}

func (u *NetUDP) Metrics(p probe.Params) ([]run.Metric, error) {
	if _, err := u.parse(p); err != nil {
		return nil, err
	}
	return []run.Metric{
		{Name: "rx_pps", Unit: "packets/s", Better: run.Higher},
		{Name: "tx_pps", Unit: "packets/s", Better: run.Higher},
	}, nil
}

func (u *NetUDP) Setup(_ context.Context, env *probe.Env) error {
	cfg, err := u.parse(env.Params)
	if err != nil {
		return err
	}
	u.cfg = cfg
	u.payload = make([]byte, cfg.size)
	tx, rx := placePairs(allowedCPUs(env), 1, cfg.placement)
	u.txCPU, u.rxCPU = tx[0], rx[0]
	u.quit.Store(false)
	u.procs.raise(4)
	if u.peer != nil {
		return u.setupPeer(env)
	}
	if u.rx, err = unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0); err != nil {
		return fmt.Errorf("net.udp: socket: %w", err)
	}
	u.hasRx = true
	// The receiver wakes up at least every 50 ms to notice Teardown.
	tv := unix.NsecToTimeval((50 * time.Millisecond).Nanoseconds())
	if err := unix.SetsockoptTimeval(u.rx, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv); err != nil {
		return fmt.Errorf("net.udp: SO_RCVTIMEO: %w", err)
	}
	if err := unix.Bind(u.rx, &unix.SockaddrInet4{Addr: loopback}); err != nil {
		return fmt.Errorf("net.udp: bind 127.0.0.1: %w", err)
	}
	port, err := localPort(u.rx)
	if err != nil {
		return fmt.Errorf("net.udp: %w", err)
	}
	if u.tx, err = unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0); err != nil {
		return fmt.Errorf("net.udp: socket: %w", err)
	}
	u.hasTx = true
	if err := unix.Connect(u.tx, &unix.SockaddrInet4{Addr: loopback, Port: port}); err != nil {
		return fmt.Errorf("net.udp: connect 127.0.0.1:%d: %w", port, err)
	}
	u.wg.Add(1)
	go u.receive()
	return nil
}

// receive counts datagrams until quit.
func (u *NetUDP) receive() {
	defer u.wg.Done()
	if lockAndPin(u.rxCPU) != nil {
		return
	}
	buf := make([]byte, 65536)
	for !u.quit.Load() {
		_, _, err := unix.Recvfrom(u.rx, buf, 0)
		if err == nil {
			u.received.Add(1)
		}
	}
}

func (u *NetUDP) Iterate(ctx context.Context, env *probe.Env) (map[string]float64, error) {
	if !u.hasTx {
		return nil, errors.New("net.udp: Iterate before Setup")
	}
	defer pauseGC()()
	stop, release := stopFlag(ctx)
	defer release()
	var rx0, rx1 uint64
	var sent float64
	var cerr error
	res := runPinned([]int{u.txCPU}, 1, func(int) workerResult {
		rx0, cerr = u.rxCount()
		start := time.Now()
		for i := 1; ; i++ {
			_, err := unix.Write(u.tx, u.payload)
			switch err {
			case nil:
				sent++
			case unix.EINTR, unix.ENOBUFS, unix.EAGAIN, unix.ECONNREFUSED:
				// Transient on loopback; a dropped send is not a sent packet.
			default:
				return workerResult{err: fmt.Errorf("send: %w", err)}
			}
			if i&255 == 0 {
				if el := time.Since(start); el >= u.cfg.duration || stop.Load() {
					if u.peer != nil {
						// Datagrams still in flight on the wire land
						// before the count is read back.
						time.Sleep(20 * time.Millisecond)
					}
					var err error
					if rx1, err = u.rxCount(); err != nil && cerr == nil {
						cerr = err
					}
					return workerResult{units: sent, elapsed: el}
				}
			}
		}
	})
	if stop.Load() {
		return nil, ctx.Err()
	}
	r := res[0]
	if r.err == nil {
		r.err = cerr
	}
	if r.err != nil {
		return nil, fmt.Errorf("net.udp: %w", r.err)
	}
	secs := r.elapsed.Seconds()
	return map[string]float64{"rx_pps": float64(rx1-rx0) / secs, "tx_pps": sent / secs}, nil
}

func (u *NetUDP) Teardown(*probe.Env) error {
	u.quit.Store(true)
	if u.hasCtl {
		unix.Close(u.ctl)
		u.hasCtl = false
	}
	if u.hasTx {
		unix.Close(u.tx)
		u.hasTx = false
	}
	u.wg.Wait() // the receiver notices quit within SO_RCVTIMEO
	if u.hasRx {
		unix.Close(u.rx)
		u.hasRx = false
	}
	u.payload = nil
	u.procs.restore()
	return nil
}

// setupPeer sends to the peer's UDP sink and reads its count over TCP.
func (u *NetUDP) setupPeer(env *probe.Env) error {
	dst, _ := peerAddr(u.peer)
	var err error
	if u.ctl, err = dialTCPTo(dst, u.peer.Ports.UDPCount, true); err != nil {
		return fmt.Errorf("net.udp: %w", err)
	}
	u.hasCtl = true
	if u.tx, err = unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0); err != nil {
		return fmt.Errorf("net.udp: socket: %w", err)
	}
	u.hasTx = true
	if err := unix.Connect(u.tx, &unix.SockaddrInet4{Addr: dst, Port: u.peer.Ports.UDPSink}); err != nil {
		return fmt.Errorf("net.udp: connect %s:%d: %w", u.peer.Addr, u.peer.Ports.UDPSink, err)
	}
	env.Notes = append(env.Notes, peerNote(u.peer)+"; rx_pps is what the peer received")
	return nil
}

// rxCount is the receiver's datagram count: the local receiver's, or the
// peer's asked over the control connection.
func (u *NetUDP) rxCount() (uint64, error) {
	if u.peer == nil {
		return u.received.Load(), nil
	}
	var b [8]byte
	if err := writeFull(u.ctl, b[:1]); err != nil {
		return 0, fmt.Errorf("asking the peer for its count: %w", err)
	}
	if err := readFull(u.ctl, b[:]); err != nil {
		return 0, fmt.Errorf("reading the peer's count: %w", err)
	}
	return binary.LittleEndian.Uint64(b[:]), nil
}
