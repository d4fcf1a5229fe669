package trace

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

func writeJSON(w io.Writer, v any) error {
	e := json.NewEncoder(w)
	e.SetIndent("", "  ")
	return e.Encode(v)
}

// WriteRetrans renders a retransmission report as text, json or md.
func WriteRetrans(w io.Writer, r *RetransReport, format string, events int) error {
	if format == "json" {
		return writeJSON(w, r)
	}
	md := format == "md"
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
			rows = append(rows, []string{f.Src.String(), f.Dst.String(), pid, orDash(f.Comm), f.State,
				fmt.Sprint(f.Retrans), fmt.Sprint(f.Segs), fmt.Sprintf("%.2f", f.PerSec), fmt.Sprintf("%.1f%%", f.SharePct), fmt.Sprint(f.TLP)})
		}
		table(w, md, head, rows)
	}
	if events > 0 && len(r.Events) > 0 {
		fmt.Fprintln(w)
		head := []string{"TIME", "KIND", "PID", "COMMAND", "SOURCE", "DESTINATION", "STATE", "SEGS"}
		var rows [][]string
		for i, e := range r.Events {
			if i >= events {
				break
			}
			rows = append(rows, []string{e.Time.Format("15:04:05.000"), e.Kind, fmt.Sprint(e.PID), orDash(e.Comm),
				e.Src.String(), e.Dst.String(), e.State, fmt.Sprint(e.Segs)})
		}
		table(w, md, head, rows)
	}
	notes(w, r.Notes)
	return nil
}

// WriteCacheHeader and WriteCacheLine stream cachestat's text output.
func WriteCacheHeader(w io.Writer, unit string) {
	fmt.Fprintf(w, "%-8s %12s %12s %12s %10s %8s %14s\n", "TIME", "ACCESSES", "HITS", "MISSES", "DIRTIED", "RATIO", "PGPGIN_PAGES")
}

func WriteCacheLine(w io.Writer, iv CacheInterval) {
	fmt.Fprintf(w, "%-8s %12d %12d %12d %10d %8s %14d\n", iv.Time.Format("15:04:05"), iv.Accesses, iv.Hits, iv.Misses, iv.Dirtied, ratio(iv.RatioPct), iv.PgpginPages)
}

// WriteCache renders the whole report (the text form after the streamed
// lines: totals, cgroups, files, notes).
func WriteCache(w io.Writer, r *CacheReport, format string, streamed bool) error {
	if format == "json" {
		return writeJSON(w, r)
	}
	md := format == "md"
	if md {
		fmt.Fprintf(w, "## Page cache, %.1f s\n\nProbes: %s; counts in %s.\n\n", r.Seconds, r.Probes, r.Unit)
		var rows [][]string
		for _, iv := range r.Intervals {
			rows = append(rows, cacheRow(iv.Time.Format("15:04:05"), iv.CacheCounts, fmt.Sprint(iv.PgpginPages)))
		}
		table(w, true, []string{"TIME", "ACCESSES", "HITS", "MISSES", "DIRTIED", "RATIO", "PGPGIN PAGES"}, rows)
		fmt.Fprintln(w)
	} else if !streamed {
		WriteCacheHeader(w, r.Unit)
		for _, iv := range r.Intervals {
			WriteCacheLine(w, iv)
		}
	}
	t := r.Total
	fmt.Fprintf(w, "total: %d accesses, %d hits, %d misses, %d dirtied (%s): hit ratio %s; vmstat pgpgin %d pages\n",
		t.Accesses, t.Hits, t.Misses, t.Dirtied, r.Unit, ratio(t.RatioPct), t.PgpginPages)
	for _, g := range []struct {
		title string
		rows  []CacheGroup
	}{{"cgroups", r.Cgroups}, {"files", r.Files}} {
		if len(g.rows) == 0 {
			continue
		}
		fmt.Fprintf(w, "\nbusiest %s:\n", g.title)
		var rows [][]string
		for _, c := range g.rows {
			rows = append(rows, cacheRow(c.Name, c.CacheCounts, "")[:6])
		}
		table(w, md, []string{strings.ToUpper(strings.TrimSuffix(g.title, "s")), "ACCESSES", "HITS", "MISSES", "DIRTIED", "RATIO"}, rows)
	}
	notes(w, r.Notes)
	return nil
}

func cacheRow(name string, c CacheCounts, extra string) []string {
	return []string{name, fmt.Sprint(c.Accesses), fmt.Sprint(c.Hits), fmt.Sprint(c.Misses), fmt.Sprint(c.Dirtied), ratio(c.RatioPct), extra}
}

// WriteLocks prints the longest lock waits.
func WriteLocks(w io.Writer, l *Locks, top int) {
	fmt.Fprintf(w, "futex waits over %.1f s, longest total first:\n", l.Elapsed.Seconds())
	for i, x := range l.Waits {
		if i >= top {
			break
		}
		fmt.Fprintf(w, "  %10s in %6d waits (max %s)  pid %d %s  lock %s\n", round(x.Total), x.Count, round(x.Max), x.PID, x.Comm, x.Address)
		for j := len(x.Stack) - 1; j >= 0 && j >= len(x.Stack)-8; j-- {
			fmt.Fprintf(w, "        %s\n", x.Stack[j])
		}
	}
}

func round(d time.Duration) string { return d.Round(10 * time.Microsecond).String() }

func table(w io.Writer, md bool, head []string, rows [][]string) {
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

func notes(w io.Writer, ns []string) {
	for _, n := range ns {
		fmt.Fprintln(w, "note: "+n)
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func perSec(n int, s float64) float64 {
	if s <= 0 {
		return 0
	}
	return float64(n) / s
}
