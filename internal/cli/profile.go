package cli

import (
	"fmt"
	"io"
	"time"

	"github.com/perflab/perflab/internal/clierr"
	"github.com/perflab/perflab/internal/hostfs"
	"github.com/perflab/perflab/internal/profile"
	"github.com/perflab/perflab/internal/report"
	"github.com/perflab/perflab/internal/termfmt"
	"github.com/spf13/cobra"
)

type profileFlags struct {
	opt      profile.Options
	duration float64
	g        graphOptions
	out      outputFlags
	top      int
	blocked  profile.Blocked
}

func newProfileCmd(e *env) *cobra.Command {
	var f profileFlags
	cmd := &cobra.Command{
		Use:   "profile [-p PID | -a | -- COMMAND [ARG…]]",
		Short: "Record a CPU profile with perf and draw its flame graph",
		Long: `profile records on-CPU stacks with 'perf record -g' (the cycles event, or the
software cpu-clock event on hosts without hardware counters, as in most VMs),
folds them, writes a flame graph and prints the hottest stacks and
functions. Before recording it checks that perf can work here — perf
installed, kernel.perf_event_paranoid and kernel.kptr_restrict (the audit
rules PERF-EVENT-PARANOID and PERF-KPTR-RESTRICT), the PID — and says exactly
what to change when it cannot. JIT frames (Java, Node, LuaJIT) are named
through /tmp/perf-PID.map when the runtime writes one.

The output format follows -o's extension: .svg (default profile.svg), .html,
.folded, .speedscope.json. Widths are the sum of sample periods: nanoseconds of
CPU for cpu-clock, events for hardware counters.`,
		Example: `  perflab profile -- ./myapp --bench        # profile a command until it exits
  perflab profile -p 1234 -d 30 -o app.html  # 30 s of a running process
  perflab profile -a -d 10 -F 99             # every CPU for 10 s
  perflab profile -p $(pgrep -n java) --colors java -o jvm.svg
  perflab profile -p 1234 --off-cpu -d 10 -o blocked.svg   # where it waits
  perflab profile -p 1234 --locks -d 10                    # which locks it waits on`,
		RunE: func(cmd *cobra.Command, args []string) error { return runProfile(cmd, e, &f, args) },
	}
	f.register(cmd)
	return cmd
}

func (f *profileFlags) register(cmd *cobra.Command) {
	opt := &f.opt
	fl := cmd.Flags()
	fl.IntVarP(&opt.PID, "pid", "p", 0, "profile the running process PID")
	fl.BoolVarP(&opt.All, "all-cpus", "a", false, "profile every CPU (system-wide)")
	fl.Float64VarP(&f.duration, "duration", "d", 10, "seconds to record a PID or all CPUs; with a command, stop it after this long if given")
	fl.IntVarP(&opt.Freq, "freq", "F", 499, "sampling frequency in Hz")
	fl.StringVar(&opt.Event, "event", "", "perf event to sample (default: cycles, or cpu-clock where unsupported)")
	fl.IntVar(&f.top, "top", 10, "hottest stacks and functions to print")
	fl.BoolVar(&f.blocked.OffCPU, "off-cpu", false, "record time blocked (eBPF sched_switch) instead of on-CPU samples")
	fl.BoolVar(&f.blocked.Mixed, "mixed", false, "on-CPU (perf) and off-CPU time in one graph; off-CPU stacks end in [off-cpu]")
	fl.BoolVar(&f.blocked.Locks, "locks", false, "record futex (lock) waits by waiting stack and lock address")
	fl.DurationVar(&f.blocked.MinBlock, "min-block", time.Millisecond, "with --off-cpu/--mixed/--locks: ignore shorter blocks")
	f.g.register(cmd)
	f.out.register(cmd, "svg", "svg", "html", "folded", "speedscope")
}

// validate checks the target and limits and returns the graph format.
func (f *profileFlags) validate(cmd *cobra.Command, args []string) (string, error) {
	opt := &f.opt
	opt.Command = args
	if cmd.ArgsLenAtDash() < 0 && len(args) > 0 {
		return "", clierr.Usagef("put the command after --: perflab profile -- "+args[0], "unexpected argument %q", args[0])
	}
	n := 0
	for _, set := range []bool{opt.PID != 0, opt.All, len(opt.Command) > 0} {
		if set {
			n++
		}
	}
	switch {
	case n != 1:
		return "", clierr.Usagef("give exactly one of -p PID, -a, or -- COMMAND", "nothing (or more than one thing) to profile")
	case opt.PID < 0:
		return "", clierr.Usagef("", "-p %d is not a PID", opt.PID)
	case f.duration < 0 || f.duration > 24*3600:
		return "", clierr.Usagef("use 0 < -d <= 86400", "-d %g s is out of range", f.duration)
	case opt.Freq < 1 || opt.Freq > 100000:
		return "", clierr.Usagef("use 1..100000 Hz (99 or 499 are common)", "-F %d Hz is out of range", opt.Freq)
	}
	if f.blocked.Any() {
		if err := f.blocked.Validate(opt.Target); err != nil {
			return "", err
		}
	}
	opt.Duration = time.Duration(f.duration * float64(time.Second))
	if f.out.output == "" {
		f.out.output = "profile.svg"
	}
	format, err := graphFormat(cmd, &f.out, "svg")
	if err != nil {
		return "", err
	}
	return format, f.g.validate()
}

func runProfile(cmd *cobra.Command, e *env, f *profileFlags, args []string) error {
	format, err := f.validate(cmd, args)
	if err != nil {
		return err
	}
	fs, err := hostfs.New("/")
	if err != nil {
		return err
	}
	if f.blocked.Any() {
		return runBlockedProfile(e, cmd, fs, f, format)
	}
	ready, err := profile.CheckReadiness(fs, f.opt.Target)
	if err != nil {
		return err
	}
	for _, n := range ready.Notes {
		fmt.Fprintln(e.stderr, "perflab: note: "+n)
	}
	f.opt.Stderr = e.stderr
	if termfmt.IsTTY(e.stderr) && (len(f.opt.Command) == 0 || f.opt.Duration > 2*time.Second) {
		d := f.opt.Duration
		if d == 0 {
			d = 10 * time.Second
		}
		fmt.Fprintf(e.stderr, "perflab: recording for %s … (Ctrl-C stops early)\n", d)
	}
	p, err := profile.Record(cmd.Context(), ready, f.opt)
	if err != nil {
		return err
	}
	if p.EventNote != "" {
		fmt.Fprintln(e.stderr, "perflab: note: "+p.EventNote)
	}
	if err := f.writeGraph(e, p, format); err != nil {
		return err
	}
	report.ProfileSummary(e.stdout, p, f.top, f.out.output, format, termfmt.Style{On: termfmt.ColorEnabled(e.stdout)})
	return nil
}

// writeGraph writes the recorded profile's graph to -o; widths of a
// clock event are nanoseconds of CPU.
func (f *profileFlags) writeGraph(e *env, p *profile.Profile, format string) error {
	g := f.g
	unit := "none"
	if g.countName == "samples" && (p.Event == "cpu-clock" || p.Event == "task-clock") {
		g.countName, unit = "ns", "nanoseconds"
	}
	if g.subtitle == "" {
		g.subtitle = fmt.Sprintf("%s, %s at %d Hz, %.1f s", p.What, p.Event, p.Freq, p.Elapsed.Seconds())
	}
	w, commit, err := f.out.open(e.stdout)
	if err != nil {
		return err
	}
	if err := writeGraph(w, p.Fold.Profile, format, &g, unit); err != nil {
		return err
	}
	return commit()
}

// runBlockedProfile records an eBPF view (--off-cpu, --mixed, --locks) and
// writes its graph; weights are nanoseconds, drawn in the off-CPU palette
// (io: blues) unless --colors says otherwise.
func runBlockedProfile(e *env, cmd *cobra.Command, fs hostfs.FS, f *profileFlags, format string) error {
	if termfmt.IsTTY(e.stderr) {
		fmt.Fprintf(e.stderr, "perflab: tracing for %s … (Ctrl-C stops early)\n", f.opt.Duration)
	}
	p, err := profile.RecordBlocked(cmd.Context(), fs, f.opt, f.blocked)
	if err != nil {
		return err
	}
	for _, n := range p.Notes {
		fmt.Fprintln(e.stderr, "perflab: note: "+n)
	}
	g := f.g
	if g.countName == "samples" {
		g.countName = "ns"
	}
	if !cmd.Flags().Changed("colors") && !f.blocked.Mixed {
		g.colors = "io"
	}
	if g.subtitle == "" {
		g.subtitle = fmt.Sprintf("%s, %s time, %.1f s, blocks >= %s", p.What, p.Kind, p.Elapsed.Seconds(), f.blocked.MinBlock)
	}
	if err := writeOut(&f.out, e.stdout, func(w io.Writer) error { return writeGraph(w, p.Profile, format, &g, "nanoseconds") }); err != nil {
		return err
	}
	if p.Locks != nil {
		report.Locks(e.stdout, p.Locks, f.top)
	}
	fmt.Fprintf(e.stdout, "%s: %s time over %.1f s, %d unique stacks; wrote %s (%s)\n", p.What, p.Kind, p.Elapsed.Seconds(), len(p.Profile.Stacks), f.out.output, format)
	return nil
}
