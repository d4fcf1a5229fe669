package report

import (
	"encoding/json"
	"fmt"
	"html"
	"io"
	"math"
	"strings"
	"time"

	"github.com/perflab/perflab/internal/numfmt"
	"github.com/perflab/perflab/internal/search"
	"github.com/perflab/perflab/internal/termfmt"
)

// searchJSON is the stored document: the result with its kind.
func searchJSON(r *search.Result) any {
	return struct {
		Kind string `json:"kind"`
		*search.Result
	}{search.Kind, r}
}

// DecodeSearch reads a stored search result back.
func DecodeSearch(data []byte) (*search.Result, error) { return search.Decode(data) }

// effPct is an effect as a signed percentage with its interval.
func effPct(e search.Effect) string {
	if math.IsNaN(e.Ratio) {
		return "not measured"
	}
	s := numfmt.Pct(100 * (e.Ratio - 1))
	if !math.IsNaN(e.Lo) {
		s += " [" + numfmt.Pct(100*(e.Lo-1)) + ", " + numfmt.Pct(100*(e.Hi-1)) + "]"
	}
	return s
}

func settingShare(s search.Setting) string {
	if math.IsNaN(s.Share) {
		return "–"
	}
	out := fmt.Sprintf("%.0f%%", 100*s.Share)
	if !math.IsNaN(s.ShareLo) {
		out += fmt.Sprintf(" [%.0f, %.0f]", 100*s.ShareLo, 100*s.ShareHi)
	}
	return out
}

func searchBudget(r *search.Result) string {
	s := fmt.Sprintf("%d runs in %d blocks (%d of them confirmation blocks), %s measuring",
		r.Runs, r.Blocks, r.ConfirmBlocks, time.Duration(r.Seconds*float64(time.Second)).Round(time.Second))
	if r.BudgetSeconds > 0 {
		s += " of a " + time.Duration(r.BudgetSeconds*float64(time.Second)).Round(time.Second).String() + " budget"
	}
	return s
}

func searchText(w io.Writer, r *search.Result, style termfmt.Style) error {
	tw := &errWriter{w: w}
	tw.printf("%s\n", style.Bold(fmt.Sprintf("perflab tune search: %s — %s (%s)", r.Probe, r.Objective, r.Unit)))
	if r.Confirmed {
		tw.printf("%s %s\n", style.Green("RESULT:"), r.Conclusion)
	} else {
		tw.printf("%s %s\n", style.Yellow("RESULT:"), r.Conclusion)
	}
	if r.Gain != nil {
		tw.printf("  winner against the untouched baseline, fresh blocks: %s %s\n", r.Metric, effPct(*r.Gain))
	}
	if len(r.Winner) > 0 {
		title := "Winner (confirmed)"
		if !r.Confirmed {
			title = "Screening's winner (NOT confirmed: not kept)"
		}
		tw.printf("\n%s\n", style.Bold(title))
		for _, s := range r.Winner {
			tw.printf("  %s: %s → %s", s.Knob, clip(s.From), clip(s.Value))
			if s.Alone != nil {
				tw.printf("   alone %s, share of the gain %s", effPct(*s.Alone), settingShare(s))
			}
			tw.printf("\n")
		}
	}
	if len(r.Constraints) > 0 {
		tw.printf("\n%s\n", style.Bold("Constraints in the confirmation blocks"))
		for _, c := range r.Constraints {
			mark := style.Green("held")
			if !c.Held {
				mark = style.Red("BROKEN")
			}
			tw.printf("  %s: worst block %s (baseline %s) %s\n", c.Constraint, numfmt.Num(c.Worst), numfmt.Num(c.Baseline), mark)
		}
	}
	if len(r.Rejected) > 0 {
		tw.printf("\n%s\n", style.Bold("Rejected"))
		for _, x := range r.Rejected {
			mark := "  "
			if x.Harmful {
				mark = style.Red("! ")
			}
			tw.printf("%s%s=%s: %s — %s\n", mark, x.Knob, clip(x.Value), effPct(x.Effect), x.Why)
			if x.Worst != nil && x.Worst.Value != x.Value {
				tw.printf("     %s=%s: %s\n", x.Knob, clip(x.Worst.Value), effPct(x.Worst.Effect))
			}
		}
	}
	searchSteps(tw, r)
	tw.printf("\n%s: %s\n", style.Bold("Budget"), searchBudget(r))
	if len(r.Untried) > 0 {
		tw.printf("  not tried (budget): %s\n", strings.Join(r.Untried, ", "))
	}
	switch {
	case r.Applied:
		tw.printf("the winner was applied through the journal ('perflab tune revert' undoes it)\n")
	case r.Restored:
		tw.printf("every knob reads its value from before the search again\n")
	default:
		tw.printf("%s\n", style.Red("the host was NOT fully restored: run 'perflab tune revert'"))
	}
	for _, x := range r.Excluded {
		tw.printf("not searched: %s\n", x)
	}
	for _, n := range r.Notes {
		tw.printf("note: %s\n", n)
	}
	return tw.err
}

func searchSteps(tw *errWriter, r *search.Result) {
	if len(r.Steps) > 0 {
		tw.printf("\nScreening (each value against the configuration so far, %s):\n", "interleaved blocks")
		for i, s := range r.Steps {
			tw.printf("  %d. %s (was %s)", i+1, s.Knob, clip(s.From))
			if s.Kept != "" {
				tw.printf(" → kept %s", clip(s.Kept))
			}
			tw.printf("\n")
			for _, t := range s.Tried {
				tw.printf("       %s: %s %s", clip(t.Value), effPct(t.Effect), t.Effect.Verdict)
				if t.Constraint != "" {
					tw.printf(", breaks %s", t.Constraint)
				}
				tw.printf("\n")
			}
		}
	}
	if len(r.Shrink) > 0 {
		tw.printf("\nShrink (winner without the knob / winner):\n")
		for _, s := range r.Shrink {
			tw.printf("  %s=%s: %s — %s\n", s.Knob, clip(s.Value), effPct(s.Without), s.Why)
		}
	}
}

func searchMD(w io.Writer, r *search.Result) error {
	mw := &errWriter{w: w}
	mw.printf("# perflab tune search: %s\n\n%s.\n\n**%s**\n\n", mdEscape(r.Probe), mdEscape(r.Objective), mdEscape(r.Conclusion))
	if r.Gain != nil {
		mw.printf("Winner against the untouched baseline on %d fresh blocks: %s %s.\n\n", r.Gain.Blocks, mdEscape(r.Metric), effPct(*r.Gain))
	}
	if len(r.Winner) > 0 {
		mw.printf("| knob | from | to | alone | share of the gain |\n| --- | --- | --- | --- | --- |\n")
		for _, s := range r.Winner {
			alone := "–"
			if s.Alone != nil {
				alone = effPct(*s.Alone)
			}
			mw.printf("| %s | %s | %s | %s | %s |\n", mdEscape(s.Knob), mdEscape(s.From), mdEscape(s.Value), alone, settingShare(s))
		}
		mw.printf("\n")
	}
	for _, c := range r.Constraints {
		mw.printf("- %s: worst confirmation block %s, held: %v\n", mdEscape(c.Constraint), numfmt.Num(c.Worst), c.Held)
	}
	if len(r.Rejected) > 0 {
		mw.printf("\n## Rejected\n\n| knob | value | effect | harmful | why |\n| --- | --- | --- | --- | --- |\n")
		for _, x := range r.Rejected {
			mw.printf("| %s | %s | %s | %v | %s |\n", mdEscape(x.Knob), mdEscape(x.Value), effPct(x.Effect), x.Harmful, mdEscape(x.Why))
		}
	}
	mw.printf("\nBudget: %s. Restored: %v. Applied: %v.\n", searchBudget(r), r.Restored, r.Applied)
	return mw.err
}

const searchCSS = "body{font:14px system-ui,sans-serif;margin:2em}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:4px 8px;text-align:left}.harmful{color:#a00}.ok{color:#070;font-weight:bold}"

func searchHTML(w io.Writer, r *search.Result) error {
	var b strings.Builder
	e := html.EscapeString
	fmt.Fprintf(&b, "<h1>perflab tune search: %s</h1><p>%s</p><p class=\"%s\">%s</p>", e(r.Probe), e(r.Objective), map[bool]string{true: "ok", false: ""}[r.Confirmed], e(r.Conclusion))
	if r.Gain != nil {
		fmt.Fprintf(&b, "<p>Winner against the untouched baseline on %d fresh blocks: %s %s</p>", r.Gain.Blocks, e(r.Metric), e(effPct(*r.Gain)))
	}
	if len(r.Winner) > 0 {
		b.WriteString("<h2>Winner</h2><table><tr><th>knob</th><th>from</th><th>to</th><th>alone</th><th>share of the gain</th></tr>")
		for _, s := range r.Winner {
			alone := "–"
			if s.Alone != nil {
				alone = effPct(*s.Alone)
			}
			fmt.Fprintf(&b, "<tr><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>", e(s.Knob), e(s.From), e(s.Value), e(alone), e(settingShare(s)))
		}
		b.WriteString("</table>")
	}
	if len(r.Constraints) > 0 {
		b.WriteString("<h2>Constraints in the confirmation blocks</h2><ul>")
		for _, c := range r.Constraints {
			fmt.Fprintf(&b, "<li>%s: worst block %s, held: %v</li>", e(c.Constraint), e(numfmt.Num(c.Worst)), c.Held)
		}
		b.WriteString("</ul>")
	}
	if len(r.Rejected) > 0 {
		b.WriteString("<h2>Rejected</h2><table><tr><th>knob</th><th>value</th><th>effect</th><th>why</th></tr>")
		for _, x := range r.Rejected {
			cls := ""
			if x.Harmful {
				cls = " class=\"harmful\""
			}
			fmt.Fprintf(&b, "<tr%s><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>", cls, e(x.Knob), e(x.Value), e(effPct(x.Effect)), e(x.Why))
		}
		b.WriteString("</table>")
	}
	b.WriteString("<h2>Screening</h2><ol>")
	for _, s := range r.Steps {
		fmt.Fprintf(&b, "<li>%s (was %s)", e(s.Knob), e(s.From))
		if s.Kept != "" {
			fmt.Fprintf(&b, " → <b>kept %s</b>", e(s.Kept))
		}
		b.WriteString("<ul>")
		for _, t := range s.Tried {
			fmt.Fprintf(&b, "<li>%s: %s %s</li>", e(t.Value), e(effPct(t.Effect)), e(t.Effect.Verdict))
		}
		b.WriteString("</ul></li>")
	}
	b.WriteString("</ol>")
	fmt.Fprintf(&b, "<p>Budget: %s. Host restored: %v. Winner applied: %v.</p>\n", e(searchBudget(r)), r.Restored, r.Applied)
	return WritePage(w, Page{Title: "perflab tune search", CSS: searchCSS, Body: b.String()})
}

// SearchPlan writes tune search --dry-run: the space and its cost.
func SearchPlan(w io.Writer, p search.SearchPlan, format string) error {
	if format == "json" {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(p)
	}
	tw := &errWriter{w: w}
	tw.printf("knobs, in search order (%d):\n", len(p.Knobs))
	for _, k := range p.Knobs {
		tw.printf("  %s (%s): %s\n", k.Name, k.Scope, strings.Join(k.Ladder, " | "))
	}
	if len(p.Knobs) == 0 {
		tw.printf("  none: nothing this target may change is in the space\n")
	}
	for _, x := range p.Excluded {
		tw.printf("not searched: %s\n", x)
	}
	tw.printf("budget: one screening pass is %d runs; the confirmation %d runs (one knob kept) to %d (all kept), plus the shrink\n", p.ScreenRuns, p.ConfirmRunsMin, p.ConfirmRunsMax)
	if p.Budget > 0 {
		tw.printf("the search stops screening when the time spent plus the shrink and the confirmation would pass %s\n", p.Budget)
	}
	return tw.err
}
