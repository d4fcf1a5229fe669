package builtin

import (
	"fmt"
	"sync"

	"golang.org/x/sys/unix"
)

// Loopback sockets here are raw blocking file descriptors used from locked
// OS threads, not net.Conn: Go's netpoller would add an epoll round and a
// goroutine hand-off to every message, and a latency probe would then time
// the Go scheduler instead of the kernel's TCP path that qperf times.

var loopback = [4]byte{127, 0, 0, 1}

// listenTCP listens on 127.0.0.1 on a free port.
func listenTCP() (fd, port int, err error) { return listenTCPOn(loopback) }

// listenTCPOn listens on addr on a free port.
func listenTCPOn(addr [4]byte) (fd, port int, err error) {
	fd, err = unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, 0, fmt.Errorf("socket: %w", err)
	}
	if err = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_REUSEADDR, 1); err == nil {
		err = unix.Bind(fd, &unix.SockaddrInet4{Addr: addr})
	}
	if err == nil {
		err = unix.Listen(fd, 4096)
	}
	if err == nil {
		port, err = localPort(fd)
	}
	if err != nil {
		unix.Close(fd)
		return -1, 0, fmt.Errorf("listen on %s: %w", ip4(addr), err)
	}
	return fd, port, nil
}

// dialTCPTo connects to addr:port, with TCP_NODELAY when nodelay.
func dialTCPTo(addr [4]byte, port int, nodelay bool) (int, error) {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("socket: %w", err)
	}
	if nodelay {
		err = unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
	}
	if err == nil {
		for {
			err = unix.Connect(fd, &unix.SockaddrInet4{Addr: addr, Port: port})
			if err != unix.EINTR {
				break
			}
		}
	}
	if err != nil {
		unix.Close(fd)
		return -1, fmt.Errorf("connect %s:%d: %w", ip4(addr), port, err)
	}
	return fd, nil
}

func localPort(fd int) (int, error) {
	sa, err := unix.Getsockname(fd)
	if err != nil {
		return 0, err
	}
	in, ok := sa.(*unix.SockaddrInet4)
	if !ok {
		return 0, fmt.Errorf("getsockname: unexpected %T", sa)
	}
	return in.Port, nil
}

// fdSet tracks server-side connection fds so Teardown can shut down the
// ones still open and unblock their threads.
type fdSet struct {
	mu     sync.Mutex
	fds    map[int]bool
	closed bool
}

// add registers fd; false means the set is shut already and fd was closed.
func (s *fdSet) add(fd int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		unix.Close(fd)
		return false
	}
	if s.fds == nil {
		s.fds = map[int]bool{}
	}
	s.fds[fd] = true
	return true
}

// close closes fd and forgets it.
func (s *fdSet) close(fd int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fds[fd] {
		delete(s.fds, fd)
		unix.Close(fd)
	}
}

// shutdownAll wakes every thread blocked on a tracked fd; the threads close
// their fds as they exit.
func (s *fdSet) shutdownAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	for fd := range s.fds {
		unix.Shutdown(fd, unix.SHUT_RDWR)
	}
}

func ip4(a [4]byte) string { return fmt.Sprintf("%d.%d.%d.%d", a[0], a[1], a[2], a[3]) }
