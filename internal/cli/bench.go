package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"time"

	"github.com/perflab/perflab/internal/bench"
	"github.com/perflab/perflab/internal/clierr"
	"github.com/perflab/perflab/internal/container"
	"github.com/perflab/perflab/internal/cpuset"
	"github.com/perflab/perflab/internal/hostfs"
	"github.com/perflab/perflab/internal/probe/registry"
	"github.com/perflab/perflab/internal/remote"
	"github.com/perflab/perflab/internal/report"
	"github.com/perflab/perflab/internal/run"
	"github.com/perflab/perflab/internal/store"
	"github.com/perflab/perflab/internal/termfmt"
	"github.com/spf13/cobra"
)

// probeCatalog is every probe: the builtin probes, the adapters around
// standard tools, the named probes of the probes file (--probes, default
// ./perflab.yaml) and exec:/http: names (package registry).
func probeCatalog(e *env) (*bench.Catalog, error) {
	return registry.Open(e.probes)
}

// resolvePlan resolves probe names and --param values on the catalog.
func resolvePlan(e *env, names, params []string) (*bench.Plan, error) {
	c, err := probeCatalog(e)
	if err != nil {
		return nil, err
	}
	return c.Resolve(names, params)
}

type benchFlags struct {
	out                      outputFlags
	label, cpus, dir, db     string
	serverCPUs, clientCPUs   string
	precision                float64
	maxRuns, minRuns, warmup int
	budget                   time.Duration
	params                   []string
	noStore, noNoiseCheck    bool
	repeat, blocks           int
	ref                      string // --container
	pid                      int
	states                   []string
	concurrency              string
	untilVerdict             bool
	maxTime                  time.Duration
}

// benchFlagNames words bench.Options fields as the flags that set them.
var benchFlagNames = map[string]string{
	"Precision": "--precision", "MinRuns": "--min-runs", "MaxRuns": "--max-runs", "Warmup": "--warmup",
	"Budget": "--budget", "CPUs": "--cpus", "Dir": "--dir", "Params": "--param",
	"Repeat": "--repeat", "States": "--state", "Blocks": "--blocks", "MaxTime": "--max-time",
}

func newBenchCmd(e *env) *cobra.Command {
	var f benchFlags
	cmd := &cobra.Command{
		Use:   "bench [SUITE|PROBE]...",
		Short: "Measure the host with builtin probes, with confidence intervals",
		Long: `bench runs suites or single probes. Each probe is warmed up, then repeated
until the 95% confidence interval of every metric's median is within
±precision (default ±1%), or until --max-runs or the --budget is reached; the
report says which. Every raw sample, the parameters, the probe version, the
CPU placement, a host snapshot and a 1-second series of host activity (CPU
by state, context switches, interrupts, run queue, memory, PSI) are stored
under --label for 'perflab compare'.

Ctrl-C stops cleanly: the partial run is stored, marked incomplete, and the
probe's scratch files are removed.

--param key=value applies to every selected probe that has the parameter;
--param PROBE:key=value to one probe. 'perflab bench list' shows suites,
probes and their parameters. Where a name is both a suite and a probe (cpu,
disk), the suite runs; probe:NAME runs the probe alone. exec:CMD, an
http:// or https:// URL, or a probe named in perflab.yaml (--probes) is
your own workload as a probe (docs/own-workload.md).

Runs are the unit that 'perflab compare' decides on (docs/statistics.md):
--repeat N measures every probe N times, round-robin over the probes, so the
host's drift falls on all of them alike. --state NAME='CMD' (twice or more)
interleaves states: in each of --blocks blocks perflab runs each state's
command (sh -c) in a random order and measures right after it; the blocks
pair, the host's drift between them cancels, and the effect of each state
against the first is printed with its 95% CI. Each state's runs are stored
under LABEL/NAME with their block.

--until-verdict makes the interleaved session sequential: after every block
(from the third) it decides, and stops as soon as every effect is better,
worse or equivalent, at the latest after --max-time (default 2m). Each look
tests at its share of the 5% alpha (Pocock-type spending), so a session with
nothing changed calls a change at most 5% of the time; blocks are short (3
samples a state unless --min-runs/--max-runs say otherwise), as the power
simulation over this project's real A/A blocks chose (docs/statistics.md,
"Time to a verdict").`,
		Example: `  perflab bench quick --label before          # every category in about a minute
  perflab bench baseline --label node7         # the full pre-production baseline (~10 min)
  perflab bench memory.latency --cpus 1 --param max=64MiB
  perflab bench disk --dir /var/lib/mysql      # test the filesystem that matters
  perflab bench kv --server-cpus 0 --client-cpus 1   # redis-server and redis-benchmark on separate cores
  perflab bench db --concurrency 1,20,100      # MySQL point selects: where does TPS peak, where does it fall?
  perflab bench 'exec:./my-bench --json' --param 'metric=score,pt,higher,json:score'   # your command, its own number
  perflab bench http://127.0.0.1:8080/api --param connections=64   # your endpoint (or a name from perflab.yaml)
  perflab bench probe:cpu --precision 0.005 --budget 2m --format json -o cpu.json
  perflab bench quick --repeat 3 --label before  # three runs of each probe: a verdict that survives drift
  perflab bench probe:cpu --cpus 1 --state alone='pkill -f neighbour || true' --state neighbour='./neighbour & sleep 0.2'
  perflab bench probe:cpu --cpus 1 --param threads=1 --state off='true' --state on='./duty-cycle &' --until-verdict --max-time 2m
  perflab bench probe:cpu --container web1 --label container   # inside its cgroup (quota, cpuset) and network namespace
  perflab bench list`,
		RunE: func(cmd *cobra.Command, args []string) error { return runBenchCmd(cmd, e, &f, args) },
	}
	f.register(cmd)
	cmd.AddCommand(newBenchListCmd(e))
	return cmd
}

func (f *benchFlags) register(cmd *cobra.Command) {
	f.out.register(cmd, "text", "text", "json", "md")
	registerContainer(cmd, &f.ref)
	cmd.Flags().IntVar(&f.pid, "pid", 0, "measure inside the cgroup and network namespace of process PID (the universal form of --container)")
	fl := cmd.Flags()
	fl.StringVar(&f.label, "label", "", "label the runs (e.g. before, after, node7) for compare")
	fl.StringVar(&f.cpus, "cpus", "", "pin the probes to these CPUs (list form: 0-3,8)")
	fl.StringVar(&f.serverCPUs, "server-cpus", "", "pin the servers that tool probes start (nginx, redis-server, mariadbd, …) to these CPUs")
	fl.StringVar(&f.clientCPUs, "client-cpus", "", "pin the load generators of tool probes (wrk, redis-benchmark, sysbench, …) to these CPUs")
	fl.Float64Var(&f.precision, "precision", bench.DefaultPrecision, "stop when every 95% CI of the median is within ±this fraction (0 disables)")
	fl.IntVar(&f.maxRuns, "max-runs", bench.DefaultMaxRuns, "at most this many measured repetitions per probe")
	fl.IntVar(&f.minRuns, "min-runs", bench.DefaultMinRuns, "at least this many before the precision stop (6 is the fewest with a 95% CI)")
	fl.DurationVar(&f.budget, "budget", bench.DefaultBudget, "time budget per probe, setup included (suites set their own unless given)")
	fl.IntVar(&f.warmup, "warmup", bench.DefaultWarmup, "discarded warm-up repetitions per probe")
	fl.StringArrayVar(&f.params, "param", nil, "probe parameter key=value or PROBE:key=value (repeatable)")
	fl.StringVar(&f.dir, "dir", "", "directory for scratch files (the disk probe tests its filesystem; default $TMPDIR)")
	fl.StringVar(&f.db, "db", "", "run database (default $XDG_DATA_HOME/perflab/perflab.db)")
	fl.BoolVar(&f.noStore, "no-store", false, "print the results without storing the runs")
	fl.BoolVar(&f.noNoiseCheck, "no-noise-check", false, "skip the host-noise and host-drift readings before and after each probe (docs/bench.md)")
	fl.StringVar(&f.concurrency, "concurrency", "", "measure the server probes at each of these client counts: 1,20,100 or 1-128 (doubling) or 20-100/20; reports the peak and where throughput falls")
	fl.IntVar(&f.repeat, "repeat", 1, "measure every probe this many times, round-robin over the probes (runs are the unit compare decides on)")
	fl.StringArrayVar(&f.states, "state", nil, "NAME='CMD': a state of an interleaved A/B; give two or more (docs/statistics.md)")
	fl.IntVar(&f.blocks, "blocks", 10, "with --state: at most this many blocks (stops earlier when every effect is within ±precision)")
	fl.BoolVar(&f.untilVerdict, "until-verdict", false, "with --state: stop as soon as every effect has a verdict (alpha spent over the looks), at the latest after --max-time")
	fl.DurationVar(&f.maxTime, "max-time", bench.DefaultMaxTime, "with --until-verdict: the most time the session measures")
}

// interleave maps --state and --blocks to the interleaving options; nil
// when no state is given.
func (f *benchFlags) interleave(e *env, changed func(string) bool, opt *bench.Options) (*bench.InterleaveOptions, error) {
	if len(f.states) == 0 {
		for _, fl := range []string{"blocks", "until-verdict", "max-time"} {
			if changed(fl) {
				return nil, clierr.Usagef("give the states to interleave: --state A='CMD' --state B='CMD'", "--%s needs --state", fl)
			}
		}
		return nil, nil
	}
	if changed("max-time") && !f.untilVerdict {
		return nil, clierr.Usagef("add --until-verdict, or bound a fixed session with --blocks", "--max-time needs --until-verdict")
	}
	if f.untilVerdict && f.maxTime <= 0 {
		return nil, clierr.Usagef("e.g. --max-time 2m", "--max-time %v is not a positive duration", f.maxTime)
	}
	if changed("repeat") {
		return nil, clierr.Usagef("interleaved states are measured once per block: use --blocks", "--repeat and --state do not go together")
	}
	io := &bench.InterleaveOptions{Blocks: f.blocks, UntilVerdict: f.untilVerdict, MaxTime: f.maxTime}
	if f.untilVerdict {
		f.verdictDesign(io, opt, changed)
	}
	for _, s := range f.states {
		name, command, ok := strings.Cut(s, "=")
		if !ok {
			return nil, clierr.Usagef("e.g. --state before='sysctl -w vm.swappiness=60'", "--state %q is not NAME=CMD", s)
		}
		io.States = append(io.States, bench.State{Name: name, Apply: shellState(e, name, command)})
	}
	return io, nil
}

// verdictDesign gives a sequential session the short blocks the power
// simulation chose, where the flags leave them open.
func (f *benchFlags) verdictDesign(io *bench.InterleaveOptions, opt *bench.Options, changed func(string) bool) {
	if !changed("blocks") {
		io.Blocks = bench.MaxRepeat
	}
	if !changed("min-runs") && !changed("max-runs") {
		opt.MinRuns, opt.MaxRuns, opt.Precision = bench.VerdictSamples, bench.VerdictSamples, 0
	}
	if !changed("warmup") {
		opt.Warmup = bench.VerdictWarmup
	}
}

// shellState runs a state's command with sh -c, its output on stderr.
func shellState(e *env, name, command string) func(context.Context) error {
	return func(ctx context.Context) error {
		cmd := exec.CommandContext(ctx, "sh", "-c", command)
		cmd.Stdout, cmd.Stderr = e.stderr, e.stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("%s: %q: %w", name, command, err)
		}
		return nil
	}
}

// options maps the flags to the harness options. --max-runs left at its
// default is the harness default (raised to --min-runs when that is
// higher), as it always was.
func (f *benchFlags) options(changed func(string) bool) (bench.Options, error) {
	opt := bench.DefaultOptions()
	opt.Precision, opt.MinRuns, opt.Warmup, opt.Budget = f.precision, f.minRuns, f.warmup, f.budget
	opt.Dir, opt.Label, opt.Version, opt.NoNoiseCheck, opt.Repeat = f.dir, f.label, Version, f.noNoiseCheck, f.repeat
	if changed("max-runs") {
		opt.MaxRuns = f.maxRuns
	}
	if f.cpus != "" {
		list, err := parseCPUs("--cpus", f.cpus)
		if err != nil {
			return opt, err
		}
		opt.CPUs = list
	}
	if err := opt.Validate(); err != nil {
		return opt, optionErr(err, benchFlagNames)
	}
	if f.dir != "" {
		return opt, optionErr(bench.CheckDir(f.dir), benchFlagNames)
	}
	return opt, nil
}

// plan resolves the named suites and probes with their placement flags;
// explicit --budget and --max-runs override every entry's own limits.
func (f *benchFlags) plan(e *env, args []string, changed func(string) bool) (*bench.Plan, error) {
	plan, err := resolvePlan(e, args, f.params)
	if err != nil {
		return nil, optionErr(err, benchFlagNames)
	}
	if err := applyPlacement(plan, "server_cpus", "--server-cpus", f.serverCPUs); err != nil {
		return nil, err
	}
	if err := applyPlacement(plan, "client_cpus", "--client-cpus", f.clientCPUs); err != nil {
		return nil, err
	}
	if f.concurrency != "" && plan.SetWhereKnown("concurrency", f.concurrency) == 0 {
		return nil, clierr.Usagef("it applies to sysbench.oltp_point_select, redis-benchmark, wrk.nginx and etcd (suites db, kv, web, etcd)",
			"--concurrency: none of the selected probes runs a server")
	}
	for i := range plan.Items {
		if changed("budget") {
			plan.Items[i].Budget = f.budget
		}
		if changed("max-runs") {
			plan.Items[i].MaxRuns = f.maxRuns
		}
	}
	return plan, nil
}

func runBenchCmd(cmd *cobra.Command, e *env, f *benchFlags, args []string) error {
	if err := f.out.validate(); err != nil {
		return err
	}
	if err := container.AwaitPlacement(); err != nil {
		return clierr.Runtimef("", "%v", err)
	}
	if f.ref != "" || f.pid != 0 {
		return benchInside(cmd, e, f)
	}
	changed := cmd.Flags().Changed
	opt, err := f.options(changed)
	if err != nil {
		return err
	}
	plan, err := f.plan(e, args, changed)
	if err != nil {
		return err
	}
	il, err := f.interleave(e, changed, &opt)
	if err != nil {
		return err
	}
	closePeer, err := attachPeer(cmd, e, plan)
	if err != nil {
		return err
	}
	defer closePeer()
	opt.Suite = plan.Suite
	if err := bench.Validate(plan.Items, opt); err != nil {
		return optionErr(err, benchFlagNames)
	}
	// Open the store before measuring: a database this perflab cannot
	// write must fail now, not after ten minutes.
	var st *store.Store
	if !f.noStore {
		if st, err = openStore(f.db); err != nil {
			return err
		}
		defer st.Close()
	}
	w, commit, err := f.out.open(e.stdout)
	if err != nil {
		return err
	}
	for _, n := range plan.Notes {
		fmt.Fprintln(e.stderr, "note: "+n)
	}
	return runBench(cmd.Context(), e, plan, opt, il, st, benchOutput{w, commit, f.out.format})
}

// parseCPUs reads a CPU list flag and checks that perflab may use them.
func parseCPUs(flag, value string) ([]int, error) {
	list, err := cpuset.ParseList(value)
	if err != nil || len(list) == 0 {
		return nil, clierr.Usagef("e.g. "+flag+" 0-3,8", "bad %s %q", flag, value)
	}
	if err := bench.CheckCPUs(list); err != nil {
		return nil, optionErr(err, map[string]string{"CPUs": flag})
	}
	return list, nil
}

// applyPlacement sets a client/server probe parameter from its flag on
// every planned probe that has it.
func applyPlacement(plan *bench.Plan, key, flag, value string) error {
	if value == "" {
		return nil
	}
	list, err := parseCPUs(flag, value)
	if err != nil {
		return err
	}
	if !plan.SetParam(key, cpuset.FormatList(list)) {
		return clierr.Usagef("it applies to wrk.nginx, redis-benchmark, sysbench.oltp_point_select, qperf, iperf3 and sockperf", "%s: none of the selected probes starts a server", flag)
	}
	return nil
}

// benchOutput is where the bench report goes and in which format.
type benchOutput struct {
	w      io.Writer
	commit func() error
	format string
}

// runBench measures the plan in a session on this host, storing each run
// as it finishes, and writes the report of what was measured.
func runBench(ctx context.Context, e *env, plan *bench.Plan, opt bench.Options, il *bench.InterleaveOptions, st *store.Store, out benchOutput) error {
	fs, err := hostfs.New("/")
	if err != nil {
		return clierr.Runtimef("", "reading the host: %v", err)
	}
	sess, err := bench.NewSession(fs, st)
	if err != nil {
		return clierr.Runtimef("", "%v", err)
	}
	for _, n := range sess.Notes {
		fmt.Fprintln(e.stderr, "note: "+n)
	}
	opt.Progress = bench.NewProgress(e.stderr, termfmt.IsTTY(e.stderr))
	runs, res, runErr := measure(ctx, sess, plan, opt, il)
	if len(runs) > 0 {
		style := termfmt.Style{On: out.format == report.FormatText && out.w == e.stdout && termfmt.ColorEnabled(e.stdout)}
		if err := report.Write(out.w, &report.BenchReport{Runs: runs, Interleaved: res}, out.format, report.Options{Style: style}); err != nil {
			return clierr.Runtimef("", "writing the report: %v", err)
		}
		if err := out.commit(); err != nil {
			return clierr.Runtimef("check that the directory is writable", "%v", err)
		}
	}
	if st != nil && sess.Stored > 0 {
		fmt.Fprintf(e.stderr, "stored %d run(s) in %s%s\n", sess.Stored, st.Path, benchLabelNote(opt.Label))
	}
	return benchErr(runErr, runs, st != nil)
}

// measure runs the plan: plainly (with --repeat rounds) or interleaved.
func measure(ctx context.Context, sess *bench.Session, plan *bench.Plan, opt bench.Options, il *bench.InterleaveOptions) ([]*run.Run, *bench.Interleaved, error) {
	if il == nil {
		runs, err := sess.Run(ctx, plan.Items, opt)
		return runs, nil, err
	}
	return sess.Interleave(ctx, plan.Items, *il, opt)
}

// benchErr words the session's error: an interruption says what was
// kept, a run that could not be stored says the measurements are lost.
func benchErr(err error, runs []*run.Run, storing bool) error {
	var se *bench.StoreError
	switch {
	case errors.As(err, &se):
		return clierr.Runtimef("the measurements were not stored", "%v", se)
	case errors.Is(err, bench.ErrInterrupted):
		var ids []string
		for _, r := range runs {
			if !r.Complete {
				ids = append(ids, report.ShortID(r.ID))
			}
		}
		hint := "nothing was measured"
		if len(ids) > 0 && storing {
			hint = "partial run " + strings.Join(ids, ", ") + " stored, marked incomplete"
		}
		return clierr.Runtimef(hint, "interrupted")
	}
	return optionErr(err, benchFlagNames)
}

func benchLabelNote(l string) string {
	if l == "" {
		return " (no --label)"
	}
	return " under label " + l
}

func newBenchListCmd(e *env) *cobra.Command {
	var out outputFlags
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List suites and probes with what they measure and their parameters",
		Example: `  perflab bench list
  perflab bench list --format json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := out.validate(); err != nil {
				return err
			}
			c, err := probeCatalog(e)
			if err != nil {
				return err
			}
			return writeResult(&out, e.stdout, c.List())
		},
	}
	out.register(cmd, "text", "text", "json")
	return cmd
}

// benchInside is bench --container/--pid: the same command line run by a
// copy of perflab inside the target's cgroups and network namespace
// (container.Target.Exec); its output and exit code are the command's.
func benchInside(cmd *cobra.Command, e *env, f *benchFlags) error {
	fs, err := openRoot("/")
	if err != nil {
		return err
	}
	var t *container.Target
	if f.ref != "" && f.pid != 0 {
		return clierr.Usagef("use one of them", "--container and --pid both name the target")
	} else if f.ref != "" {
		t, err = container.Open(fs, f.ref)
	} else {
		t, err = container.OpenPID(fs, f.pid)
	}
	if err != nil {
		return targetErr(err)
	}
	args := remote.ForwardArgs(e.args, []string{"--container", "--pid"}, nil)
	code, err := t.Exec(cmd.Context(), args, e.stdin, e.stdout, e.stderr)
	if err != nil {
		return targetErr(err)
	}
	if code != 0 {
		return &clierr.Error{Code: code} // the copy said why
	}
	return nil
}
