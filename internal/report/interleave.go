package report

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/perflab/perflab/internal/bench"
	"github.com/perflab/perflab/internal/numfmt"
	"github.com/perflab/perflab/internal/run"
	"github.com/perflab/perflab/internal/termfmt"
)

// InterleavedKind marks the JSON document of an interleaved session.
const InterleavedKind = "perflab-interleaved"

// Interleaved writes the effects of an interleaved session ('bench
// --state', 'tune apply --measure'): each state against the first, paired
// block by block.
func Interleaved(w io.Writer, res *bench.Interleaved, format string, style termfmt.Style) error {
	if res == nil {
		return nil
	}
	switch format {
	case "json":
		type effect struct {
			Probe      string     `json:"probe"`
			Metric     string     `json:"metric"`
			Unit       string     `json:"unit"`
			Better     run.Better `json:"better"`
			Base       string     `json:"base"`
			State      string     `json:"state"`
			Blocks     int        `json:"blocks"`
			Ratio      num        `json:"ratio"`
			Lo         num        `json:"ratio_lo"`
			Hi         num        `json:"ratio_hi"`
			P          num        `json:"p"`
			DeltaPct   num        `json:"delta_pct"`
			DeltaLoPct num        `json:"delta_lo_pct"`
			DeltaHiPct num        `json:"delta_hi_pct"`
			Verdict    string     `json:"verdict"`
		}
		doc := struct {
			Kind    string `json:"kind"`
			Blocks  int    `json:"blocks"`
			Stopped string `json:"stopped"`
			Seconds num    `json:"seconds"`
			// Alpha is the sequential stop's last look's level (the
			// verdicts' α, intervals at 1−α); absent: 5%, 95%.
			Alpha   *float64 `json:"alpha,omitempty"`
			Effects []effect `json:"effects"`
		}{Kind: InterleavedKind, Blocks: res.Blocks, Stopped: res.Stopped, Seconds: num(res.Seconds), Effects: []effect{}}
		if res.Alpha > 0 {
			doc.Alpha = &res.Alpha
		}
		for _, e := range res.Effects {
			doc.Effects = append(doc.Effects, effect{e.Probe, e.Metric, e.Unit, e.Better, e.Base, e.State, e.Blocks,
				num(e.Ratio), num(e.Lo), num(e.Hi), num(e.P), num(100 * (e.Ratio - 1)), num(100 * (e.Lo - 1)), num(100 * (e.Hi - 1)), string(e.Verdict)})
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(doc)
	case "md":
		fmt.Fprintf(w, "\n## Interleaved effects (%d blocks, stopped by %s%s)\n\n| probe | metric | state vs base | Δ [%s CI] | verdict |\n| --- | --- | --- | --- | --- |\n", res.Blocks, res.Stopped, sequentialNote(res), ciLevel(res))
		for _, e := range res.Effects {
			fmt.Fprintf(w, "| %s | %s | %s vs %s | %s | %s |\n", mdEscape(e.Probe), mdEscape(e.Metric), mdEscape(e.State), mdEscape(e.Base), effectCI(e), e.Verdict)
		}
		return nil
	}
	fmt.Fprintf(w, "\n%s\n", style.Bold(fmt.Sprintf("Interleaved effects: %d blocks, each state measured once per block in random order (stopped by %s%s)", res.Blocks, res.Stopped, sequentialNote(res))))
	fmt.Fprintln(w, style.Dim("Δ = state vs base, the blocks paired (drift between blocks cancels), "+ciLevel(res)+" CI"))
	if res.Alpha > 0 {
		fmt.Fprintln(w, style.Dim(fmt.Sprintf("sequential: each look tests at its share of the 5%% alpha; this one at α = %.4g", res.Alpha)))
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "probe\tmetric\tstate vs base\tΔ\t%s CI\tverdict\n", ciLevel(res))
	for _, e := range res.Effects {
		v := string(e.Verdict)
		if paint := verdictStyle(style, e.Verdict); paint != nil {
			v = paint(v)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s vs %s\t%s\t%s\t%s\n", e.Probe, e.Metric, e.State, e.Base, numfmt.Pct(100*(e.Ratio-1)), ciPct(e), v)
	}
	return tw.Flush()
}

// ciLevel is the level of the session's intervals: 95%, or the
// sequential stop's last look's 1−α.
func ciLevel(res *bench.Interleaved) string {
	if res.Alpha > 0 {
		return strconv.FormatFloat(100*(1-res.Alpha), 'g', 4, 64) + "%"
	}
	return "95%"
}

// sequentialNote says how long a sequential session measured.
func sequentialNote(res *bench.Interleaved) string {
	if res.Alpha <= 0 {
		return ""
	}
	return " after " + time.Duration(res.Seconds*float64(time.Second)).Round(time.Second).String()
}

func effectCI(e bench.Effect) string {
	return numfmt.Pct(100*(e.Ratio-1)) + " " + ciPct(e)
}

func ciPct(e bench.Effect) string {
	if math.IsNaN(e.Lo) {
		return "[–, –]"
	}
	return "[" + numfmt.Pct(100*(e.Lo-1)) + ", " + numfmt.Pct(100*(e.Hi-1)) + "]"
}
