package own

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/perflab/perflab/internal/clierr"
	"github.com/perflab/perflab/internal/probe"
	"github.com/perflab/perflab/internal/run"
)

const defaultTimeout = 60 * time.Second

// ExecDef is an exec probe's definition: the command and how to run it.
type ExecDef struct {
	Cmd     string
	Shell   bool
	Prepare string // before every sample, not timed
	Cleanup string // once after the last sample
	Timeout time.Duration
	Metrics []MetricSpec
	Env     []string // extra KEY=VALUE for the command
	Dir     string   // working directory ("" = perflab's)
}

// Params is the definition as the run records it.
func (d ExecDef) Params() probe.Params {
	specs := make([]string, len(d.Metrics))
	for i, m := range d.Metrics {
		specs[i] = m.String()
	}
	p := probe.Params{
		"cmd": d.Cmd, "shell": fmt.Sprint(d.Shell), "prepare": d.Prepare, "cleanup": d.Cleanup,
		"timeout": d.Timeout.String(), "metric": strings.Join(specs, "\n"), "dir": d.Dir,
		"env": strings.Join(d.Env, "\n"),
	}
	return p
}

// execDefFrom reads a definition back from parameters.
func execDefFrom(p probe.Params) (ExecDef, error) {
	d := ExecDef{Cmd: p["cmd"], Prepare: p["prepare"], Cleanup: p["cleanup"], Dir: p["dir"]}
	switch p["shell"] {
	case "", "false", "no", "0":
	case "true", "yes", "1":
		d.Shell = true
	default:
		return d, fmt.Errorf("parameter shell=%q: say true or false", p["shell"])
	}
	d.Timeout = defaultTimeout
	if t := p["timeout"]; t != "" {
		v, err := time.ParseDuration(t)
		if err != nil || v <= 0 {
			return d, fmt.Errorf("parameter timeout=%q: not a positive duration (e.g. 30s)", t)
		}
		d.Timeout = v
	}
	for _, l := range strings.Split(p["metric"], "\n") {
		if strings.TrimSpace(l) == "" {
			continue
		}
		m, err := ParseMetricSpec(l)
		if err != nil {
			return d, err
		}
		for _, o := range d.Metrics {
			if o.Name == m.Name {
				return d, fmt.Errorf("metric %s is defined twice", m.Name)
			}
		}
		d.Metrics = append(d.Metrics, m)
	}
	for _, kv := range strings.Split(p["env"], "\n") {
		if kv = strings.TrimSpace(kv); kv == "" {
			continue
		}
		if k, _, ok := strings.Cut(kv, "="); !ok || k == "" {
			return d, fmt.Errorf("parameter env: %q is not KEY=VALUE", kv)
		}
		d.Env = append(d.Env, kv)
	}
	if strings.TrimSpace(d.Cmd) == "" {
		return d, fmt.Errorf("no command (e.g. exec:'sysbench cpu run')")
	}
	for _, c := range []string{d.Cmd, d.Prepare, d.Cleanup} {
		if c == "" || d.Shell {
			continue
		}
		if _, err := SplitArgs(c); err != nil {
			return d, fmt.Errorf("%v; add --param shell=true to run it with sh -c", err)
		}
	}
	return d, nil
}

// Exec runs a command per sample: wall time, user and system CPU time and
// peak resident memory of the command and its children, and the numbers
// its output reports (MetricSpec).
type Exec struct {
	name  string
	doc   string
	def   probe.Params // the definition; --param may override all but cmd
	fixed string       // cmd, which the name stands for

	// Set up per run.
	cfg   ExecDef
	spawn spawnCost
}

type spawnCost struct{ wall, user, sys float64 } // ms

// NewExec returns the probe "exec:CMD" or a named one.
func NewExec(name, doc string, d ExecDef) *Exec {
	if doc == "" {
		doc = "runs " + d.Cmd
	}
	return &Exec{name: name, doc: doc, def: d.Params(), fixed: d.Cmd}
}

func (e *Exec) Name() string { return e.name }
func (e *Exec) Doc() string {
	return e.doc + "; per sample: wall time, user and system CPU, max RSS and the metrics taken from its output."
}
func (e *Exec) Defaults(bool) probe.Params { return e.def.Merge(nil) }

// Metrics checks the parameters and lists the metrics.
func (e *Exec) Metrics(p probe.Params) ([]run.Metric, error) {
	if p["cmd"] != e.fixed {
		return nil, clierr.Usagef("name another probe to run another command", "%s: the command is the probe's and cannot be set with --param cmd", e.name)
	}
	d, err := execDefFrom(p)
	if err != nil {
		return nil, clierr.Usagef("see docs/probes.md#exec", "%s: %v", e.name, err)
	}
	ms := []run.Metric{
		{Name: "wall_time", Unit: "ms", Better: run.Lower},
		{Name: "user_time", Unit: "ms", Better: run.Lower},
		{Name: "sys_time", Unit: "ms", Better: run.Lower},
		{Name: "max_rss", Unit: "KiB", Better: run.Lower},
	}
	for _, m := range d.Metrics {
		ms = append(ms, m.Metric())
	}
	return ms, nil
}

// Setup checks the command exists, measures the shell's start-up when a
// shell is used, and runs the command once to check that every metric is
// in its output: a pattern that never matches is a mistake in the
// definition (exit 2), not a failed measurement.
func (e *Exec) Setup(ctx context.Context, env *probe.Env) error {
	d, err := execDefFrom(env.Params)
	if err != nil {
		return clierr.Usagef("see docs/probes.md#exec", "%s: %v", e.name, err)
	}
	e.cfg = d
	argv := e.argv(d.Cmd)
	if _, err := exec.LookPath(argv[0]); err != nil {
		return clierr.Usagef("install it or give its full path", "%s: command %q not found", e.name, argv[0])
	}
	env.Command = argv
	if d.Shell {
		e.spawn = measureSpawn(ctx, env)
		env.Notes = append(env.Notes, fmt.Sprintf("shell start-up (%.2f ms wall, median of 15 runs of sh -c '') subtracted from each sample, as hyperfine does", e.spawn.wall))
	}
	res, err := e.run(ctx, env, argv)
	if err != nil {
		return err
	}
	for _, m := range d.Metrics {
		if _, err := m.Extract(res.stdout, res.stderr); err != nil {
			return clierr.Usagef("fix the metric's pattern; the command printed: "+truncate(oneLine(res.stdout), 120), "%s: %v", e.name, err)
		}
	}
	return nil
}

func (e *Exec) argv(cmd string) []string {
	if e.cfg.Shell {
		return []string{"/bin/sh", "-c", cmd}
	}
	a, _ := SplitArgs(cmd) // checked by execDefFrom
	return a
}

type execResult struct {
	wall, user, sys time.Duration
	maxRSSKiB       int64
	stdout, stderr  []byte
}

// Iterate runs prepare (untimed), then the command.
func (e *Exec) Iterate(ctx context.Context, env *probe.Env) (map[string]float64, error) {
	if e.cfg.Prepare != "" {
		if _, err := e.run(ctx, env, e.argv(e.cfg.Prepare)); err != nil {
			return nil, fmt.Errorf("prepare: %w", err)
		}
	}
	res, err := e.run(ctx, env, e.argv(e.cfg.Cmd))
	if err != nil {
		return nil, err
	}
	out := map[string]float64{
		"wall_time": max(0, ms(res.wall)-e.spawn.wall),
		"user_time": max(0, ms(res.user)-e.spawn.user),
		"sys_time":  max(0, ms(res.sys)-e.spawn.sys),
		"max_rss":   float64(res.maxRSSKiB),
	}
	for _, m := range e.cfg.Metrics {
		v, err := m.Extract(res.stdout, res.stderr)
		if err != nil {
			return nil, err
		}
		out[m.Name] = v
	}
	return out, nil
}

// Teardown runs the cleanup command, once.
func (e *Exec) Teardown(env *probe.Env) error {
	if e.cfg.Cleanup == "" {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), e.cfg.Timeout)
	defer cancel()
	if _, err := e.run(ctx, env, e.argv(e.cfg.Cleanup)); err != nil {
		return fmt.Errorf("cleanup: %w", err)
	}
	return nil
}

// run starts argv in its own process group (a timeout or Ctrl-C kills the
// whole group, grandchildren included) and waits for it.
func (e *Exec) run(ctx context.Context, env *probe.Env, argv []string) (*execResult, error) {
	ctx, cancel := context.WithTimeout(ctx, e.cfg.Timeout)
	defer cancel()
	c := exec.CommandContext(ctx, argv[0], argv[1:]...)
	c.Dir = e.cfg.Dir
	c.Env = append(os.Environ(), e.cfg.Env...)
	var stdout bytes.Buffer
	stderr := &tail{max: 4096}
	c.Stdout = &limited{b: &stdout, max: 16 << 20}
	c.Stderr = stderr
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	c.Cancel = func() error { return syscall.Kill(-c.Process.Pid, syscall.SIGKILL) }
	c.WaitDelay = 2 * time.Second
	floor := vmHWM("self")
	t := time.Now()
	err := c.Start()
	var peak *peakWatch
	if err == nil {
		peak = watchPeak(c.Process.Pid)
		err = c.Wait()
	}
	wall := time.Since(t)
	polled := peak.stop()
	// Whatever is left of the group (a daemonised grandchild) goes too.
	if c.Process != nil {
		_ = syscall.Kill(-c.Process.Pid, syscall.SIGKILL)
	}
	if ctx.Err() == context.DeadlineExceeded {
		return nil, fmt.Errorf("%s: timed out after %s (set --param timeout=…)", argv[len(argv)-1], e.cfg.Timeout)
	}
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return nil, fmt.Errorf("%q exited with %s: %s", strings.Join(argv, " "), exitStatus(ee), stderr.lastLine())
		}
		return nil, fmt.Errorf("%q: %v", strings.Join(argv, " "), err)
	}
	res := &execResult{wall: wall, stdout: stdout.Bytes(), stderr: stderr.b}
	if ru, ok := c.ProcessState.SysUsage().(*syscall.Rusage); ok {
		res.user = time.Duration(ru.Utime.Nano())
		res.sys = time.Duration(ru.Stime.Nano())
		res.maxRSSKiB = ownPeak(ru.Maxrss, floor, polled)
	}
	return res, nil
}

func exitStatus(ee *exec.ExitError) string {
	if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return "signal " + ws.Signal().String()
	}
	return fmt.Sprintf("status %d", ee.ExitCode())
}

// measureSpawn is the median cost of sh -c ” (hyperfine's shell-spawn
// correction).
func measureSpawn(ctx context.Context, env *probe.Env) spawnCost {
	var w, u, s []float64
	for i := 0; i < 15 && ctx.Err() == nil; i++ {
		c := exec.CommandContext(ctx, "/bin/sh", "-c", "")
		t := time.Now()
		if c.Run() != nil {
			continue
		}
		w = append(w, ms(time.Since(t)))
		if ru, ok := c.ProcessState.SysUsage().(*syscall.Rusage); ok {
			u = append(u, ms(time.Duration(ru.Utime.Nano())))
			s = append(s, ms(time.Duration(ru.Stime.Nano())))
		}
	}
	return spawnCost{median(w), median(u), median(s)}
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	sort.Float64s(xs)
	n := len(xs)
	if n%2 == 1 {
		return xs[n/2]
	}
	return (xs[n/2-1] + xs[n/2]) / 2
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

// limited keeps the first max bytes and drops the rest (a command that
// floods its output must not fill memory).
type limited struct {
	b   *bytes.Buffer
	max int
}

func (l *limited) Write(p []byte) (int, error) {
	if room := l.max - l.b.Len(); room > 0 {
		l.b.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

// tail keeps the last max bytes of standard error.
type tail struct {
	b   []byte
	max int
}

func (t *tail) Write(p []byte) (int, error) {
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = append([]byte(nil), t.b[len(t.b)-t.max:]...)
	}
	return len(p), nil
}

func (t *tail) lastLine() string {
	s := strings.TrimSpace(string(t.b))
	if s == "" {
		return "no error output"
	}
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return truncate(strings.TrimSpace(s), 200)
}

func oneLine(b []byte) string {
	return strings.Join(strings.Fields(string(b)), " ")
}

// Peak memory. The kernel's ru_maxrss for a child is not its own peak: at
// exec Linux records the peak of the address space being replaced, and Go
// starts children with vfork, so that is perflab's own peak (tens of MiB,
// and growing over a session: an A/A pair would differ). ownPeak takes
// ru_maxrss when it is above perflab's peak at the start (then it is the
// command's own), else the command's VmHWM as polled from /proc while it
// ran (its own address space's high-water mark; growth after the last
// poll of a command shorter than the poll interval is not seen).
func ownPeak(ruMaxRSS, floor, polled int64) int64 {
	if floor > 0 && ruMaxRSS > floor {
		return ruMaxRSS
	}
	return polled
}

// vmHWM reads VmHWM (KiB) of /proc/PID/status; 0 when unreadable (a
// process that has exited has none).
func vmHWM(pid string) int64 {
	b, err := os.ReadFile("/proc/" + pid + "/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return n
		}
	}
	return 0
}

type peakWatch struct {
	done chan struct{}
	max  chan int64
}

// watchPeak polls the command's VmHWM every 2 ms until stop.
func watchPeak(pid int) *peakWatch {
	w := &peakWatch{done: make(chan struct{}), max: make(chan int64, 1)}
	id := strconv.Itoa(pid)
	go func() {
		best := vmHWM(id)
		tk := time.NewTicker(2 * time.Millisecond)
		defer tk.Stop()
		for {
			select {
			case <-w.done:
				w.max <- best
				return
			case <-tk.C:
				best = max(best, vmHWM(id))
			}
		}
	}()
	return w
}

func (w *peakWatch) stop() int64 {
	if w == nil {
		return 0
	}
	close(w.done)
	return <-w.max
}
