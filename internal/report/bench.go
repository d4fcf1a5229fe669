package report

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/perflab/perflab/internal/bench"
	"github.com/perflab/perflab/internal/probe"
	"github.com/perflab/perflab/internal/run"
	"github.com/perflab/perflab/internal/termfmt"
)

// Bench writes the report of a bench session in format (text, md or json):
// each run's metrics as median ± CI half-width, n, CV and why it stopped.
// Text and md print a note that every run of the session carries once,
// after the runs (bench.SessionNotes); JSON keeps every run's notes with
// the run, for scripts.
func Bench(w io.Writer, runs []*run.Run, format string, st termfmt.Style) error {
	common, own := bench.SessionNotes(runs)
	switch format {
	case "json":
		out := make([]bench.RunReport, 0, len(runs))
		for _, r := range runs {
			out = append(out, bench.Report(r))
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	case "md":
		benchMarkdown(w, runs, common, own)
		return nil
	}
	for i, r := range runs {
		if i > 0 {
			fmt.Fprintln(w)
		}
		RunText(w, r, own[i], st)
	}
	if len(common) > 0 {
		fmt.Fprintln(w)
		fmt.Fprintln(w, st.Bold("for every run:"))
		for _, n := range common {
			fmt.Fprintln(w, "  note: "+n)
		}
	}
	return nil
}

func benchMarkdown(w io.Writer, runs []*run.Run, common []string, own [][]string) {
	fmt.Fprintln(w, "| probe | metric | median ± 95% CI | ±% | n | CV | stop |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|")
	for _, r := range runs {
		for _, m := range bench.Summarize(r) {
			fmt.Fprintf(w, "| %s | %s | %s | %s | %d | %s | %s |\n", r.Probe, m.Name, m.Measured(), benchRelText(m), m.N, benchCVText(m), r.Stop)
		}
	}
	writeNotesMD(w, runs, common, own)
}

// writeNotesMD lists the notes under the md table: each run's own, then
// the ones every run has.
func writeNotesMD(w io.Writer, runs []*run.Run, common []string, own [][]string) {
	var lines []string
	for i, r := range runs {
		for _, n := range own[i] {
			lines = append(lines, fmt.Sprintf("- %s (run %s): %s", mdText(r.Probe), ShortID(r.ID), mdText(n)))
		}
	}
	if len(lines) > 0 {
		fmt.Fprintf(w, "\nNotes:\n\n%s\n", strings.Join(lines, "\n"))
	}
	if len(common) > 0 {
		fmt.Fprint(w, "\nFor every run:\n\n")
		for _, n := range common {
			fmt.Fprintln(w, "- "+mdText(n))
		}
	}
}

// mdText escapes what Markdown would otherwise read as markup in a note
// (commands with globs, paths with underscores, <placeholders>).
var mdText = strings.NewReplacer(`\`, `\\`, "*", `\*`, "_", `\_`, "`", "\\`", "[", `\[`, "]", `\]`, "<", "&lt;", ">", "&gt;", "\n", " ").Replace

// RunText is the text block of one run with the notes to print under it
// (the bench report passes the run's own, 'runs show' all of them).
func RunText(w io.Writer, r *run.Run, notes []string, st termfmt.Style) {
	head := fmt.Sprintf("%s  run %s  %s", st.Bold(r.Probe), ShortID(r.ID), benchSeconds(r.Ended.Sub(r.Started)))
	if r.CPUs != "" {
		head += "  cpus " + r.CPUs
	}
	fmt.Fprintln(w, head)
	stop := bench.StopText(r)
	switch r.Stop {
	case run.StopPrecision, run.StopFixed:
		stop = st.Green(stop)
	case run.StopFailed, run.StopInterrupted:
		stop = st.Red(stop)
	default:
		stop = st.Yellow(stop)
	}
	fmt.Fprintln(w, "  stop: "+stop)
	sums := bench.Summarize(r)
	width := 0
	for _, m := range sums {
		width = max(width, len(m.Name))
	}
	for _, m := range sums {
		fmt.Fprintf(w, "  %-*s  %-32s %8s  n=%-3d cv %s\n", width, m.Name, m.Measured(), benchRelText(m), m.N, benchCVText(m))
	}
	for _, n := range notes {
		fmt.Fprintln(w, "  note: "+n)
	}
}

func benchRelText(m bench.MetricSummary) string {
	if m.Rel == nil {
		return "—"
	}
	return fmt.Sprintf("±%.2f%%", 100**m.Rel)
}

func benchCVText(m bench.MetricSummary) string {
	if m.CV == nil {
		return "—"
	}
	return fmt.Sprintf("%.2f%%", 100**m.CV)
}

func benchSeconds(d time.Duration) string {
	return fmt.Sprintf("%.1fs", d.Seconds())
}

// ShortID is the 12-character form of a run id that lists and messages
// show (any unique prefix selects the run).
func ShortID(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}

// BenchList is the text of 'perflab bench list'.
func BenchList(w io.Writer, doc bench.ListDoc, st termfmt.Style) {
	fmt.Fprintln(w, st.Bold("Suites"))
	for _, s := range doc.Suites {
		fmt.Fprintf(w, "  %-9s ≤ %s  %s\n", s.Name, s.Budget, s.Doc)
		fmt.Fprintf(w, "  %-9s %s\n", "", st.Dim(strings.Join(s.Runs, ", ")))
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, st.Bold("Probes"))
	for _, p := range doc.Probes {
		fmt.Fprintf(w, "  %s\n", st.Bold(p.Name))
		fmt.Fprintf(w, "    %s\n", p.Doc)
		fmt.Fprintf(w, "    parameters: %s\n", probe.Params(p.Defaults))
		if q := probe.Params(p.Quick).String(); q != probe.Params(p.Defaults).String() {
			fmt.Fprintf(w, "    in quick:   %s\n", q)
		}
	}
}
