package report

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/perflab/perflab/internal/bench"
	"github.com/perflab/perflab/internal/monitor"
	"github.com/perflab/perflab/internal/run"
	"github.com/perflab/perflab/internal/store"
	"github.com/perflab/perflab/internal/termfmt"
)

// RunsList is the table of 'perflab runs list'.
func RunsList(w io.Writer, runs []*run.Run) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSTARTED\tLABEL\tSUITE\tPROBE\tHOST\tN\tSTOP")
	for _, r := range runs {
		stop := string(r.Stop)
		if !r.Complete {
			stop += " (incomplete)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s\n", ShortID(r.ID), r.Started.Local().Format("2006-01-02 15:04"),
			dash(r.Label), dash(r.Suite), r.Probe, r.Host, r.Iterations(), stop)
	}
	return tw.Flush()
}

// Labels is the table of 'perflab runs list --labels'.
func Labels(w io.Writer, ls []store.LabelCount) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "LABEL\tRUNS\tNEWEST")
	for _, l := range ls {
		fmt.Fprintf(tw, "%s\t%d\t%s\n", l.Label, l.Runs, l.Newest.Local().Format("2006-01-02 15:04"))
	}
	return tw.Flush()
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// RunShow is the text of 'perflab runs show': the run's block with all of
// its notes, what identifies it, the host noise, the host activity
// summary and, when asked, the whole monitor series and every sample.
func RunShow(w io.Writer, r *run.Run, st termfmt.Style, series, samples bool) {
	RunText(w, r, r.Notes, st)
	runShowFacts(w, r)
	if len(r.Monitor) > 0 {
		monitorSummary(w, r.Monitor)
	}
	if series && len(r.Monitor) > 0 {
		monitorSeries(w, r.Monitor)
	}
	if samples {
		runSamples(w, r)
	}
}

func runShowFacts(w io.Writer, r *run.Run) {
	kv := func(k, v string) {
		if v != "" {
			fmt.Fprintf(w, "  %-10s %s\n", k+":", v)
		}
	}
	kv("id", r.ID)
	kv("label", r.Label)
	kv("suite", r.Suite)
	kv("host", r.Host)
	kv("snapshot", r.SnapshotID)
	kv("started", r.Started.Local().Format(time.RFC3339))
	kv("tool", strings.TrimSpace(r.Tool+" "+r.ToolVersion))
	kv("command", strings.Join(r.Command, " "))
	kv("params", ParamString(r.Params))
	if r.CPUs == "" {
		kv("cpus", "unpinned")
	}
	// Always shown, quiet or not: a quiet reading is what makes a noisy
	// one on another run mean something. The note, when there is one,
	// says what a noisy reading implies.
	kv("host noise", bench.NoiseText(r.Noise))
}

func monitorSummary(w io.Writer, points []run.MonitorPoint) {
	fmt.Fprintln(w, "  host activity during the run (mean / max over "+fmt.Sprint(len(points))+" s):")
	for _, c := range presentColumns(points) {
		mean, mx, n := 0.0, math.Inf(-1), 0
		for _, p := range points {
			v, ok := c.get(p)
			if !ok {
				continue
			}
			mean += v
			mx = math.Max(mx, v)
			n++
		}
		mean /= float64(n)
		fmt.Fprintf(w, "    %-16s %10.1f / %-10.1f %s\n", c.name, mean, mx, c.unit)
	}
}

func monitorSeries(w io.Writer, points []run.MonitorPoint) {
	tw := tabwriter.NewWriter(w, 0, 0, 1, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "t/s\t")
	cols := presentColumns(points)
	for _, c := range cols {
		fmt.Fprint(tw, c.short+"\t")
	}
	fmt.Fprintln(tw)
	for _, p := range points {
		fmt.Fprintf(tw, "%.1f\t", p.T)
		for _, c := range cols {
			if v, ok := c.get(p); ok {
				fmt.Fprintf(tw, "%.1f\t", v)
			} else {
				fmt.Fprint(tw, "-\t")
			}
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
}

func runSamples(w io.Writer, r *run.Run) {
	for _, m := range r.Metrics {
		vs := r.Values(m.Name)
		parts := make([]string, len(vs))
		for i, v := range vs {
			parts[i] = fmt.Sprintf("%g", v)
		}
		fmt.Fprintf(w, "  %s (%s): %s\n", m.Name, m.Unit, strings.Join(parts, " "))
	}
}

type monitorColumn struct {
	name, short, unit string
	// get reports a point's value, and false where the point lacks it
	// (a field added after the run was stored, a source the host lacks).
	get func(run.MonitorPoint) (float64, bool)
}

func always(f func(run.MonitorPoint) float64) func(run.MonitorPoint) (float64, bool) {
	return func(p run.MonitorPoint) (float64, bool) { return f(p), true }
}

func optF(f func(run.MonitorPoint) *float64) func(run.MonitorPoint) (float64, bool) {
	return func(p run.MonitorPoint) (float64, bool) {
		if v := f(p); v != nil {
			return *v, true
		}
		return 0, false
	}
}

func optKiBtoMiB(f func(run.MonitorPoint) *int64) func(run.MonitorPoint) (float64, bool) {
	return func(p run.MonitorPoint) (float64, bool) {
		if v := f(p); v != nil {
			return float64(*v) / 1024, true
		}
		return 0, false
	}
}

var monitorColumns = []monitorColumn{
	{"user", "usr%", "% CPU", always(func(p run.MonitorPoint) float64 { return p.UserPct })},
	{"system", "sys%", "% CPU", always(func(p run.MonitorPoint) float64 { return p.SystemPct })},
	{"iowait", "wa%", "% CPU", always(func(p run.MonitorPoint) float64 { return p.IOWaitPct })},
	{"irq+softirq", "si%", "% CPU", always(func(p run.MonitorPoint) float64 { return p.IRQPct + p.SoftIRQPct })},
	{"steal", "st%", "% CPU", always(func(p run.MonitorPoint) float64 { return p.StealPct })},
	{"context switches", "cs/s", "/s", always(func(p run.MonitorPoint) float64 { return p.CtxSwitches })},
	{"interrupts", "in/s", "/s", always(func(p run.MonitorPoint) float64 { return p.Interrupts })},
	{"softirqs", "sirq/s", "/s", always(func(p run.MonitorPoint) float64 { return p.SoftIRQs })},
	{"run queue", "r", "runnable tasks", always(func(p run.MonitorPoint) float64 { return float64(p.RunQueue) })},
	{"blocked", "b", "tasks in D state", always(func(p run.MonitorPoint) float64 { return float64(p.Blocked) })},
	{"mem available", "availMiB", "MiB", always(func(p run.MonitorPoint) float64 { return float64(p.MemAvailKiB) / 1024 })},
	{"page cache", "cacheMiB", "MiB", optKiBtoMiB(func(p run.MonitorPoint) *int64 { return p.PageCacheKiB })},
	{"dirty", "dirtyMiB", "MiB", optKiBtoMiB(func(p run.MonitorPoint) *int64 { return p.DirtyKiB })},
	{"writeback", "wbMiB", "MiB", optKiBtoMiB(func(p run.MonitorPoint) *int64 { return p.WritebackKiB })},
	{"read from disk", "pgin", "KiB/s", optF(func(p run.MonitorPoint) *float64 { return p.PgpgInKiBPerS })},
	{"written to disk", "pgout", "KiB/s", optF(func(p run.MonitorPoint) *float64 { return p.PgpgOutKiBPerS })},
	{"major faults", "majflt", "/s", optF(func(p run.MonitorPoint) *float64 { return p.MajFaultsPerS })},
	{"reclaim scan", "pgscan", "pages/s", optF(func(p run.MonitorPoint) *float64 { return p.PgScanPerS })},
	{"direct reclaim", "stall", "allocstalls/s", optF(func(p run.MonitorPoint) *float64 { return p.AllocStallsPerS })},
	// Pressure as monitor.Field reads it: the exact per-interval share, or
	// avg10 for runs stored before it existed.
	{"PSI cpu some", "psi.cpu", "% of time", nil},
	{"PSI memory some", "psi.mem", "% of time", nil},
	{"PSI io some", "psi.io", "% of time", nil},
}

// monitorFieldOf names the monitor.Field behind a column whose get is nil:
// read the one way (exact share, or avg10 for old runs), get and, for the
// fallback, unit come from it.
var monitorFieldOf = map[string]string{"psi.cpu": "psi_cpu_pct", "psi.mem": "psi_memory_pct", "psi.io": "psi_io_pct"}

// presentColumns are the columns at least one point of the series has.
func presentColumns(points []run.MonitorPoint) []monitorColumn {
	var out []monitorColumn
	for _, c := range monitorColumns {
		if c.get == nil {
			name := monitorFieldOf[c.short]
			f, ok := monitor.MustField(name).In(points)
			if !ok {
				continue
			}
			if c.get = f.Get; f.Name != name {
				c.unit = f.Unit
			}
		}
		for _, p := range points {
			if _, ok := c.get(p); ok {
				out = append(out, c)
				break
			}
		}
	}
	return out
}

// ParamString is "k=v k=v" with the keys sorted.
func ParamString(p map[string]string) string {
	keys := make([]string, 0, len(p))
	for k := range p {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + p[k]
	}
	return strings.Join(parts, " ")
}
