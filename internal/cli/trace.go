package cli

import (
	"fmt"
	"time"

	"github.com/perflab/perflab/internal/clierr"
	"github.com/perflab/perflab/internal/hostfs"
	"github.com/perflab/perflab/internal/report"
	"github.com/perflab/perflab/internal/termfmt"
	"github.com/perflab/perflab/internal/trace"
	"github.com/spf13/cobra"
)

func newTraceCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "trace",
		Short: "Trace the kernel with eBPF: TCP retransmissions, page-cache hit ratio",
		Long: `trace runs eBPF programs built into perflab (no clang or kernel headers
needed on the host). It needs root (or CAP_BPF, CAP_PERFMON) and a kernel with
BTF; when either is missing it says so in one line and exits 3. Nothing is
traced unless asked; docs/trace.md lists each tracer's overhead.`,
	}
	cmd.AddCommand(newTraceRetransCmd(e), newTraceCachestatCmd(e))
	return cmd
}

func traceDuration(d float64) (time.Duration, error) {
	if d < 0 || d > 24*3600 {
		return 0, clierr.Usagef("use 0 <= -d <= 86400 (0: until Ctrl-C)", "-d %g s is out of range", d)
	}
	return time.Duration(d * float64(time.Second)), nil
}

func newTraceRetransCmd(e *env) *cobra.Command {
	var (
		opt      trace.RetransOptions
		secs     float64
		events   int
		counters bool
		out      outputFlags
	)
	cmd := &cobra.Command{
		Use:   "retrans [-d SECONDS] [--pid P]",
		Short: "Every TCP retransmission with its flow, process and state; per-flow summary",
		Long: `retrans records each TCP retransmission (tracepoint tcp:tcp_retransmit_skb)
with its 4-tuple, TCP state and the process owning the socket (retransmits
fire from timers, so the owner is looked up from the socket, not the CPU), then
sums them per flow: count, segments, rate and share of all retransmitted
segments — which flow, port and process the host's retransmissions come from.
With --counters it only reads /proc/net/snmp and /proc/net/netstat (no eBPF,
no flows), the honest fallback where tracing is impossible.`,
		Example: `  perflab trace retrans -d 10
  perflab trace retrans -d 30 --pid $(pgrep -n nginx) --format json
  perflab trace retrans -d 10 --counters   # no eBPF: namespace totals only`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := out.validate(); err != nil {
				return err
			}
			d, err := traceDuration(secs)
			if err != nil {
				return err
			}
			opt.Duration = d
			fs, err := hostfs.New("/")
			if err != nil {
				return err
			}
			traceProgress(e, d)
			var rep *trace.RetransReport
			if counters {
				rep, err = trace.RetransCounters(cmd.Context(), fs, d)
			} else {
				rep, err = trace.Retrans(cmd.Context(), fs, opt)
			}
			if err != nil {
				return err
			}
			return writeResult(&out, e.stdout, &report.Retrans{RetransReport: rep, Events: events})
		},
	}
	fl := cmd.Flags()
	fl.Float64VarP(&secs, "duration", "d", 10, "seconds to trace (0: until Ctrl-C)")
	fl.IntVar(&opt.PID, "pid", 0, "only sockets owned by this process")
	fl.IntVar(&events, "events", 20, "individual events to list in text output")
	fl.BoolVar(&counters, "counters", false, "no tracing: namespace-wide kernel counters only")
	out.register(cmd, "text", "text", "json", "md")
	return cmd
}

func newTraceCachestatCmd(e *env) *cobra.Command {
	var (
		opt  trace.CacheOptions
		secs float64
		out  outputFlags
	)
	cmd := &cobra.Command{
		Use:   "cachestat [-d SECONDS] [--interval 1s]",
		Short: "Page-cache hits, misses, dirtied pages and hit ratio per interval",
		Long: `cachestat counts page-cache accesses and insertions (misses) per interval,
with probes chosen by what the kernel has (filemap tracepoints on 6.10+, else
folio_mark_accessed or mark_page_accessed), the hit ratio, and /proc/vmstat's
pgpgin beside the misses as the kernel's own check. At the end it lists the
busiest cgroups and files.`,
		Example: `  perflab trace cachestat -d 10
  perflab trace cachestat --interval 5s --format json -o cache.json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := out.validate(); err != nil {
				return err
			}
			d, err := traceDuration(secs)
			if err != nil {
				return err
			}
			if opt.Interval < 100*time.Millisecond {
				return clierr.Usagef("use --interval 100ms or more", "--interval %s is too short", opt.Interval)
			}
			opt.Duration = d
			fs, err := hostfs.New("/")
			if err != nil {
				return err
			}
			streamed := out.format == report.FormatText && (out.output == "" || out.output == "-")
			if streamed {
				opt.Ready = func(string) { report.CacheHeader(e.stdout, "") }
				opt.Each = func(iv trace.CacheInterval) { report.CacheLine(e.stdout, iv) }
			}
			rep, err := trace.Cachestat(cmd.Context(), fs, opt)
			if err != nil {
				return err
			}
			return writeResult(&out, e.stdout, &report.Cache{CacheReport: rep, Streamed: streamed})
		},
	}
	fl := cmd.Flags()
	fl.Float64VarP(&secs, "duration", "d", 10, "seconds to trace (0: until Ctrl-C)")
	fl.DurationVar(&opt.Interval, "interval", time.Second, "length of each line")
	fl.IntVar(&opt.Top, "top", 5, "cgroups and files to list")
	out.register(cmd, "text", "text", "json", "md")
	return cmd
}

func traceProgress(e *env, d time.Duration) {
	if termfmt.IsTTY(e.stderr) && d > 2*time.Second {
		fmt.Fprintf(e.stderr, "perflab: tracing for %s … (Ctrl-C stops early)\n", d)
	}
}
