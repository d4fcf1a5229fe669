package tools

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/perflab/perflab/internal/probe"
	"github.com/perflab/perflab/internal/run"
)

// StressNG runs stress-ng stressors one after the other and reports their
// bogo-operations per second from the --yaml metrics.
type StressNG struct {
	path, version string
	stressors     []string
	workers       int
	cpuMethod     string
	dur           time.Duration
	dir           string
}

var stressNGStressors = []string{"cpu", "switch", "memcpy", "matrix", "vm", "pipe", "futex", "cache", "stream", "malloc", "fork", "udp", "sock"}

func (*StressNG) Name() string { return "stress-ng" }

func (*StressNG) Doc() string {
	return "stress-ng stressors, one at a time: `stress-ng --STRESSOR N -t S --metrics-brief --yaml FILE " +
		"--temp-path DIR` (and --cpu-method for cpu); bogo-ops per second of wall-clock time per stressor, from " +
		"the YAML report. Bogo-ops compare the same stressor on the same stress-ng version, not across versions."
}

func (*StressNG) Defaults(quick bool) probe.Params {
	return probe.Params{"stressors": "cpu,switch,memcpy", "workers": "0", "cpu_method": "int64", "duration": "1s"}
}

func (s *StressNG) parse(p probe.Params) error {
	const n = "stress-ng"
	if err := checkKnown(n, p, s.Defaults(false)); err != nil {
		return err
	}
	var err error
	if s.stressors, err = listParam(n, p, "stressors", "cpu,switch,memcpy", stressNGStressors); err != nil {
		return err
	}
	if s.workers, err = intParam(n, p, "workers", 0, 0, 4096); err != nil {
		return err
	}
	s.cpuMethod = p["cpu_method"]
	if s.cpuMethod == "" {
		s.cpuMethod = "int64"
	}
	for _, c := range s.cpuMethod {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return paramError(n, "cpu_method", "%q is not a stress-ng cpu method name", s.cpuMethod)
		}
	}
	s.dur, err = runDuration(n, p, time.Second)
	return err
}

func (s *StressNG) Metrics(p probe.Params) ([]run.Metric, error) {
	if err := s.parse(p); err != nil {
		return nil, err
	}
	var ms []run.Metric
	for _, st := range s.stressors {
		ms = append(ms, run.Metric{Name: st + ".bogo_ops_per_sec", Unit: "bogo-ops/s", Better: run.Higher})
	}
	return ms, nil
}

func (s *StressNG) Available() error {
	// --yaml with per-stressor metrics appeared in the 0.0x series; 0.07
	// is the oldest whose layout the parser knows.
	var err error
	s.path, s.version, err = findTool(context.Background(), "stress-ng", "0.07", "older releases write no --yaml metrics")
	return err
}

func (s *StressNG) Setup(ctx context.Context, env *probe.Env) error {
	if err := s.parse(env.Params); err != nil {
		return err
	}
	if err := s.Available(); err != nil {
		return err
	}
	env.ToolVersion = s.version
	var err error
	s.dir, err = makeDir(env, "stress-ng")
	return err
}

func (s *StressNG) Iterate(ctx context.Context, env *probe.Env) (map[string]float64, error) {
	out := map[string]float64{}
	for _, st := range s.stressors {
		yml := filepath.Join(s.dir, st+".yaml")
		os.Remove(yml)
		argv := []string{s.path, "--" + st, strconv.Itoa(s.workers)}
		if st == "cpu" {
			argv = append(argv, "--cpu-method", s.cpuMethod)
		}
		argv = append(argv, "-t", secondsArg(s.dur), "--metrics-brief", "--yaml", yml, "--temp-path", s.dir)
		recordCommand(env, argv)
		res, err := runTool(ctx, invocation{tool: "stress-ng", argv: argv, dir: s.dir, timeout: toolTimeout(s.dur)})
		if err != nil {
			return nil, err
		}
		b, rerr := os.ReadFile(yml)
		if rerr != nil {
			return nil, &ToolError{Tool: "stress-ng", Command: argv, ExitCode: res.exitCode, Reason: "wrote no YAML report", Tail: tailOf(res)}
		}
		r, perr := ParseStressNG(b)
		if perr != nil {
			return nil, &ToolError{Tool: "stress-ng", Command: argv, ExitCode: res.exitCode, Reason: perr.Error(), Tail: tailOf(res)}
		}
		m, ok := r.Stressors[st]
		if !ok || m.BogoOpsPerSecReal <= 0 {
			return nil, &ToolError{Tool: "stress-ng", Command: argv, Reason: "no bogo-ops rate for " + st, Tail: tailOf(res)}
		}
		out[st+".bogo_ops_per_sec"] = m.BogoOpsPerSecReal
	}
	return out, nil
}

func (s *StressNG) Teardown(*probe.Env) error { return removeDir(&s.dir) }
