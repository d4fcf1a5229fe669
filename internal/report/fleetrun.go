package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/perflab/perflab/internal/fleetrun"
)

// fleetRunText writes each host's output under a header, then the outcome
// table.
func fleetRunText(w io.Writer, r *fleetrun.Report) error {
	for _, h := range r.Hosts {
		body := h.Text
		if len(h.Output) > 0 {
			var b bytes.Buffer
			if json.Indent(&b, h.Output, "", "  ") == nil {
				body = b.String() + "\n"
			}
		}
		if body == "" {
			continue
		}
		fmt.Fprintf(w, "==> %s (%s) <==\n%s", h.Host, h.Status, body)
		if !strings.HasSuffix(body, "\n") {
			fmt.Fprintln(w)
		}
		fmt.Fprintln(w)
	}
	return fleetRunTable(w, r)
}

// fleetRunTable writes the per-host outcome table and a summary line.
func fleetRunTable(w io.Writer, r *fleetrun.Report) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "HOST\tADDRESS\tOUTCOME\tTIME\tSTORED\tREASON")
	for _, h := range r.Hosts {
		stored := "-"
		if len(h.Stored) > 0 {
			stored = fmt.Sprint(len(h.Stored))
		}
		reason := h.Reason
		if reason == "" {
			reason = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%.1f s\t%s\t%s\n", h.Host, h.Address, h.Status, h.Seconds, stored, reason)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	n := r.Counts()
	var parts []string
	for _, s := range []fleetrun.Status{fleetrun.OK, fleetrun.Findings, fleetrun.Unreachable, fleetrun.HostKey, fleetrun.Failed} {
		if n[s] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n[s], s))
		}
	}
	_, err := fmt.Fprintf(w, "%d host(s), at most %d at once (--forks %d): %s\n", len(r.Hosts), r.MaxOpenSessions, r.Forks, strings.Join(parts, ", "))
	return err
}
