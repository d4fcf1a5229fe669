package tools

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/perflab/perflab/internal/cpuset"
	"github.com/prometheus/procfs"
	"golang.org/x/sys/unix"
)

// Process lifecycle for every program an adapter starts, servers and
// clients alike.
//
// Process groups. Each child is started with Setpgid, so it and everything
// it forks (nginx workers, mariadbd threads are one process, redis
// background savers) form one group that is signalled as a unit: SIGTERM,
// a grace period, then SIGKILL, then a check that the group is empty. A
// child in its own group also does not receive the terminal's Ctrl-C
// directly: perflab decides the order of shutdown.
//
// Pinning without taskset. Linux gives a new process the CPU affinity of
// the thread that forked it. launch therefore forks from a goroutine
// locked to its own OS thread, sets that thread's affinity to the wanted
// CPUs first, and keeps the goroutine locked until the child has been
// waited for; it never unlocks, so the thread — whose affinity is now
// unusual — exits with the goroutine instead of returning to Go's pool
// (the main thread, which cannot exit, gets its placement back instead).
// The child and all its descendants are placed from their first
// instruction, unlike sched_setaffinity on the pid after start, which
// misses workers forked in between.
//
// Parent death. The same locked thread is the child's parent thread, so
// the parent-death signal fires only when perflab itself dies (e.g.
// SIGKILL, for which no Teardown can run), never because Go retired an
// idle thread. The signal is SIGTERM, not SIGKILL: nginx's master killed
// outright leaves its workers running (measured: two workers survived
// every time), while on SIGTERM it stops them; every server perflab starts
// (nginx, redis-server, mariadbd, qperf, iperf3, sockperf) exits on SIGTERM,
// which TestSIGKILLLeavesNoProcess checks for nginx.

// launch starts cmd in its own process group with its CPU affinity set to
// cpus (nil: inherit perflab's) and returns a channel that yields cmd.Wait's
// result once.
func launch(cmd *exec.Cmd, cpus []int) (<-chan error, error) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	cmd.SysProcAttr.Pdeathsig = syscall.SIGTERM
	started := make(chan error, 1)
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		// No UnlockOSThread, so the thread exits with the goroutine (see
		// above) — except the main thread, which Go cannot end and would
		// park for good with the child's affinity: there the original
		// placement is restored and the thread handed back once the child
		// is reaped (its parent-death signal is moot by then).
		onMain := unix.Gettid() == os.Getpid()
		var orig unix.CPUSet
		release := func() {
			if onMain {
				if len(cpus) > 0 {
					_ = unix.SchedSetaffinity(0, &orig)
				}
				runtime.UnlockOSThread()
			}
		}
		if len(cpus) > 0 {
			if err := unix.SchedGetaffinity(0, &orig); err != nil {
				release()
				started <- fmt.Errorf("reading CPU affinity: %w", err)
				return
			}
			var set unix.CPUSet
			for _, c := range cpus {
				set.Set(c)
			}
			if err := unix.SchedSetaffinity(0, &set); err != nil {
				release()
				started <- fmt.Errorf("pinning to CPUs %s: %w", cpuset.FormatList(cpus), err)
				return
			}
		}
		if err := cmd.Start(); err != nil {
			release()
			started <- err
			return
		}
		started <- nil
		err := cmd.Wait()
		release()
		done <- err
	}()
	if err := <-started; err != nil {
		return nil, err
	}
	return done, nil
}

// killGroup signals a process group; a group that is already gone is fine.
func killGroup(pgid int, sig syscall.Signal) error {
	if pgid <= 0 {
		return nil
	}
	if err := syscall.Kill(-pgid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		return err
	}
	return nil
}

// awaitGroupGone waits until no process of the group is left, killing
// stragglers (children that outlived their leader).
func awaitGroupGone(pgid int, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		if err := syscall.Kill(-pgid, 0); errors.Is(err, syscall.ESRCH) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("process group %d still has processes after SIGKILL", pgid)
		}
		_ = killGroup(pgid, syscall.SIGKILL)
		time.Sleep(20 * time.Millisecond)
	}
}

// invocation is one run of a client tool.
type invocation struct {
	tool    string // catalogue name, for messages
	argv    []string
	dir     string
	env     []string // added to perflab's environment
	cpus    []int
	timeout time.Duration // 0: no limit beyond ctx
}

// result is what a client tool printed.
type result struct {
	stdout, stderr []byte
	exitCode       int
}

// runTool runs a client tool to completion. A non-zero exit is returned
// as a *ToolError together with the output, since some tools print a
// usable partial result before failing and the caller decides. On
// cancellation the whole process group is killed.
func runTool(ctx context.Context, inv invocation) (result, error) {
	if inv.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, inv.timeout)
		defer cancel()
	}
	var res result
	cmd := exec.Command(inv.argv[0], inv.argv[1:]...)
	cmd.Dir = inv.dir
	if len(inv.env) > 0 {
		cmd.Env = append(os.Environ(), inv.env...)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	// WaitDelay: a grandchild holding the pipes must not hang us after the
	// group was killed.
	cmd.WaitDelay = 2 * time.Second
	done, err := launch(cmd, inv.cpus)
	if err != nil {
		return res, &ToolError{Tool: inv.tool, Command: inv.argv, ExitCode: -1, Reason: "cannot start: " + err.Error()}
	}
	pgid := cmd.Process.Pid
	var waitErr error
	select {
	case waitErr = <-done:
	case <-ctx.Done():
		_ = killGroup(pgid, syscall.SIGKILL)
		waitErr = <-done
	}
	// Whatever the leader did, nothing it forked may stay behind.
	_ = killGroup(pgid, syscall.SIGKILL)
	_ = awaitGroupGone(pgid, 2*time.Second)
	res.stdout, res.stderr = stdout.Bytes(), stderr.Bytes()
	res.exitCode = cmd.ProcessState.ExitCode()
	if ctx.Err() != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) && inv.timeout > 0 {
			return res, &ToolError{Tool: inv.tool, Command: inv.argv, ExitCode: -1,
				Reason: fmt.Sprintf("timed out after %v", inv.timeout), Tail: tailOf(res)}
		}
		return res, ctx.Err()
	}
	if waitErr != nil || res.exitCode != 0 {
		te := &ToolError{Tool: inv.tool, Command: inv.argv, ExitCode: res.exitCode, Tail: tailOf(res)}
		if res.exitCode < 0 {
			te.Reason = "killed: " + cmd.ProcessState.String()
		}
		return res, te
	}
	return res, nil
}

// tailOf prefers stderr; several tools (sysbench, iperf3 -J) report
// failures on stdout.
func tailOf(r result) string {
	if t := tail(r.stderr, 4); t != "" {
		return t
	}
	return tail(r.stdout, 4)
}

// server is a long-running program (nginx, redis-server, mariadbd, a
// qperf/iperf3/sockperf listener) started for one probe run.
type server struct {
	tool string
	argv []string
	log  string // its stdout and stderr
	cmd  *exec.Cmd
	pgid int

	exited  chan struct{}
	mu      sync.Mutex
	waitErr error
	logFile *os.File
}

// startServer starts argv in dir with output to dir/<tool>.log.
func startServer(tool string, argv []string, dir string, cpus []int) (*server, error) {
	s := &server{tool: tool, argv: argv, log: dir + "/" + tool + ".log", exited: make(chan struct{})}
	f, err := os.OpenFile(s.log, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, err
	}
	s.logFile = f
	s.cmd = exec.Command(argv[0], argv[1:]...)
	s.cmd.Dir = dir
	s.cmd.Stdout, s.cmd.Stderr = f, f
	done, err := launch(s.cmd, cpus)
	if err != nil {
		f.Close()
		return nil, &ToolError{Tool: tool, Command: argv, ExitCode: -1, Reason: "cannot start: " + err.Error()}
	}
	s.pgid = s.cmd.Process.Pid
	go func() {
		err := <-done
		s.mu.Lock()
		s.waitErr = err
		s.mu.Unlock()
		close(s.exited)
	}()
	return s, nil
}

// logTail is the end of the server's output, for error messages.
func (s *server) logTail() string {
	b, _ := os.ReadFile(s.log)
	return tail(b, 4)
}

// exitError describes a server that stopped on its own.
func (s *server) exitError() error {
	code := -1
	if s.cmd.ProcessState != nil {
		code = s.cmd.ProcessState.ExitCode()
	}
	return &ToolError{Tool: s.tool, Command: s.argv, ExitCode: code, Reason: "the server exited during start-up", Tail: s.logTail()}
}

// waitReady polls ready until it succeeds, the server exits, ctx ends or
// limit passes.
func (s *server) waitReady(ctx context.Context, limit time.Duration, ready func(context.Context) error) error {
	deadline := time.Now().Add(limit)
	var last error
	for {
		select {
		case <-s.exited:
			return s.exitError()
		case <-ctx.Done():
			return ctx.Err()
		default:
		}
		cctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
		last = ready(cctx)
		cancel()
		if last == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return &ToolError{Tool: s.tool, Command: s.argv, ExitCode: -1,
				Reason: fmt.Sprintf("not ready after %v (%v)", limit, last), Tail: s.logTail()}
		}
		select {
		case <-s.exited:
			return s.exitError()
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(25 * time.Millisecond):
		}
	}
}

// alive says whether the server is still running; a server that died
// mid-run must fail the iteration rather than let the client measure
// connection errors.
func (s *server) alive() error {
	select {
	case <-s.exited:
		return &ToolError{Tool: s.tool, Command: s.argv, ExitCode: s.cmd.ProcessState.ExitCode(), Reason: "the server exited during the run", Tail: s.logTail()}
	default:
		return nil
	}
}

// stop ends the server's whole process group: SIGTERM, grace, SIGKILL.
// It is safe to call twice and on a server that already exited.
func (s *server) stop(grace time.Duration) error {
	if s == nil {
		return nil
	}
	_ = killGroup(s.pgid, syscall.SIGTERM)
	select {
	case <-s.exited:
	case <-time.After(grace):
		_ = killGroup(s.pgid, syscall.SIGKILL)
		<-s.exited
	}
	err := awaitGroupGone(s.pgid, 3*time.Second)
	if s.logFile != nil {
		s.logFile.Close()
		s.logFile = nil
	}
	return err
}

// freePort returns a loopback port that is free for TCP (and UDP when
// udp is set) at the time of asking. Servers are given an explicit port
// rather than 0 because most of them cannot report the one they chose.
func freePort(udp bool) (int, error) {
	for i := 0; i < 20; i++ {
		l, err := net.Listen("tcp4", "127.0.0.1:0")
		if err != nil {
			return 0, fmt.Errorf("finding a free loopback port: %w", err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		if udp {
			u, err := net.ListenPacket("udp4", "127.0.0.1:"+strconv.Itoa(port))
			if err != nil {
				l.Close()
				continue
			}
			u.Close()
		}
		l.Close()
		return port, nil
	}
	return 0, errors.New("finding a free loopback port: none free for both TCP and UDP after 20 tries")
}

// tcpReady is a readiness check: the port accepts a connection.
func tcpReady(port int) func(context.Context) error { return tcpReadyOn("127.0.0.1", port) }

// tcpReadyOn is tcpReady for a server listening on addr.
func tcpReadyOn(addr string, port int) func(context.Context) error {
	return func(ctx context.Context) error {
		var d net.Dialer
		c, err := d.DialContext(ctx, "tcp4", net.JoinHostPort(addr, strconv.Itoa(port)))
		if err != nil {
			return err
		}
		return c.Close()
	}
}

// addNote records a note once.
func addNote(notes *[]string, n string) {
	for _, x := range *notes {
		if x == n {
			return
		}
	}
	*notes = append(*notes, n)
}

// guard returns a context that is cancelled when the server exits, so a
// client that would wait forever for a dead server (redis-benchmark
// retries without end) stops at once; check failed() after it returns.
func (s *server) guard(ctx context.Context) (context.Context, context.CancelFunc) {
	gctx, cancel := context.WithCancel(ctx)
	if s == nil { // the server is on a peer host
		return gctx, cancel
	}
	go func() {
		select {
		case <-s.exited:
			cancel()
		case <-gctx.Done():
		}
	}()
	return gctx, cancel
}

// runClient runs a client against s under guard and, when it fails,
// reports the server's death rather than the client's symptoms of it.
func (s *server) runClient(ctx context.Context, inv invocation) (result, error) {
	gctx, cancel := s.guard(ctx)
	res, err := runTool(gctx, inv)
	cancel()
	return res, s.failed(err)
}

// portBound reports whether a local socket of proto ("tcp" in LISTEN
// state, or "udp") is bound to port, from /proc/net via procfs. It is the
// readiness check for servers that a probing connection would disturb (an
// iperf3 server counts a connection without a test as a failed test).
// These are perflab's own children's sockets, not host facts, so the live
// /proc is read directly rather than through hostfs.
func portBound(proto string, port int) (bool, error) {
	socks, err := localSockets(proto)
	if err != nil {
		return false, err
	}
	for _, s := range socks {
		if s.port == port {
			return true, nil
		}
	}
	return false, nil
}

const tcpListen = 0x0A

// localSocket is a bound socket: its port and inode (the inode ties it to
// the process holding it, through /proc/PID/fd).
type localSocket struct {
	port  int
	inode uint64
}

// localSockets lists listening TCP sockets (proto "tcp") or bound UDP
// sockets ("udp"), IPv4 and IPv6.
func localSockets(proto string) ([]localSocket, error) {
	fs, err := procfs.NewDefaultFS()
	if err != nil {
		return nil, err
	}
	var out []localSocket
	if proto == "tcp" {
		//lint:ignore SA1019 the /proc/net tables are what is wanted here; sock_diag over netlink would add a dependency for the same facts.
		for _, get := range []func() (procfs.NetTCP, error){fs.NetTCP, fs.NetTCP6} {
			t, err := get()
			if err != nil {
				if os.IsNotExist(err) {
					continue
				}
				return nil, err
			}
			for _, l := range t {
				if l.St == tcpListen {
					out = append(out, localSocket{int(l.LocalPort), l.Inode})
				}
			}
		}
		return out, nil
	}
	for _, get := range []func() (procfs.NetUDP, error){fs.NetUDP, fs.NetUDP6} {
		t, err := get()
		if err != nil {
			if os.IsNotExist(err) {
				continue
			}
			return nil, err
		}
		for _, l := range t {
			out = append(out, localSocket{int(l.LocalPort), l.Inode})
		}
	}
	return out, nil
}

// boundReady is a readiness check that waits for the port to be bound.
func boundReady(proto string, port int) func(context.Context) error {
	return func(context.Context) error {
		ok, err := portBound(proto, port)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("nothing bound to %s port %d yet", proto, port)
		}
		return nil
	}
}

// failed turns a client's failure into the server's when the server died:
// the client usually sees the dead server (connection reset) a moment
// before its exit is reaped, so give that a second. With clientErr nil it
// still reports a server that exited meanwhile.
func (s *server) failed(clientErr error) error {
	if s == nil { // the server is on a peer host
		return clientErr
	}
	if clientErr != nil {
		select {
		case <-s.exited:
		case <-time.After(time.Second):
		}
	}
	if err := s.alive(); err != nil {
		return err
	}
	return clientErr
}
