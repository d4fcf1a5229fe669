package tools

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/perflab/perflab/internal/probe"
	"github.com/perflab/perflab/internal/run"
)

// Qperf runs qperf's socket tests against a private qperf server, with
// 1-byte messages by default as seed 000 does (`qperf -oo msg_size:1
// tcp_bw tcp_lat`): tcp_bw then measures the message rate of the stack
// rather than copy bandwidth.
type Qperf struct {
	path, version string
	tests         []string
	msgSize       int64
	dur           time.Duration
	pl            placement

	privateServer
}

var qperfTests = []string{"tcp_bw", "tcp_lat", "udp_bw", "udp_lat"}

func (*Qperf) Name() string { return "qperf" }

func (*Qperf) Doc() string {
	return "qperf socket tests: Setup starts `qperf --listen_port P` (qperf cannot bind its listener to one " +
		"address, so it listens on every address at a free port for the run's duration); each iteration runs " +
		"`qperf -lp P 127.0.0.1 -t S -v -m SIZE tcp_bw tcp_lat udp_bw udp_lat`. Reports bandwidth in MB/s and " +
		"messages/s for the _bw tests and one-way latency in µs for the _lat tests, as qperf prints them."
}

func (*Qperf) Defaults(quick bool) probe.Params {
	return withPlacement(probe.Params{"tests": strings.Join(qperfTests, ","), "msg_size": "1", "duration": "1s"})
}

func (q *Qperf) parse(p probe.Params) error {
	const n = "qperf"
	if err := checkKnown(n, p, q.withPeer(q.Defaults(false))); err != nil {
		return err
	}
	var err error
	if q.tests, err = listParam(n, p, "tests", strings.Join(qperfTests, ","), qperfTests); err != nil {
		return err
	}
	if q.msgSize, err = sizeParam(n, p, "msg_size", 1, 1, 64<<20); err != nil {
		return err
	}
	for _, t := range q.tests {
		if strings.HasPrefix(t, "udp") && q.msgSize > 65507 {
			return paramError(n, "msg_size", "%d bytes does not fit in a UDP datagram (max 65507) for %s", q.msgSize, t)
		}
	}
	if q.dur, err = runDuration(n, p, time.Second); err != nil {
		return err
	}
	q.pl, err = placementParams(n, p)
	return err
}

// qperfMetric maps a metric to the test and qperf quantity behind it.
type qperfMetric struct {
	run.Metric
	test, key string
	scale     float64 // from qperf's base unit to the metric's unit
}

func qperfMetrics(tests []string) []qperfMetric {
	var out []qperfMetric
	for _, t := range tests {
		switch t {
		case "tcp_bw":
			out = append(out,
				qperfMetric{run.Metric{Name: "tcp_bw.mb_per_sec", Unit: "MB/s", Better: run.Higher}, t, "bw", 1e-6},
				qperfMetric{run.Metric{Name: "tcp_bw.msg_per_sec", Unit: "msg/s", Better: run.Higher}, t, "msg_rate", 1})
		case "udp_bw":
			out = append(out,
				qperfMetric{run.Metric{Name: "udp_bw.recv_mb_per_sec", Unit: "MB/s", Better: run.Higher}, t, "recv_bw", 1e-6},
				qperfMetric{run.Metric{Name: "udp_bw.msg_per_sec", Unit: "msg/s", Better: run.Higher}, t, "msg_rate", 1})
		case "tcp_lat", "udp_lat":
			out = append(out, qperfMetric{run.Metric{Name: t + ".latency", Unit: "µs", Better: run.Lower}, t, "latency", 1})
		}
	}
	return out
}

func (q *Qperf) Metrics(p probe.Params) ([]run.Metric, error) {
	if err := q.parse(p); err != nil {
		return nil, err
	}
	var ms []run.Metric
	for _, m := range qperfMetrics(q.tests) {
		ms = append(ms, m.Metric)
	}
	return ms, nil
}

func (q *Qperf) Available() error {
	var err error
	q.path, q.version, err = findTool(context.Background(), "qperf", "", "")
	return err
}

func (q *Qperf) Setup(ctx context.Context, env *probe.Env) error {
	if err := q.parse(env.Params); err != nil {
		return err
	}
	if err := q.Available(); err != nil {
		return err
	}
	env.ToolVersion = q.version
	addNote(&env.Notes, placementNote(q.pl))
	if err := q.prepare(env, "qperf", false); err != nil {
		return err
	}
	argv := []string{q.path, "--listen_port", strconv.Itoa(q.port)}
	return q.start(ctx, env, "qperf", argv, q.pl.server, tcpReadyOn(q.listenAddr(), q.port))
}

func (q *Qperf) Iterate(ctx context.Context, env *probe.Env) (map[string]float64, error) {
	argv := []string{q.path, "-lp", strconv.Itoa(q.port), q.serverAddr(), "-t", secondsArg(q.dur), "-v",
		"-m", strconv.FormatInt(q.msgSize, 10)}
	argv = append(argv, q.tests...)
	recordCommand(env, argv)
	res, err := q.srv.runClient(ctx, invocation{tool: "qperf", argv: argv, dir: q.dir, cpus: q.pl.client,
		timeout: toolTimeout(time.Duration(len(q.tests)) * q.dur)})
	if err != nil {
		return nil, err
	}
	r, err := ParseQperf(string(res.stdout) + string(res.stderr))
	if err != nil {
		return nil, &ToolError{Tool: "qperf", Command: argv, ExitCode: res.exitCode, Reason: err.Error(), Tail: tailOf(res)}
	}
	out := map[string]float64{}
	for _, m := range qperfMetrics(q.tests) {
		v, ok := r.Tests[m.test][m.key]
		if !ok {
			return nil, &ToolError{Tool: "qperf", Command: argv, Reason: "no " + m.key + " for " + m.test + " in the output",
				Tail: strings.Join(r.Errors, " | ")}
		}
		if v <= 0 {
			return nil, &ToolError{Tool: "qperf", Command: argv, Reason: m.test + " measured " + m.key + " = 0 (nothing got through)"}
		}
		out[m.Name] = v * m.scale
	}
	return out, nil
}

func (q *Qperf) Teardown(*probe.Env) error { return q.teardown() }
