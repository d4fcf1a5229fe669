package tools

import (
	"context"
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
}

// prepare creates the directory name in the run's scratch directory and
// picks a free loopback port, free for UDP too when udp is set.
func (ps *privateServer) prepare(env *probe.Env, name string, udp bool) error {
	var err error
	if ps.dir, err = makeDir(env, name); err != nil {
		return err
	}
	ps.port, err = freePort(udp)
	return err
}

// start notes argv as the server's command line, starts it in the
// directory pinned to cpus (nil: unpinned), and waits up to 30 s until
// ready accepts it.
func (ps *privateServer) start(ctx context.Context, env *probe.Env, tool string, argv []string, cpus []int, ready func(context.Context) error) error {
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
