package tools

import (
	"context"
	"strconv"
	"time"

	"github.com/perflab/perflab/internal/probe"
	"github.com/perflab/perflab/internal/run"
)

// Sockperf measures one-way message latency and its percentiles with
// sockperf ping-pong against a private sockperf server on 127.0.0.1.
type Sockperf struct {
	path, version string
	proto         string
	msgSize       int
	dur           time.Duration
	pl            placement

	privateServer
}

func (*Sockperf) Name() string { return "sockperf" }

func (*Sockperf) Doc() string {
	return "sockperf ping-pong latency: Setup starts `sockperf server -i 127.0.0.1 -p P` (with --tcp for " +
		"protocol=tcp); each iteration runs `sockperf ping-pong -i 127.0.0.1 -p P -t S -m SIZE` and reports the " +
		"average, median and 99th percentile one-way latency (half the round trip, as sockperf reports it) in µs: " +
		"the seed-004 'one-way latency' row. sockperf spends the first 400 ms warming up, which it excludes."
}

func (*Sockperf) Defaults(quick bool) probe.Params {
	p := probe.Params{"protocol": "udp", "msg_size": "64", "duration": "2s"}
	if quick {
		p["duration"] = "1s"
	}
	return withPlacement(p)
}

func (s *Sockperf) parse(p probe.Params) error {
	const n = "sockperf"
	if err := checkKnown(n, p, s.withPeer(s.Defaults(false))); err != nil {
		return err
	}
	s.proto = p["protocol"]
	if s.proto == "" {
		s.proto = "udp"
	}
	if s.proto != "udp" && s.proto != "tcp" {
		return paramError(n, "protocol", "%q is not udp or tcp", s.proto)
	}
	var err error
	if s.msgSize, err = intParam(n, p, "msg_size", 64, 14, 65000); err != nil {
		return err
	}
	if s.dur, err = runDuration(n, p, 2*time.Second); err != nil {
		return err
	}
	s.pl, err = placementParams(n, p)
	return err
}

func (s *Sockperf) Metrics(p probe.Params) ([]run.Metric, error) {
	if err := s.parse(p); err != nil {
		return nil, err
	}
	return []run.Metric{
		{Name: "latency.avg", Unit: "µs", Better: run.Lower},
		{Name: "latency.p50", Unit: "µs", Better: run.Lower},
		{Name: "latency.p99", Unit: "µs", Better: run.Lower},
	}, nil
}

func (s *Sockperf) Available() error {
	var err error
	s.path, s.version, err = findTool(context.Background(), "sockperf", "", "")
	return err
}

func (s *Sockperf) Setup(ctx context.Context, env *probe.Env) error {
	if err := s.parse(env.Params); err != nil {
		return err
	}
	if err := s.Available(); err != nil {
		return err
	}
	env.ToolVersion = s.version
	addNote(&env.Notes, placementNote(s.pl))
	if err := s.prepare(env, "sockperf", true); err != nil {
		return err
	}
	argv := []string{s.path, "server", "-i", s.listenAddr(), "-p", strconv.Itoa(s.port)}
	if s.proto == "tcp" {
		argv = append(argv, "--tcp")
	}
	return s.start(ctx, env, "sockperf", argv, s.pl.server, boundReady(s.proto, s.port))
}

func (s *Sockperf) Iterate(ctx context.Context, env *probe.Env) (map[string]float64, error) {
	argv := []string{s.path, "ping-pong", "-i", s.serverAddr(), "-p", strconv.Itoa(s.port), "-t", secondsArg(s.dur),
		"-m", strconv.Itoa(s.msgSize)}
	if s.proto == "tcp" {
		argv = append(argv, "--tcp")
	}
	recordCommand(env, argv)
	res, err := s.srv.runClient(ctx, invocation{tool: "sockperf", argv: argv, dir: s.dir, cpus: s.pl.client, timeout: toolTimeout(s.dur)})
	if err != nil {
		return nil, err
	}
	r, err := ParseSockperf(string(res.stdout) + string(res.stderr))
	if err != nil {
		return nil, &ToolError{Tool: "sockperf", Command: argv, ExitCode: res.exitCode, Reason: err.Error(), Tail: tailOf(res)}
	}
	p50, ok50 := r.Percentiles[50]
	p99, ok99 := r.Percentiles[99]
	if !ok50 || !ok99 || r.Observations == 0 {
		return nil, &ToolError{Tool: "sockperf", Command: argv, Reason: "no percentiles in the output (no observations?)"}
	}
	return map[string]float64{"latency.avg": r.AvgUs, "latency.p50": p50, "latency.p99": p99}, nil
}

func (s *Sockperf) Teardown(*probe.Env) error { return s.teardown() }
