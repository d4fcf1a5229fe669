package tools

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/perflab/perflab/internal/probe"
	"github.com/perflab/perflab/internal/run"
)

// OLTP is `sysbench oltp_point_select` against a private MariaDB/MySQL
// server that Setup initialises, starts and fills.
type OLTP struct {
	sb        sysbench
	db        *mariadb
	threads   int
	levels    []int // concurrency sweep (sweep.go); nil: threads alone
	tables    int
	tableSize int
	dur       time.Duration
	pl        placement
}

func (*OLTP) Name() string { return "sysbench.oltp_point_select" }

func (*OLTP) Doc() string {
	return "MySQL point selects as in seed 000 (sysbench at 100 threads): Setup initialises a private MariaDB " +
		"(or MySQL) data directory, starts the server on 127.0.0.1 with --no-defaults, and runs `sysbench " +
		"oltp_point_select --tables=N --table-size=R prepare`; each iteration runs `sysbench oltp_point_select " +
		"--threads=T --time=S run` over TCP and reports transactions/s and the 95th percentile latency. " +
		"server_cpus/client_cpus pin mariadbd and sysbench apart."
}

func (*OLTP) Defaults(quick bool) probe.Params {
	p := probe.Params{"threads": "100", "tables": "1", "table_size": "10000", "duration": "2s", sweepKey: ""}
	if quick {
		p["duration"] = "1s"
	}
	return withPlacement(p)
}

func (o *OLTP) parse(p probe.Params) error {
	const n = "sysbench.oltp_point_select"
	if err := checkKnown(n, p, o.Defaults(false)); err != nil {
		return err
	}
	var err error
	if o.threads, err = intParam(n, p, "threads", 100, 1, 4096); err != nil {
		return err
	}
	if o.tables, err = intParam(n, p, "tables", 1, 1, 64); err != nil {
		return err
	}
	if o.tableSize, err = intParam(n, p, "table_size", 10000, 1, 100_000_000); err != nil {
		return err
	}
	if o.dur, err = runDuration(n, p, 2*time.Second); err != nil {
		return err
	}
	if o.levels, err = sweepParam(n, p); err != nil {
		return err
	}
	o.pl, err = placementParams(n, p)
	return err
}

func (o *OLTP) Metrics(p probe.Params) ([]run.Metric, error) {
	if err := o.parse(p); err != nil {
		return nil, err
	}
	return sweepMetrics([]run.Metric{
		{Name: "tps", Unit: "transactions/s", Better: run.Higher},
		{Name: "latency_p95", Unit: "ms", Better: run.Lower},
	}, o.levels, "threads"), nil
}

func (o *OLTP) Available() error {
	ctx := context.Background()
	if err := o.sb.available(ctx); err != nil {
		return err
	}
	if o.sb.legacy {
		return tooOld("sysbench", o.sb.version, "1.0", "oltp_point_select is a sysbench 1.0 script")
	}
	_, _, _, err := findMariaDB(ctx)
	return err
}

func (o *OLTP) Setup(ctx context.Context, env *probe.Env) error {
	if err := o.parse(env.Params); err != nil {
		return err
	}
	if err := o.Available(); err != nil {
		return err
	}
	env.ToolVersion = o.sb.version
	addNote(&env.Notes, placementNote(o.pl))
	var err error
	maxConns := o.threads
	if len(o.levels) > 0 {
		maxConns = o.levels[len(o.levels)-1]
	}
	o.db, err = startMariaDB(ctx, env, env.Dir, o.pl.server, maxConns+50)
	if err != nil {
		return err
	}
	env.Notes = append(env.Notes, fmt.Sprintf("server: %s %s", o.db.flavor, o.db.version))
	argv := append([]string{o.sb.path, "oltp_point_select"}, o.db.sysbenchArgs()...)
	argv = append(argv, "--tables="+strconv.Itoa(o.tables), "--table-size="+strconv.Itoa(o.tableSize), "prepare")
	addNote(&env.Notes, "prepared with: "+shellJoin(argv))
	_, err = runTool(ctx, invocation{tool: "sysbench", argv: argv, dir: env.Dir, cpus: o.pl.client, timeout: 10 * time.Minute})
	return err
}

func (o *OLTP) Iterate(ctx context.Context, env *probe.Env) (map[string]float64, error) {
	return sweepIterate(ctx, o.levels, func(l int) { o.threads = l }, func(ctx context.Context) (map[string]float64, error) {
		return o.once(ctx, env)
	})
}

func (o *OLTP) once(ctx context.Context, env *probe.Env) (map[string]float64, error) {
	argv := append([]string{o.sb.path, "oltp_point_select"}, o.db.sysbenchArgs()...)
	argv = append(argv, "--tables="+strconv.Itoa(o.tables), "--table-size="+strconv.Itoa(o.tableSize),
		"--threads="+strconv.Itoa(o.threads), "--time="+secondsArg(o.dur), "run")
	recordCommand(env, argv)
	res, err := o.db.srv.runClient(ctx, invocation{tool: "sysbench", argv: argv, dir: env.Dir, cpus: o.pl.client, timeout: toolTimeout(o.dur)})
	if err != nil {
		return nil, err
	}
	r, err := ParseSysbench(string(res.stdout))
	if err != nil {
		return nil, &ToolError{Tool: "sysbench", Command: argv, ExitCode: res.exitCode, Reason: err.Error(), Tail: tailOf(res)}
	}
	if err := requireValues(r, argv, "tps", "lat_p95"); err != nil {
		return nil, err
	}
	if r.ErrorsPerSec > 0 {
		addNote(&env.Notes, fmt.Sprintf("sysbench ignored errors (%.1f/s in one iteration): deadlocks or lost connections", r.ErrorsPerSec))
	}
	return map[string]float64{"tps": r.TPS, "latency_p95": r.LatP95Ms}, nil
}

func (o *OLTP) Teardown(*probe.Env) error {
	err := o.db.stop()
	o.db = nil
	return err
}
