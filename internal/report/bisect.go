package report

import (
	"encoding/json"
	"fmt"
	"html"
	"io"
	"math"
	"strings"

	"github.com/perflab/perflab/internal/bisect"
	"github.com/perflab/perflab/internal/numfmt"
	"github.com/perflab/perflab/internal/termfmt"
)

// bisectJSON replaces NaN by null (JSON has no NaN).
func bisectJSON(r *bisect.Result) any {
	type cause struct {
		bisect.CauseResult
		Share   num `json:"share"`
		ShareLo num `json:"share_lo"`
		ShareHi num `json:"share_hi"`
	}
	type effect struct {
		Ratio num `json:"ratio"`
		Lo    num `json:"lo"`
		Hi    num `json:"hi"`
	}
	type step struct {
		bisect.Step
		Effect *effect `json:"effect,omitempty"`
	}
	eff := func(e *bisect.Effect) *effect {
		if e == nil {
			return nil
		}
		return &effect{num(e.Ratio), num(e.Lo), num(e.Hi)}
	}
	doc := struct {
		Kind string `json:"kind"`
		*bisect.Result
		All    *effect `json:"all,omitempty"`
		Steps  []step  `json:"steps"`
		Causes []cause `json:"causes"`
	}{Kind: "perflab-bisect", Result: r, All: eff(r.All), Steps: []step{}, Causes: []cause{}}
	for _, s := range r.Steps {
		doc.Steps = append(doc.Steps, step{s, eff(s.Effect)})
	}
	for _, c := range r.Causes {
		doc.Causes = append(doc.Causes, cause{c, num(c.Share), num(c.ShareLo), num(c.ShareHi)})
	}
	if doc.Result.Untestable == nil {
		doc.Result.Untestable = []bisect.Untestable{}
	}
	return doc
}

func ratioPct(e *bisect.Effect) string {
	if e == nil {
		return "(inferred)"
	}
	s := numfmt.Pct(100 * (e.Ratio - 1))
	if !math.IsNaN(e.Lo) {
		s += " [" + numfmt.Pct(100*(e.Lo-1)) + ", " + numfmt.Pct(100*(e.Hi-1)) + "]"
	}
	return s
}

func sharePct(c bisect.CauseResult) string {
	if math.IsNaN(c.Share) {
		return "–"
	}
	s := fmt.Sprintf("%.0f%%", 100*c.Share)
	if !math.IsNaN(c.ShareLo) {
		s += fmt.Sprintf(" [%.0f, %.0f]", 100*c.ShareLo, 100*c.ShareHi)
	}
	return s
}

func bisectText(w io.Writer, r *bisect.Result, style termfmt.Style) error {
	tw := &errWriter{w: w}
	tw.printf("%s\n", style.Bold(fmt.Sprintf("perflab bisect: %s %s (%s, %s is better)", r.Probe, r.Metric, r.Unit, r.Better)))
	if r.All != nil {
		tw.printf("every candidate flipped to the good host's value: %s against this host as it is\n", ratioPct(r.All))
	}
	tw.printf("\n%s\n", style.Bold("Causes"))
	for _, c := range r.Causes {
		mark := style.Dim("  cleared  ")
		switch c.Outcome {
		case "confirmed":
			mark = style.Green("  CONFIRMED")
		case "not confirmed":
			mark = style.Yellow("  unconfirmed")
		}
		line := fmt.Sprintf("%s %s: %s → %s", mark, c.Knob, c.Bad, c.Good)
		if c.Outcome != "cleared" {
			line += fmt.Sprintf(" recovers %s of the gap, improved %d of %d apply/revert blocks", sharePct(c), c.Improved, c.Blocks)
		}
		if len(c.Joint) > 0 {
			line += " (only together with " + strings.Join(c.Joint, ", ") + ")"
		}
		tw.printf("%s\n", line)
	}
	if r.Interaction != nil {
		tw.printf("  interaction (1 − Σ shares): %.0f%%\n", 100**r.Interaction)
	}
	if r.Unexplained != nil {
		tw.printf("  not recovered by any tested setting: %.0f%% of the good host's gap\n", 100**r.Unexplained)
	}
	if len(r.Untestable) > 0 {
		tw.printf("\n%s\n", style.Bold("Not testable here"))
		for _, u := range r.Untestable {
			tw.printf("  %s: %s → %s (%s)\n     %s\n", u.Path, clip(u.Bad), clip(u.Good), u.Why, style.Blue(u.Instruction))
		}
	}
	tw.printf("\n%s\n", style.Bold("Search"))
	for i, s := range r.Steps {
		tw.printf("  %d. %s: %s %s", i+1, strings.Join(s.Knobs, " + "), s.Outcome, ratioPct(s.Effect))
		if s.Why != "" {
			tw.printf(" — %s", s.Why)
		}
		tw.printf("\n")
	}
	tw.printf("\n%d runs measured; one at a time with the same confirmation: %d\n", r.Runs, r.NaiveRuns)
	if r.Restored {
		tw.printf("every knob reads its value from before the bisection again\n")
	} else {
		tw.printf("%s\n", style.Red("the host was NOT fully restored: run 'perflab tune revert'"))
	}
	for _, n := range r.Notes {
		tw.printf("note: %s\n", n)
	}
	return tw.err
}

func bisectMD(w io.Writer, r *bisect.Result) error {
	mw := &errWriter{w: w}
	mw.printf("# perflab bisect: %s `%s`\n\n", mdEscape(r.Probe), mdEscape(r.Metric))
	if r.All != nil {
		mw.printf("Every candidate flipped: %s.\n\n", ratioPct(r.All))
	}
	mw.printf("| knob | bad | good | outcome | share of the gap | blocks improved |\n| --- | --- | --- | --- | --- | --- |\n")
	for _, c := range r.Causes {
		mw.printf("| %s | %s | %s | %s | %s | %d/%d |\n", mdEscape(c.Knob), mdEscape(c.Bad), mdEscape(c.Good), c.Outcome, sharePct(c), c.Improved, c.Blocks)
	}
	if len(r.Untestable) > 0 {
		mw.printf("\n## Not testable here\n\n| fact | bad | good | instruction |\n| --- | --- | --- | --- |\n")
		for _, u := range r.Untestable {
			mw.printf("| %s | %s | %s | %s |\n", mdEscape(u.Path), mdEscape(u.Bad), mdEscape(u.Good), mdEscape(u.Instruction))
		}
	}
	mw.printf("\n%d runs measured (one at a time: %d); restored: %v.\n", r.Runs, r.NaiveRuns, r.Restored)
	return mw.err
}

const bisectCSS = "body{font:14px system-ui,sans-serif;margin:2em}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:4px 8px;text-align:left}.confirmed{color:#070;font-weight:bold}.cleared{color:#888}ul{line-height:1.6}"

func bisectHTML(w io.Writer, r *bisect.Result) error {
	var b strings.Builder
	fmt.Fprintf(&b, "<h1>perflab bisect: %s %s</h1>", html.EscapeString(r.Probe), html.EscapeString(r.Metric))
	if r.All != nil {
		fmt.Fprintf(&b, "<p>Every candidate flipped: %s</p>", html.EscapeString(ratioPct(r.All)))
	}
	b.WriteString("<h2>Causes</h2><table><tr><th>knob</th><th>bad</th><th>good</th><th>outcome</th><th>share of the gap</th><th>blocks improved</th></tr>")
	for _, c := range r.Causes {
		cls := strings.ReplaceAll(c.Outcome, " ", "-")
		fmt.Fprintf(&b, "<tr class=\"%s\"><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%d/%d</td></tr>", cls,
			html.EscapeString(c.Knob), html.EscapeString(c.Bad), html.EscapeString(c.Good), c.Outcome, html.EscapeString(sharePct(c)), c.Improved, c.Blocks)
	}
	b.WriteString("</table><h2>Search tree</h2>")
	var tree func(i int)
	tree = func(i int) {
		s := r.Steps[i]
		fmt.Fprintf(&b, "<li>%s: <b>%s</b> %s", html.EscapeString(strings.Join(s.Knobs, " + ")), s.Outcome, html.EscapeString(ratioPct(s.Effect)))
		if len(s.Children) > 0 {
			b.WriteString("<ul>")
			for _, c := range s.Children {
				tree(c)
			}
			b.WriteString("</ul>")
		}
		b.WriteString("</li>")
	}
	if len(r.Steps) > 0 {
		b.WriteString("<ul>")
		tree(0)
		b.WriteString("</ul>")
	}
	if len(r.Untestable) > 0 {
		b.WriteString("<h2>Not testable here</h2><ul>")
		for _, u := range r.Untestable {
			fmt.Fprintf(&b, "<li>%s: %s → %s — %s</li>", html.EscapeString(u.Path), html.EscapeString(u.Bad), html.EscapeString(u.Good), html.EscapeString(u.Instruction))
		}
		b.WriteString("</ul>")
	}
	fmt.Fprintf(&b, "<p>%d runs measured (one at a time: %d); host restored: %v</p>\n", r.Runs, r.NaiveRuns, r.Restored)
	return WritePage(w, Page{Title: "perflab bisect", CSS: bisectCSS, Body: b.String()})
}

// BisectPlan writes bisect --dry-run: the candidates in search order, what
// cannot be tested here, and the budget.
func BisectPlan(w io.Writer, p bisect.Plan, format string) error {
	return Write(w, p, format, Options{})
}

// bisectPlanDoc has empty lists where the plan has none (JSON [] not null).
func bisectPlanDoc(p bisect.Plan) bisect.Plan {
	if p.Order == nil {
		p.Order = []bisect.Candidate{}
	}
	if p.Untestable == nil {
		p.Untestable = []bisect.Untestable{}
	}
	return p
}

func bisectPlanText(w io.Writer, p bisect.Plan) error {
	tw := &errWriter{w: w}
	tw.printf("candidates, in search order (%d):\n", len(p.Order))
	for _, c := range p.Order {
		tw.printf("  %s: %s → %s\n", c.Name, clip(c.Bad), clip(c.Good))
	}
	if len(p.Order) == 0 {
		tw.printf("  none: no setting perflab can flip differs\n")
	}
	tw.printf("not testable here (%d):\n", len(p.Untestable))
	for _, u := range p.Untestable {
		tw.printf("  %s: %s → %s — %s\n", u.Path, clip(u.Bad), clip(u.Good), u.Instruction)
	}
	tw.printf("budget: about %d runs for one cause (all, the split, the confirmation); one at a time with the same confirmation: %d\n", p.OneCauseRuns, p.NaiveRuns)
	return tw.err
}

// DecodeBisect reads a bisection back from its JSON document (as stored
// by perflab bisect): nulls, JSON's stand-in for NaN, become NaN again.
func DecodeBisect(data []byte) (*bisect.Result, error) {
	type effect struct{ Ratio, Lo, Hi *float64 }
	type cause struct {
		bisect.CauseResult
		Share   *float64 `json:"share"`
		ShareLo *float64 `json:"share_lo"`
		ShareHi *float64 `json:"share_hi"`
	}
	type step struct {
		bisect.Step
		Effect *effect `json:"effect"`
	}
	var doc struct {
		Kind string `json:"kind"`
		bisect.Result
		All    *effect `json:"all"`
		Steps  []step  `json:"steps"`
		Causes []cause `json:"causes"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	if doc.Kind != "perflab-bisect" {
		return nil, fmt.Errorf("not a perflab bisection (kind %q)", doc.Kind)
	}
	f := func(p *float64) float64 {
		if p == nil {
			return math.NaN()
		}
		return *p
	}
	eff := func(e *effect) *bisect.Effect {
		if e == nil {
			return nil
		}
		return &bisect.Effect{Ratio: f(e.Ratio), Lo: f(e.Lo), Hi: f(e.Hi)}
	}
	r := doc.Result
	r.All, r.Steps, r.Causes = eff(doc.All), nil, nil
	for _, s := range doc.Steps {
		st := s.Step
		st.Effect = eff(s.Effect)
		r.Steps = append(r.Steps, st)
	}
	for _, c := range doc.Causes {
		cr := c.CauseResult
		cr.Share, cr.ShareLo, cr.ShareHi = f(c.Share), f(c.ShareLo), f(c.ShareHi)
		r.Causes = append(r.Causes, cr)
	}
	return &r, nil
}
