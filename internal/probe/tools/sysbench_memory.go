package tools

import (
	"context"
	"strconv"
	"time"

	"github.com/perflab/perflab/internal/probe"
	"github.com/perflab/perflab/internal/run"
)

// SysbenchMemory is `sysbench memory` for each access mode and operation.
type SysbenchMemory struct {
	sb      sysbench
	opers   []string
	modes   []string
	block   int64
	threads int
	dur     time.Duration
}

func newSysbenchMemory() *SysbenchMemory { return &SysbenchMemory{} }

func (*SysbenchMemory) Name() string { return "sysbench.memory" }

func (*SysbenchMemory) Doc() string {
	return "sysbench's memory test (`sysbench memory --memory-block-size=B --memory-total-size=100G " +
		"--memory-oper=read|write --memory-access-mode=seq|rnd --threads=T --time=S run`) for each mode and " +
		"operation: MiB/s as sysbench prints them, the seed-004 rows 'sysbench sequential/random read/write'. " +
		"With the default 1 KiB block the sequential numbers are cache-resident, as in the seed's table."
}

func (*SysbenchMemory) Defaults(quick bool) probe.Params {
	p := probe.Params{"oper": "read,write", "mode": "seq,rnd", "block_size": "1KiB", "threads": "1", "duration": "1s"}
	if quick {
		p["mode"] = "seq"
	}
	return p
}

func (m *SysbenchMemory) parse(p probe.Params) error {
	const n = "sysbench.memory"
	if err := checkKnown(n, p, m.Defaults(false)); err != nil {
		return err
	}
	var err error
	if m.opers, err = listParam(n, p, "oper", "read,write", []string{"read", "write"}); err != nil {
		return err
	}
	if m.modes, err = listParam(n, p, "mode", "seq,rnd", []string{"seq", "rnd"}); err != nil {
		return err
	}
	if m.block, err = sizeParam(n, p, "block_size", 1024, 1, 1<<30); err != nil {
		return err
	}
	if m.threads, err = intParam(n, p, "threads", 1, 1, 4096); err != nil {
		return err
	}
	m.dur, err = runDuration(n, p, time.Second)
	return err
}

func memMetric(mode, oper string) string { return "mib_per_sec." + mode + "_" + oper }

func (m *SysbenchMemory) Metrics(p probe.Params) ([]run.Metric, error) {
	if err := m.parse(p); err != nil {
		return nil, err
	}
	var ms []run.Metric
	for _, mode := range m.modes {
		for _, op := range m.opers {
			ms = append(ms, run.Metric{Name: memMetric(mode, op), Unit: "MiB/s", Better: run.Higher})
		}
	}
	return ms, nil
}

func (m *SysbenchMemory) Available() error { return m.sb.available(context.Background()) }

func (m *SysbenchMemory) Setup(ctx context.Context, env *probe.Env) error {
	return m.sb.setup(ctx, env, m.parse)
}

func (m *SysbenchMemory) Iterate(ctx context.Context, env *probe.Env) (map[string]float64, error) {
	out := map[string]float64{}
	for _, mode := range m.modes {
		for _, op := range m.opers {
			// The total size only bounds the run; --time ends it.
			argv := m.sb.argv("memory", m.threads, m.dur, []string{
				"--memory-block-size=" + strconv.FormatInt(m.block, 10),
				"--memory-total-size=100G",
				"--memory-oper=" + op, "--memory-access-mode=" + mode}, "run")
			r, err := m.sb.run(ctx, env, env.Dir, argv, toolTimeout(m.dur), "mib_per_sec")
			if err != nil {
				return nil, err
			}
			out[memMetric(mode, op)] = r.MiBPerSec
		}
	}
	return out, nil
}

func (*SysbenchMemory) Teardown(*probe.Env) error { return nil }
