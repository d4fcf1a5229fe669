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
		if err := fleetHostText(w, h); err != nil {
			return err
		}
	}
	return fleetRunTable(w, r)
}

// fleetHostText writes one host's output under a header.
func fleetHostText(w io.Writer, h fleetrun.Outcome) error {
	body := h.Text
	if len(h.Output) > 0 {
		var b bytes.Buffer
		if json.Indent(&b, h.Output, "", "  ") == nil {
			body = b.String() + "\n"
		}
	}
	if body == "" {
		return nil
	}
	if !strings.HasSuffix(body, "\n") {
		body += "\n"
	}
	_, err := fmt.Fprintf(w, "==> %s (%s) <==\n%s\n", h.Host, h.Status, body)
	return err
}

// FleetRunWriter writes a fleet run as it goes: each host's result when
// the host is done (fleetrun.Options.OnHost), then the summary (Close),
// so a run over thousands of hosts holds no host's output after writing
// it. Text is the same as Write's; JSON is the same object with the hosts
// in the order they finished and max_open_sessions after them.
type FleetRunWriter struct {
	w      io.Writer
	format string
	n      int
}

// NewFleetRunWriter answers a *FormatError for a format other than text
// or json.
func NewFleetRunWriter(w io.Writer, format string) (*FleetRunWriter, error) {
	if format != FormatText && format != FormatJSON {
		return nil, &FormatError{Format: format, Result: "a fleet run", Supported: []string{FormatText, FormatJSON}}
	}
	return &FleetRunWriter{w: w, format: format}, nil
}

// Host writes one host's result (rep supplies the command and forks).
func (f *FleetRunWriter) Host(rep *fleetrun.Report, h fleetrun.Outcome) error {
	if f.format == FormatText {
		return fleetHostText(f.w, h)
	}
	if f.n == 0 {
		if err := f.head(rep); err != nil {
			return err
		}
	} else if _, err := io.WriteString(f.w, ",\n"); err != nil {
		return err
	}
	f.n++
	b, err := json.MarshalIndent(h, "    ", "  ")
	if err != nil {
		return err
	}
	if _, err := io.WriteString(f.w, "    "); err != nil {
		return err
	}
	_, err = f.w.Write(b)
	return err
}

func (f *FleetRunWriter) head(rep *fleetrun.Report) error {
	cmd, _ := json.Marshal(rep.Command)
	_, err := fmt.Fprintf(f.w, "{\n  \"command\": %s,\n  \"forks\": %d,\n  \"hosts\": [\n", cmd, rep.Forks)
	return err
}

// Close writes the summary: the outcome table, or the end of the JSON
// object.
func (f *FleetRunWriter) Close(rep *fleetrun.Report) error {
	if f.format == FormatText {
		return fleetRunTable(f.w, rep)
	}
	if f.n == 0 {
		if err := f.head(rep); err != nil {
			return err
		}
	}
	_, err := fmt.Fprintf(f.w, "\n  ],\n  \"max_open_sessions\": %d\n}\n", rep.MaxOpenSessions)
	return err
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
	for _, s := range fleetrun.Statuses {
		if n[s] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n[s], s))
		}
	}
	_, err := fmt.Fprintf(w, "%d host(s), at most %d at once (--forks %d): %s\n", len(r.Hosts), r.MaxOpenSessions, r.Forks, strings.Join(parts, ", "))
	return err
}
