package report

import (
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/perflab/perflab/internal/trace"
)

// retransText renders a retransmission report as text or md.
func retransText(w io.Writer, r *trace.RetransReport, md bool, events int) error {
	if md {
		fmt.Fprintf(w, "## TCP retransmissions, %.1f s\n\n", r.Seconds)
	}
	fmt.Fprintf(w, "%d retransmissions (%d segments, %.1f/s), %d tail-loss probes, %d flows", r.Retrans, r.Segs, perSec(r.Segs, r.Seconds), r.TLP, len(r.Flows))
	if r.Failed > 0 {
		fmt.Fprintf(w, ", %d given up before sending", r.Failed)
	}
	if r.LocalDrops > 0 {
		fmt.Fprintf(w, ", %d dropped by this host on the way out", r.LocalDrops)
	}
	fmt.Fprintf(w, " in %.1f s\n", r.Seconds)
	if r.CounterSegs != nil {
		fmt.Fprintf(w, "perflab's network namespace counted %.0f (TcpRetransSegs); the trace covers every namespace\n", *r.CounterSegs)
	}
	if r.Lost > 0 {
		fmt.Fprintf(w, "warning: %d events lost (ring buffer full); counts are low\n", r.Lost)
	}
	if len(r.Flows) > 0 {
		fmt.Fprintln(w)
		head := []string{"SOURCE", "DESTINATION", "PID", "COMMAND", "STATE", "RETRANS", "SEGS", "PER S", "SHARE", "TLP"}
		rows := make([][]string, 0, len(r.Flows))
		for _, f := range r.Flows {
			pid := "-"
			if f.PID != 0 {
				pid = fmt.Sprint(f.PID)
			}
			rows = append(rows, []string{f.Src.String(), f.Dst.String(), pid, dashIfEmpty(f.Comm), f.State,
				fmt.Sprint(f.Retrans), fmt.Sprint(f.Segs), fmt.Sprintf("%.2f", f.PerSec), fmt.Sprintf("%.1f%%", f.SharePct), fmt.Sprint(f.TLP)})
		}
		traceTable(w, md, head, rows)
	}
	if events > 0 && len(r.Events) > 0 {
		fmt.Fprintln(w)
		head := []string{"TIME", "KIND", "PID", "COMMAND", "SOURCE", "DESTINATION", "STATE", "SEGS"}
		var rows [][]string
		for i, e := range r.Events {
			if i >= events {
				break
			}
			rows = append(rows, []string{e.Time.Format("15:04:05.000"), e.Kind, fmt.Sprint(e.PID), dashIfEmpty(e.Comm),
				e.Src.String(), e.Dst.String(), e.State, fmt.Sprint(e.Segs)})
		}
		traceTable(w, md, head, rows)
	}
	traceNotes(w, r.Notes)
	return nil
}

// CacheHeader and CacheLine stream cachestat's text output.
func CacheHeader(w io.Writer, unit string) {
	fmt.Fprintf(w, "%-8s %12s %12s %12s %10s %8s %14s\n", "TIME", "ACCESSES", "HITS", "MISSES", "DIRTIED", "RATIO", "PGPGIN_PAGES")
}

func CacheLine(w io.Writer, iv trace.CacheInterval) {
	fmt.Fprintf(w, "%-8s %12d %12d %12d %10d %8s %14d\n", iv.Time.Format("15:04:05"), iv.Accesses, iv.Hits, iv.Misses, iv.Dirtied, cacheRatio(iv.RatioPct), iv.PgpginPages)
}

// cacheText renders the whole report (the text form after the streamed
// lines: totals, cgroups, files, notes).
func cacheText(w io.Writer, r *trace.CacheReport, md, streamed bool) error {
	if md {
		fmt.Fprintf(w, "## Page cache, %.1f s\n\nProbes: %s; counts in %s.\n\n", r.Seconds, r.Probes, r.Unit)
		var rows [][]string
		for _, iv := range r.Intervals {
			rows = append(rows, cacheRow(iv.Time.Format("15:04:05"), iv.CacheCounts, fmt.Sprint(iv.PgpginPages)))
		}
		traceTable(w, true, []string{"TIME", "ACCESSES", "HITS", "MISSES", "DIRTIED", "RATIO", "PGPGIN PAGES"}, rows)
		fmt.Fprintln(w)
	} else if !streamed {
		CacheHeader(w, r.Unit)
		for _, iv := range r.Intervals {
			CacheLine(w, iv)
		}
	}
	t := r.Total
	fmt.Fprintf(w, "total: %d accesses, %d hits, %d misses, %d dirtied (%s): hit ratio %s; vmstat pgpgin %d pages\n",
		t.Accesses, t.Hits, t.Misses, t.Dirtied, r.Unit, cacheRatio(t.RatioPct), t.PgpginPages)
	for _, g := range []struct {
		title string
		rows  []trace.CacheGroup
	}{{"cgroups", r.Cgroups}, {"files", r.Files}} {
		if len(g.rows) == 0 {
			continue
		}
		fmt.Fprintf(w, "\nbusiest %s:\n", g.title)
		var rows [][]string
		for _, c := range g.rows {
			rows = append(rows, cacheRow(c.Name, c.CacheCounts, "")[:6])
		}
		traceTable(w, md, []string{strings.ToUpper(strings.TrimSuffix(g.title, "s")), "ACCESSES", "HITS", "MISSES", "DIRTIED", "RATIO"}, rows)
	}
	traceNotes(w, r.Notes)
	return nil
}

func cacheRow(name string, c trace.CacheCounts, extra string) []string {
	return []string{name, fmt.Sprint(c.Accesses), fmt.Sprint(c.Hits), fmt.Sprint(c.Misses), fmt.Sprint(c.Dirtied), cacheRatio(c.RatioPct), extra}
}

// Locks prints the longest lock waits.
func Locks(w io.Writer, l *trace.Locks, top int) {
	fmt.Fprintf(w, "futex waits over %.1f s, longest total first:\n", l.Elapsed.Seconds())
	for i, x := range l.Waits {
		if i >= top {
			break
		}
		fmt.Fprintf(w, "  %10s in %6d waits (max %s)  pid %d %s  lock %s\n", roundWait(x.Total), x.Count, roundWait(x.Max), x.PID, x.Comm, x.Address)
		for j := len(x.Stack) - 1; j >= 0 && j >= len(x.Stack)-8; j-- {
			fmt.Fprintf(w, "        %s\n", x.Stack[j])
		}
	}
}

func roundWait(d time.Duration) string { return d.Round(10 * time.Microsecond).String() }

func traceTable(w io.Writer, md bool, head []string, rows [][]string) {
	if md {
		fmt.Fprintf(w, "| %s |\n|%s\n", strings.Join(head, " | "), strings.Repeat(" --- |", len(head)))
		for _, r := range rows {
			fmt.Fprintf(w, "| %s |\n", strings.Join(r, " | "))
		}
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(head, "\t"))
	for _, r := range rows {
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	tw.Flush()
}

func traceNotes(w io.Writer, ns []string) {
	for _, n := range ns {
		fmt.Fprintln(w, "note: "+n)
	}
}

func perSec(n int, s float64) float64 {
	if s <= 0 {
		return 0
	}
	return float64(n) / s
}

// cacheRatio formats a hit ratio for text output.
func cacheRatio(p *float64) string {
	if p == nil || math.IsNaN(*p) {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", *p)
}

func dashIfEmpty(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// Retrans is what 'trace retrans' prints: the report, listing at most
// Events individual events in text and md.
type Retrans struct {
	*trace.RetransReport
	Events int `json:"-"`
}

// Cache is what 'trace cachestat' prints; Streamed says the intervals
// were already written line by line (CacheLine) to the terminal.
type Cache struct {
	*trace.CacheReport
	Streamed bool `json:"-"`
}
