package builtin

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/perflab/perflab/internal/probe"
	"github.com/perflab/perflab/internal/run"
	"golang.org/x/sys/unix"
)

// NetPing measures the ICMP echo round trip, seed 004's "ping latency"
// row: to 127.0.0.1, or to a peer host with `bench net.ping --peer HOST`.
type NetPing struct {
	cfg     pingConfig
	peer    *PeerInfo
	fd      int
	has     bool
	mode    string // icmp or udp, as used
	echo    *PeerServer
	seq     uint16
	buf     []byte
	rbuf    []byte
	cpu     int
	timeout time.Duration
	// echo requests without a reply so far, and the note saying so
	sent, lost int
	noteAt     int
}

type pingConfig struct {
	size     int
	duration time.Duration
	mode     string
}

func (*NetPing) Name() string { return "net.ping" }

func (*NetPing) Doc() string {
	return "Round-trip time of echo requests, what `ping` reports (seed 004's ping row; round trip, not one-way): " +
		"`size`-byte payloads (default 56, ping's) sent back to back for `duration`, each waiting for its reply; rtt " +
		"is the mean of the answered ones in µs; requests without a reply within 1 s are left out and counted in a note. mode=icmp " +
		"uses an unprivileged ICMP socket (allowed when the user's group is in net.ipv4.ping_group_range); mode=udp " +
		"echoes UDP datagrams off perflab's peer server (or a local echo thread); auto (default) prefers icmp. " +
		"Without --peer the target is 127.0.0.1."
}

func (*NetPing) Defaults(quick bool) probe.Params {
	p := probe.Params{"size": "56", "duration": "300ms", "mode": "auto"}
	if quick {
		p["duration"] = "100ms"
	}
	return p
}

// SetPeer makes the probe ping a peer host (ICMP, or its peer server's
// UDP echo).
func (n *NetPing) SetPeer(p *PeerInfo) error {
	if _, err := peerAddr(p); err != nil {
		return err
	}
	n.peer = p
	return nil
}

func (n *NetPing) parse(p probe.Params) (pingConfig, error) {
	const name = "net.ping"
	var cfg pingConfig
	var err error
	if err = checkKnown(name, p, withPeerParam(n.Defaults(false), n.peer)); err != nil {
		return cfg, err
	}
	sz, err := sizeParam(name, p, "size", 56, 8, 65000, 1)
	if err != nil {
		return cfg, err
	}
	cfg.size = int(sz)
	if cfg.duration, err = durationParam(name, p, "duration", 300*time.Millisecond, time.Millisecond, time.Minute); err != nil {
		return cfg, err
	}
	if cfg.mode, err = choiceParam(name, p, "mode", "auto", []string{"auto", "icmp", "udp"}); err != nil {
		return cfg, err
	}
	return cfg, nil
}

func (n *NetPing) Metrics(p probe.Params) ([]run.Metric, error) {
	if _, err := n.parse(p); err != nil {
		return nil, err
	}
	return []run.Metric{{Name: "rtt", Unit: "µs", Better: run.Lower}}, nil
}

func (n *NetPing) Setup(_ context.Context, env *probe.Env) error {
	cfg, err := n.parse(env.Params)
	if err != nil {
		return err
	}
	n.cfg = cfg
	n.timeout = time.Second
	n.sent, n.lost, n.noteAt = 0, 0, -1
	n.cpu = allowedCPUs(env)[0]
	dst := loopback
	if n.peer != nil {
		dst, _ = peerAddr(n.peer)
	}
	if cfg.mode != "udp" {
		fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, unix.IPPROTO_ICMP)
		switch {
		case err == nil:
			n.fd, n.has, n.mode = fd, true, "icmp"
		case cfg.mode == "icmp":
			return fmt.Errorf("net.ping: ICMP socket: %w (allow this group in net.ipv4.ping_group_range, or use mode=udp)", err)
		}
	}
	port := 0
	if !n.has {
		n.mode = "udp"
		if n.peer != nil {
			port = n.peer.Ports.UDPEcho
		} else {
			if n.echo, err = StartPeerServer("127.0.0.1", -1); err != nil {
				return fmt.Errorf("net.ping: %w", err)
			}
			port = n.echo.Ports().UDPEcho
		}
		if n.fd, err = unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0); err != nil {
			return fmt.Errorf("net.ping: socket: %w", err)
		}
		n.has = true
	}
	tv := unix.NsecToTimeval(n.timeout.Nanoseconds())
	if err := unix.SetsockoptTimeval(n.fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv); err != nil {
		return fmt.Errorf("net.ping: SO_RCVTIMEO: %w", err)
	}
	if err := unix.Connect(n.fd, &unix.SockaddrInet4{Addr: dst, Port: port}); err != nil {
		return fmt.Errorf("net.ping: connect %s: %w", ip4(dst), err)
	}
	hdr := 0
	if n.mode == "icmp" {
		hdr = 8
	}
	n.buf = make([]byte, hdr+cfg.size)
	n.rbuf = make([]byte, len(n.buf)+64)
	if n.mode == "icmp" {
		n.buf[0] = 8 // echo request; the kernel sets the id and checksum
		env.Notes = append(env.Notes, "rtt is the round trip of ICMP echo (unprivileged ping socket) to "+ip4(dst))
	} else {
		env.Notes = append(env.Notes, "rtt is the round trip of UDP echo to "+ip4(dst)+" (no ICMP ping socket here: net.ipv4.ping_group_range)")
	}
	if n.peer != nil {
		env.Notes = append(env.Notes, peerNote(n.peer))
	}
	return nil
}

func (n *NetPing) Iterate(ctx context.Context, env *probe.Env) (map[string]float64, error) {
	if !n.has {
		return nil, errors.New("net.ping: Iterate before Setup")
	}
	defer pauseGC()()
	stop, release := stopFlag(ctx)
	defer release()
	var sum time.Duration
	var ok, lost int
	res := runPinned([]int{n.cpu}, 1, func(int) workerResult {
		start := time.Now()
		for time.Since(start) < n.cfg.duration && !stop.Load() {
			rtt, err := n.once()
			switch {
			case err == nil:
				sum += rtt
				ok++
			case errors.Is(err, unix.EAGAIN), errors.Is(err, unix.EWOULDBLOCK):
				lost++
			default:
				return workerResult{err: err}
			}
		}
		return workerResult{}
	})
	if stop.Load() {
		return nil, ctx.Err()
	}
	if res[0].err != nil {
		return nil, fmt.Errorf("net.ping: %w", res[0].err)
	}
	n.sent += ok + lost
	n.lost += lost
	if ok == 0 {
		return nil, fmt.Errorf("net.ping: no reply to %d echo requests", lost)
	}
	if n.lost > 0 {
		note := fmt.Sprintf("net.ping: %d of %d echo requests (%.2f%%) got no reply within %s and are not in rtt", n.lost, n.sent, 100*float64(n.lost)/float64(n.sent), n.timeout)
		if n.noteAt < 0 {
			n.noteAt = len(env.Notes)
			env.Notes = append(env.Notes, note)
		} else {
			env.Notes[n.noteAt] = note
		}
	}
	return map[string]float64{"rtt": float64(sum.Nanoseconds()) / float64(ok) / 1e3}, nil
}

// once sends one request and waits for its reply (late replies to earlier
// requests are skipped).
func (n *NetPing) once() (time.Duration, error) {
	n.seq++
	seqAt := 0
	if n.mode == "icmp" {
		seqAt = 6
	}
	binary.BigEndian.PutUint16(n.buf[seqAt:], n.seq)
	start := time.Now()
	for {
		if _, err := unix.Write(n.fd, n.buf); err != unix.EINTR {
			if err != nil {
				return 0, err
			}
			break
		}
	}
	for {
		k, err := unix.Read(n.fd, n.rbuf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			if time.Since(start) >= n.timeout-time.Millisecond {
				return 0, unix.EAGAIN
			}
			if err == unix.ECONNREFUSED {
				continue // an ICMP error for an earlier datagram
			}
			return 0, err
		}
		if k >= seqAt+2 && binary.BigEndian.Uint16(n.rbuf[seqAt:]) == n.seq && (n.mode != "icmp" || n.rbuf[0] == 0) {
			return time.Since(start), nil
		}
	}
}

func (n *NetPing) Teardown(*probe.Env) error {
	if n.has {
		unix.Close(n.fd)
		n.has = false
	}
	if n.echo != nil {
		n.echo.Close()
		n.echo = nil
	}
	n.buf, n.rbuf = nil, nil
	return nil
}
