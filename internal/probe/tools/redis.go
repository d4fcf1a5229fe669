package tools

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/perflab/perflab/internal/probe"
	"github.com/perflab/perflab/internal/run"
)

// Redis measures a private redis-server with redis-benchmark, from several
// client processes at once as seed 002 does (one process is often the
// bottleneck, not the server).
type Redis struct {
	benchPath, serverPath string
	benchVersion          string
	serverVersion         string
	tests                 []string
	pipeline, valueSize   int
	clients, processes    int
	requests              int
	pl                    placement

	privateServer
}

var redisTests = []string{"ping", "set", "get", "incr", "lpush", "rpush", "lpop", "rpop", "sadd", "hset", "spop", "mset"}

func (*Redis) Name() string { return "redis-benchmark" }

func (*Redis) Doc() string {
	return "Redis operations per second: Setup starts a private `redis-server --port P --bind 127.0.0.1 --save '' " +
		"--appendonly no --dir DIR` (no config file, nothing persisted); each iteration runs `processes` copies of " +
		"`redis-benchmark -h 127.0.0.1 -p P -t ping,set,get -P 16 -d 1000 -c 50 -n N --csv` at once (seed 002's " +
		"command) and reports, per test, the sum of the processes' requests/s. The processes start together but " +
		"finish tests at slightly different moments, so the sum is the aggregate rate as seed 002 computes it."
}

func (*Redis) Defaults(quick bool) probe.Params {
	p := probe.Params{"tests": "ping,set,get", "pipeline": "16", "value_size": "1000", "clients": "50",
		"processes": "2", "requests": "200000"}
	if quick {
		p["requests"] = "50000"
	}
	return withPlacement(p)
}

func (r *Redis) parse(p probe.Params) error {
	const n = "redis-benchmark"
	if err := checkKnown(n, p, r.withPeer(r.Defaults(false))); err != nil {
		return err
	}
	var err error
	if r.tests, err = listParam(n, p, "tests", "ping,set,get", redisTests); err != nil {
		return err
	}
	if r.pipeline, err = intParam(n, p, "pipeline", 16, 1, 10000); err != nil {
		return err
	}
	if r.valueSize, err = intParam(n, p, "value_size", 1000, 1, 64<<20); err != nil {
		return err
	}
	if r.clients, err = intParam(n, p, "clients", 50, 1, 10000); err != nil {
		return err
	}
	if r.processes, err = intParam(n, p, "processes", 2, 1, 64); err != nil {
		return err
	}
	if r.requests, err = intParam(n, p, "requests", 200000, 1000, 1_000_000_000); err != nil {
		return err
	}
	r.pl, err = placementParams(n, p)
	return err
}

// redisMetricTests expands "ping" into the two pings redis-benchmark runs.
func redisMetricTests(tests []string) []string {
	var out []string
	for _, t := range tests {
		if t == "ping" {
			out = append(out, "ping_inline", "ping_mbulk")
			continue
		}
		out = append(out, t)
	}
	return out
}

func (r *Redis) Metrics(p probe.Params) ([]run.Metric, error) {
	if err := r.parse(p); err != nil {
		return nil, err
	}
	var ms []run.Metric
	for _, t := range redisMetricTests(r.tests) {
		ms = append(ms, run.Metric{Name: t + ".requests_per_sec", Unit: "req/s", Better: run.Higher})
	}
	return ms, nil
}

func (r *Redis) Available() error {
	ctx := context.Background()
	var err error
	if r.serverPath, err = need("redis-server"); err != nil {
		return err
	}
	if r.benchPath, err = need("redis-benchmark"); err != nil {
		return err
	}
	if r.serverVersion, err = toolVersion(ctx, "redis-server", r.serverPath); err != nil {
		return err
	}
	// redis-benchmark before 6 has no --version; it ships with the server.
	if r.benchVersion, err = toolVersion(ctx, "redis-benchmark", r.benchPath); err != nil {
		r.benchVersion = r.serverVersion
	}
	if !versionAtLeast(r.serverVersion, "2.6") {
		return tooOld("redis-server", r.serverVersion, "2.6", "older servers take no --option arguments")
	}
	return nil
}

func (r *Redis) Setup(ctx context.Context, env *probe.Env) error {
	if err := r.parse(env.Params); err != nil {
		return err
	}
	if err := r.Available(); err != nil {
		return err
	}
	env.ToolVersion = r.benchVersion
	env.Notes = append(env.Notes, "server: redis-server "+r.serverVersion, placementNote(r.pl))
	if err := r.prepare(env, "redis", false); err != nil {
		return err
	}
	argv := []string{r.serverPath, "--port", strconv.Itoa(r.port), "--bind", r.listenAddr(), "--save", "",
		"--appendonly", "no", "--dir", r.dir, "--daemonize", "no", "--logfile", "", "--protected-mode", "yes"}
	if r.bind != "" {
		// On a peer host the server listens on the peer's address for the
		// run's duration only; protected mode would refuse the client.
		argv[len(argv)-1] = "no"
	}
	return r.start(ctx, env, "redis-server", argv, r.pl.server, redisPing(r.listenAddr(), r.port))
}

// redisPing is the readiness check: the server answers PING with +PONG
// (it accepts connections before it has loaded, and answers -LOADING).
func redisPing(addr string, port int) func(context.Context) error {
	return func(ctx context.Context) error {
		var d net.Dialer
		c, err := d.DialContext(ctx, "tcp4", net.JoinHostPort(addr, strconv.Itoa(port)))
		if err != nil {
			return err
		}
		defer c.Close()
		if dl, ok := ctx.Deadline(); ok {
			_ = c.SetDeadline(dl)
		}
		if _, err := c.Write([]byte("PING\r\n")); err != nil {
			return err
		}
		line, err := bufio.NewReader(c).ReadString('\n')
		if err != nil {
			return err
		}
		if strings.TrimSpace(line) != "+PONG" {
			return fmt.Errorf("PING answered %q", strings.TrimSpace(line))
		}
		return nil
	}
}

func (r *Redis) Iterate(ctx context.Context, env *probe.Env) (map[string]float64, error) {
	argv := []string{r.benchPath, "-h", r.serverAddr(), "-p", strconv.Itoa(r.port), "-t", strings.Join(r.tests, ","),
		"-P", strconv.Itoa(r.pipeline), "-d", strconv.Itoa(r.valueSize), "-c", strconv.Itoa(r.clients),
		"-n", strconv.Itoa(r.requests), "--csv"}
	recordCommand(env, argv)
	if r.processes > 1 {
		addNote(&env.Notes, fmt.Sprintf("%d redis-benchmark processes run at once; the metrics are their sums", r.processes))
	}
	type out struct {
		res result
		err error
	}
	outs := make([]out, r.processes)
	gctx, cancel := r.srv.guard(ctx)
	defer cancel()
	var wg sync.WaitGroup
	for i := range outs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// redis-benchmark retries forever when the server is gone;
			// the timeout bounds that.
			outs[i].res, outs[i].err = runTool(gctx, invocation{tool: "redis-benchmark", argv: argv, dir: r.dir,
				cpus: r.pl.client, timeout: 10 * time.Minute})
		}()
	}
	wg.Wait()
	for _, o := range outs {
		if err := r.srv.failed(o.err); err != nil {
			return nil, err
		}
	}
	sum := map[string]float64{}
	for _, o := range outs {
		pr, err := ParseRedisBenchmark(string(o.res.stdout))
		if err != nil {
			return nil, &ToolError{Tool: "redis-benchmark", Command: argv, ExitCode: o.res.exitCode, Reason: err.Error(), Tail: tailOf(o.res)}
		}
		for _, t := range redisMetricTests(r.tests) {
			v, ok := pr.RPS[t]
			if !ok {
				return nil, &ToolError{Tool: "redis-benchmark", Command: argv, Reason: "no result for test " + t, Tail: tailOf(o.res)}
			}
			sum[t+".requests_per_sec"] += v
		}
	}
	return sum, nil
}

func (r *Redis) Teardown(*probe.Env) error { return r.teardown() }
