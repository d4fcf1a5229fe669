package tools

import (
	"context"
	"strconv"
	"time"

	"github.com/perflab/perflab/internal/probe"
	"github.com/perflab/perflab/internal/run"
)

// Iperf3 measures loopback TCP bandwidth and the UDP packet rate with
// iperf3 against a private iperf3 server bound to 127.0.0.1.
type Iperf3 struct {
	path, version string
	tests         []string
	udpLen        int
	streams       int
	dur           time.Duration
	pl            placement

	privateServer
}

func (*Iperf3) Name() string { return "iperf3" }

func (*Iperf3) Doc() string {
	return "iperf3 over loopback: Setup starts `iperf3 -s -B 127.0.0.1 -p P`; each iteration runs `iperf3 -c " +
		"127.0.0.1 -p P -t S -P N -J` (TCP: receiver's Gbit/s, the seed-004 'network bandwidth' row) and `iperf3 -u " +
		"-b 0 -l 64 -J` (UDP flood of small datagrams: packets/s sent and received, the 'pps' row) from the JSON report."
}

func (*Iperf3) Defaults(quick bool) probe.Params {
	return withPlacement(probe.Params{"tests": "tcp,udp", "udp_len": "64", "streams": "1", "duration": "1s"})
}

func (i *Iperf3) parse(p probe.Params) error {
	const n = "iperf3"
	if err := checkKnown(n, p, i.withPeer(i.Defaults(false))); err != nil {
		return err
	}
	var err error
	if i.tests, err = listParam(n, p, "tests", "tcp,udp", []string{"tcp", "udp"}); err != nil {
		return err
	}
	if i.udpLen, err = intParam(n, p, "udp_len", 64, 16, 65507); err != nil {
		return err
	}
	if i.streams, err = intParam(n, p, "streams", 1, 1, 128); err != nil {
		return err
	}
	if i.dur, err = runDuration(n, p, time.Second); err != nil {
		return err
	}
	i.pl, err = placementParams(n, p)
	return err
}

func (i *Iperf3) Metrics(p probe.Params) ([]run.Metric, error) {
	if err := i.parse(p); err != nil {
		return nil, err
	}
	var ms []run.Metric
	for _, t := range i.tests {
		if t == "tcp" {
			ms = append(ms, run.Metric{Name: "tcp.gbit_per_sec", Unit: "Gbit/s", Better: run.Higher})
		} else {
			ms = append(ms,
				run.Metric{Name: "udp.recv_pps", Unit: "packets/s", Better: run.Higher},
				run.Metric{Name: "udp.sent_pps", Unit: "packets/s", Better: run.Higher})
		}
	}
	return ms, nil
}

func (i *Iperf3) Available() error {
	var err error
	i.path, i.version, err = findTool(context.Background(), "iperf3", "3.1", "older releases write incomplete JSON")
	return err
}

func (i *Iperf3) Setup(ctx context.Context, env *probe.Env) error {
	if err := i.parse(env.Params); err != nil {
		return err
	}
	if err := i.Available(); err != nil {
		return err
	}
	env.ToolVersion = i.version
	addNote(&env.Notes, placementNote(i.pl))
	if err := i.prepare(env, "iperf3", true); err != nil {
		return err
	}
	argv := []string{i.path, "-s", "-B", i.listenAddr(), "-p", strconv.Itoa(i.port)}
	// A probing connection would count as a failed test on the server.
	return i.start(ctx, env, "iperf3", argv, i.pl.server, boundReady("tcp", i.port))
}

func (i *Iperf3) Iterate(ctx context.Context, env *probe.Env) (map[string]float64, error) {
	out := map[string]float64{}
	for _, t := range i.tests {
		argv := []string{i.path, "-c", i.serverAddr(), "-p", strconv.Itoa(i.port), "-t", secondsArg(i.dur),
			"-P", strconv.Itoa(i.streams), "-J"}
		if t == "udp" {
			argv = append(argv, "-u", "-b", "0", "-l", strconv.Itoa(i.udpLen))
		}
		recordCommand(env, argv)
		gctx, cancel := i.srv.guard(ctx)
		res, err := runTool(gctx, invocation{tool: "iperf3", argv: argv, dir: i.dir, cpus: i.pl.client, timeout: toolTimeout(i.dur)})
		cancel()
		// iperf3 -J reports its errors inside the JSON, sometimes with
		// exit status 0, so parse first.
		r, perr := ParseIperf3(res.stdout)
		if perr != nil {
			if serr := i.srv.failed(perr); serr != perr {
				return nil, serr
			}
			code := res.exitCode
			return nil, &ToolError{Tool: "iperf3", Command: argv, ExitCode: code, Reason: perr.Error(), Tail: tail(res.stderr, 3)}
		}
		if err := i.srv.failed(err); err != nil {
			return nil, err
		}
		if t == "tcp" {
			out["tcp.gbit_per_sec"] = r.RecvBps / 1e9
			continue
		}
		if r.RecvPPS() <= 0 {
			return nil, &ToolError{Tool: "iperf3", Command: argv, Reason: "no UDP datagram arrived"}
		}
		out["udp.recv_pps"] = r.RecvPPS()
		out["udp.sent_pps"] = r.SentPPS()
	}
	return out, nil
}

func (i *Iperf3) Teardown(*probe.Env) error { return i.teardown() }
