package tools

import (
	"context"
	"fmt"
	"time"

	"github.com/perflab/perflab/internal/probe"
)

// privateServer is the server side that the client/server adapters
// (iperf3, sockperf, qperf, redis-benchmark, wrk) embed: a directory of
// its own in the run's scratch directory, a loopback port chosen for it,
// and the server process. Setup calls prepare, builds the server's command
// line with the port, and calls start; Teardown calls teardown. What
// differs between the adapters — the command line and how to tell the
// server is ready — stays in each adapter.
type privateServer struct {
	dir  string
	port int
	srv  *server
	// Between hosts (bench --peer): bind is the address the server
	// listens on, on the peer ("" = 127.0.0.1); remote is the peer's
	// server that the client here drives instead of starting one.
	bind   string
	remote *peerServer
}

// peerServer is a server perflab started on a peer host.
type peerServer struct {
	name, addr string
	port       int
}

// Peerable adapters can put their server on a peer host: the peer runs
// Setup after ServeOn (server only, listening on the peer's address) and
// reports ServerPort; here UsePeer makes Setup start nothing and Iterate
// drive the peer's server.
type Peerable interface {
	probe.Probe
	ServeOn(bind string)
	ServerPort() int
	UsePeer(name, addr string, port int)
}

// ServeOn makes the server listen on bind instead of 127.0.0.1.
func (ps *privateServer) ServeOn(bind string) { ps.bind = bind }

// ServerPort is the port the server listens on (after Setup).
func (ps *privateServer) ServerPort() int { return ps.port }

// UsePeer makes the client drive the server at addr:port on peer name.
func (ps *privateServer) UsePeer(name, addr string, port int) {
	ps.remote = &peerServer{name, addr, port}
}

// listenAddr is where the server listens.
func (ps *privateServer) listenAddr() string {
	if ps.bind != "" {
		return ps.bind
	}
	return "127.0.0.1"
}

// serverAddr is where the client connects.
func (ps *privateServer) serverAddr() string {
	if ps.remote != nil {
		return ps.remote.addr
	}
	return ps.listenAddr()
}

// withPeer allows the "peer" parameter (the peer's name, so that runs
// against different servers are different measurements) when a peer is
// in use.
func (ps *privateServer) withPeer(d probe.Params) probe.Params {
	if ps.remote != nil {
		d["peer"] = ps.remote.name
	}
	return d
}

// prepare creates the directory name in the run's scratch directory and
// picks a free loopback port, free for UDP too when udp is set.
func (ps *privateServer) prepare(env *probe.Env, name string, udp bool) error {
	var err error
	if ps.dir, err = makeDir(env, name); err != nil {
		return err
	}
	if ps.remote != nil {
		ps.port = ps.remote.port
		return nil
	}
	ps.port, err = freePort(udp)
	return err
}

// start notes argv as the server's command line, starts it in the
// directory pinned to cpus (nil: unpinned), and waits up to 30 s until
// ready accepts it.
func (ps *privateServer) start(ctx context.Context, env *probe.Env, tool string, argv []string, cpus []int, ready func(context.Context) error) error {
	if ps.remote != nil {
		addNote(&env.Notes, fmt.Sprintf("between hosts: load generator here, %s on peer %s (%s:%d), started there by perflab", tool, ps.remote.name, ps.remote.addr, ps.remote.port))
		return nil
	}
	addNote(&env.Notes, "server: "+shellJoin(argv))
	var err error
	if ps.srv, err = startServer(tool, argv, ps.dir, cpus); err != nil {
		return err
	}
	return ps.srv.waitReady(ctx, 30*time.Second, ready)
}

// teardown stops the server's process group (5 s grace before SIGKILL)
// and removes its directory. It is safe after a Setup that failed at any
// point, and twice.
func (ps *privateServer) teardown() error {
	err := ps.srv.stop(5 * time.Second)
	ps.srv = nil
	if rerr := removeDir(&ps.dir); rerr != nil && err == nil {
		err = rerr
	}
	return err
}
