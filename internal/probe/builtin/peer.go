package builtin

import (
	"encoding/binary"
	"fmt"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/perflab/perflab/internal/probe"
	"golang.org/x/sys/unix"
)

// Between two hosts, net.tcp, net.udp and net.ping run their client here
// and their server on a peer host: `perflab peer-server` there (started
// over SSH by `bench --peer`) serves every server side at once and prints
// a PeerInfo; the probes here are given it with SetPeer.

// PeerPorts are the ports a peer server listens on.
type PeerPorts struct {
	TCPEcho  int `json:"tcp_echo"`  // net.tcp latency: 1 byte back for 1 byte
	TCPSink  int `json:"tcp_sink"`  // net.tcp bandwidth: read to EOF, answer the byte count
	TCPShort int `json:"tcp_short"` // net.tcp connect: 1-byte request, 1-byte answer, close
	UDPSink  int `json:"udp_sink"`  // net.udp: datagrams counted
	UDPCount int `json:"udp_count"` // TCP: 1 byte in, the UDP sink's count (8 bytes LE) out
	UDPEcho  int `json:"udp_echo"`  // net.ping without ICMP: datagrams echoed
}

// PeerInfo is what a peer server announces: the address it listens on
// (the peer's address on the path to the client) and its ports.
type PeerInfo struct {
	Name       string    `json:"name,omitempty"` // set by the client: the target as written
	Addr       string    `json:"addr"`
	Ports      PeerPorts `json:"ports"`
	SnapshotID string    `json:"snapshot_id,omitempty"` // the peer's snapshot, stored with the runs
}

// PeerAware probes can run their client side against a peer server.
type PeerAware interface {
	probe.Probe
	SetPeer(*PeerInfo) error
}

func peerAddr(p *PeerInfo) ([4]byte, error) {
	a, err := netip.ParseAddr(p.Addr)
	if err != nil || !a.Is4() {
		return [4]byte{}, fmt.Errorf("peer address %q is not IPv4", p.Addr)
	}
	return a.As4(), nil
}

// PeerServer is the server side of the network probes for a client on
// another host, bound to one address, its threads pinned to one CPU.
type PeerServer struct {
	tcp   *NetTCP
	ports PeerPorts
	udp   []int
	count atomic.Uint64
	quit  atomic.Bool
	wg    sync.WaitGroup
}

// StartPeerServer listens on bind (IPv4) on ephemeral ports; cpu < 0
// leaves the server threads unpinned.
func StartPeerServer(bind string, cpu int) (s *PeerServer, err error) {
	a, err := netip.ParseAddr(bind)
	if err != nil || !a.Is4() {
		return nil, fmt.Errorf("peer server: bind address %q is not IPv4", bind)
	}
	addr := a.As4()
	s = &PeerServer{tcp: &NetTCP{cfg: tcpConfig{msgSize: 1 << 16}, srv: fdSet{}, serverCPU: cpu, clientCPU: -1}}
	defer func() {
		if err != nil {
			s.Close()
		}
	}()
	for _, sv := range []struct {
		port   *int
		inline bool
		serve  func(int)
	}{
		{&s.ports.TCPEcho, false, s.tcp.serveEcho},
		{&s.ports.TCPSink, false, s.tcp.serveSink},
		{&s.ports.TCPShort, true, s.tcp.serveShort},
		{&s.ports.UDPCount, false, s.serveCount},
	} {
		fd, port, err := listenTCPOn(addr)
		if err != nil {
			return s, fmt.Errorf("peer server: %w", err)
		}
		s.tcp.srv.add(fd)
		*sv.port = port
		s.tcp.wg.Add(1)
		go s.tcp.acceptLoop(fd, sv.inline, sv.serve)
	}
	for _, sv := range []struct {
		port *int
		echo bool
	}{{&s.ports.UDPSink, false}, {&s.ports.UDPEcho, true}} {
		fd, port, err := bindUDP(addr)
		if err != nil {
			return s, fmt.Errorf("peer server: %w", err)
		}
		s.udp = append(s.udp, fd)
		*sv.port = port
		s.wg.Add(1)
		go s.serveUDP(fd, sv.echo, cpu)
	}
	return s, nil
}

// Ports are the ports the server listens on.
func (s *PeerServer) Ports() PeerPorts { return s.ports }

func bindUDP(addr [4]byte) (int, int, error) {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, 0, fmt.Errorf("socket: %w", err)
	}
	tv := unix.NsecToTimeval((50 * time.Millisecond).Nanoseconds())
	if err = unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv); err == nil {
		err = unix.Bind(fd, &unix.SockaddrInet4{Addr: addr})
	}
	port := 0
	if err == nil {
		port, err = localPort(fd)
	}
	if err != nil {
		unix.Close(fd)
		return -1, 0, fmt.Errorf("udp on %s: %w", ip4(addr), err)
	}
	return fd, port, nil
}

// serveUDP counts (or echoes) datagrams until Close.
func (s *PeerServer) serveUDP(fd int, echo bool, cpu int) {
	defer s.wg.Done()
	if lockAndPin(cpu) != nil {
		return
	}
	buf := make([]byte, 65536)
	for !s.quit.Load() {
		n, from, err := unix.Recvfrom(fd, buf, 0)
		if err != nil {
			continue
		}
		if echo {
			_ = unix.Sendto(fd, buf[:n], 0, from)
			continue
		}
		s.count.Add(1)
	}
}

// serveCount answers every byte with the UDP sink's count so far.
func (s *PeerServer) serveCount(fd int) {
	var b [1]byte
	var out [8]byte
	for readFull(fd, b[:]) == nil {
		binary.LittleEndian.PutUint64(out[:], s.count.Load())
		if writeFull(fd, out[:]) != nil {
			return
		}
	}
}

// Close stops every server and waits for their threads.
func (s *PeerServer) Close() {
	s.quit.Store(true)
	s.tcp.srv.shutdownAll()
	s.tcp.wg.Wait()
	s.wg.Wait()
	for _, fd := range s.udp {
		unix.Close(fd)
	}
	s.udp = nil
}
