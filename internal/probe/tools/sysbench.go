package tools

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/perflab/perflab/internal/probe"
)

// sysbench is the shared runner of the sysbench probes: finding the binary,
// learning its version (0.4/0.5 take `--test=NAME --num-threads --max-time
// --max-requests=0`, 1.0 takes `NAME --threads --time`), running one test
// and parsing what it printed.
type sysbench struct {
	path, version string
	legacy        bool // 0.4 or 0.5 command-line syntax
}

// available checks for the binary and learns the version once.
func (s *sysbench) available(ctx context.Context) error {
	path, v, err := findTool(ctx, "sysbench", "0.4", "older releases lack the tests perflab runs")
	if err != nil {
		return err
	}
	s.path, s.version, s.legacy = path, v, !versionAtLeast(v, "1.0")
	return nil
}

// setup is the whole Setup of the sysbench probes that start nothing:
// parse the probe's parameters, find sysbench and record its version.
func (s *sysbench) setup(ctx context.Context, env *probe.Env, parse func(probe.Params) error) error {
	if err := parse(env.Params); err != nil {
		return err
	}
	if err := s.available(ctx); err != nil {
		return err
	}
	env.ToolVersion = s.version
	return nil
}

// argv builds a sysbench command line. dur 0 leaves the time limit out
// (tests with a fixed amount of work, like mutex).
func (s *sysbench) argv(test string, threads int, dur time.Duration, opts []string, command string) []string {
	a := []string{s.path}
	if s.legacy {
		a = append(a, "--test="+test, "--num-threads="+strconv.Itoa(threads))
		if dur > 0 {
			a = append(a, "--max-time="+secondsArg(dur), "--max-requests=0")
		}
	} else {
		a = append(a, test, "--threads="+strconv.Itoa(threads))
		if dur > 0 {
			a = append(a, "--time="+secondsArg(dur))
		}
	}
	a = append(a, opts...)
	return append(a, command)
}

// run runs one sysbench test and parses it, failing unless the output has
// every one of the keys (SysbenchResult.Has) the caller reads; it records
// the command line (the first one as the run's command, the others as
// notes).
func (s *sysbench) run(ctx context.Context, env *probe.Env, dir string, argv []string, timeout time.Duration, keys ...string) (*SysbenchResult, error) {
	recordCommand(env, argv)
	res, err := runTool(ctx, invocation{tool: "sysbench", argv: argv, dir: dir, timeout: timeout})
	if err != nil {
		if te, ok := err.(*ToolError); ok && te.Tail == "" {
			te.Tail = tail(res.stdout, 3)
		}
		return nil, err
	}
	r, perr := ParseSysbench(string(res.stdout))
	if perr != nil {
		return nil, &ToolError{Tool: "sysbench", Command: argv, ExitCode: res.exitCode, Reason: perr.Error(), Tail: tailOf(res)}
	}
	if len(r.Fatal) > 0 {
		return nil, &ToolError{Tool: "sysbench", Command: argv, ExitCode: res.exitCode, Reason: "reported FATAL: " + r.Fatal[0]}
	}
	if err := requireValues(r, argv, keys...); err != nil {
		return nil, err
	}
	return r, nil
}

// recordCommand keeps the exact command line for the run: the first one
// run becomes Env.Command, later different ones are notes.
func recordCommand(env *probe.Env, argv []string) {
	if len(env.Command) == 0 {
		env.Command = append([]string(nil), argv...)
		return
	}
	if shellJoin(env.Command) == shellJoin(argv) {
		return
	}
	addNote(&env.Notes, "also ran: "+shellJoin(argv))
}

// requireValues fails, naming the first one missing, unless sysbench
// printed every one of keys: a value the parser left unset reads as 0,
// which must not be stored as a measurement.
func requireValues(r *SysbenchResult, argv []string, keys ...string) error {
	for _, key := range keys {
		if !r.Has[key] {
			return &ToolError{Tool: "sysbench", Command: argv, ExitCode: 0, Reason: fmt.Sprintf("output has no %s", key)}
		}
	}
	return nil
}

// toolTimeout bounds a tool run that should take d: generous, so a slow
// host is not failed, but finite, so a hung tool cannot hang the suite.
func toolTimeout(d time.Duration) time.Duration {
	return 3*d + 30*time.Second
}
