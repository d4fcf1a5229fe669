package report

import (
	"github.com/perflab/perflab/internal/numfmt"
	"io"
	"strings"

	"github.com/perflab/perflab/internal/compare"
)

// Markdown writes the report as GitHub-flavoured Markdown: likely causes
// as a numbered list, the metrics as a table with verdicts in bold, then
// summaries and the configuration diff.
func Markdown(w io.Writer, c *compare.Comparison) error {
	mw := &errWriter{w: w}
	rs := rows(c)
	var names []string
	for _, s := range c.Sides {
		names = append(names, mdEscape(sideTitle(s)))
	}
	if len(c.Sides) == 1 {
		mw.printf("# perflab report: %s\n\n", names[0])
	} else {
		mw.printf("# perflab compare: %s\n\n", strings.Join(names, " vs "))
		for _, p := range c.Pairs {
			mw.printf("**%s.**\n\n", mdEscape(compare.Headline(c, p)))
		}
		mw.printf("%s.\n\n", mdEscape(legend(c)))
	}
	for _, p := range c.Pairs {
		title := "Likely causes"
		if len(c.Pairs) > 1 {
			title += " (" + mdEscape(c.Sides[p.Other].Name) + ")"
		}
		mw.printf("## %s\n\n", title)
		if len(p.Causes) == 0 {
			mw.printf("No known setting differs between the sides.\n\n")
		}
		for i, cs := range p.Causes {
			head, detail := causeLines(c, cs, rs, p.Other)
			mw.printf("%d. **%s**\n", i+1, mdEscape(head))
			for _, d := range detail {
				mw.printf("   - %s\n", mdEscape(d))
			}
		}
		mw.printf("\n")
	}
	mw.printf("## Metrics\n\n")
	header := []string{"suite", "metric"}
	for i, s := range c.Sides {
		header = append(header, mdEscape(s.Name)+" median ±CI")
		if i > 0 {
			header = append(header, "Δ [95% CI]", "p", "verdict")
		}
	}
	mw.printf("| %s |\n|%s\n", strings.Join(header, " | "), strings.Repeat(" --- |", len(header)))
	for _, r := range rs {
		cells := []string{mdEscape(r.Suite), mdEscape(r.Metric)}
		for i, s := range r.Sides {
			cells = append(cells, mdEscape(s.Median+" "+s.CI))
			if i == 0 {
				continue
			}
			d := r.Deltas[i]
			if d == nil {
				cells = append(cells, "–", "", "")
				continue
			}
			mark := mdEscape(d.Mark)
			if d.Verdict == compare.Better || d.Verdict == compare.Worse {
				mark = "**" + mark + "**"
			}
			if d.Note != "" {
				mark += " (" + mdEscape(d.Note) + ")"
			}
			cells = append(cells, mdEscape(d.Delta+" "+d.CI), d.P, mark)
		}
		mw.printf("| %s |\n", strings.Join(cells, " | "))
	}
	for _, p := range c.Pairs {
		vs := mdEscape(c.Sides[p.Other].Name + " vs " + c.Sides[0].Name)
		mw.printf("\n## Summary (%s)\n\n", vs)
		mw.printf("%d better, %d worse, %d same, %d equivalent, %d inconclusive.\n\n",
			p.Counts[compare.Better], p.Counts[compare.Worse], p.Counts[compare.Same], p.Counts[compare.Equivalent], p.Counts[compare.Inconclusive])
		for _, s := range p.Suites {
			mw.printf("- geomean **%s**: %s over %d metrics\n", mdEscape(s.Suite), gainWords(s.GainPct), s.Metrics)
		}
		if len(p.Monitor) > 0 {
			mw.printf("\n### Host activity during the runs\n\n| series | %s | %s | notable |\n| --- | --- | --- | --- |\n", mdEscape(c.Sides[0].Name), mdEscape(c.Sides[p.Other].Name))
			for _, m := range p.Monitor {
				n := ""
				if m.Notable {
					n = "**yes**"
				}
				mw.printf("| %s | %s %s | %s %s | %s |\n", m.Field, numfmt.Num(m.Base), m.Unit, numfmt.Num(m.Other), m.Unit, n)
			}
		}
		if len(p.Config) > 0 {
			mw.printf("\n### Configuration differences (%d)\n\n| fact | %s | %s |\n| --- | --- | --- |\n", len(p.Config), mdEscape(c.Sides[0].Name), mdEscape(c.Sides[p.Other].Name))
			for _, d := range p.Config {
				mw.printf("| `%s` | %s | %s |\n", strings.ReplaceAll(d.Path, "`", "'"), mdEscape(d.Before), mdEscape(d.After))
			}
		}
	}
	if len(c.Notes) > 0 {
		mw.printf("\n## Notes\n\n")
		for _, n := range c.Notes {
			mw.printf("- %s\n", mdEscape(n))
		}
	}
	return mw.err
}

// mdEscape keeps table cells intact: pipes and newlines would break a row,
// and markup characters in metric names would turn into formatting.
func mdEscape(s string) string {
	r := strings.NewReplacer("|", `\|`, "\n", " ", "*", `\*`, "_", `\_`, "`", "'", "<", "&lt;", ">", "&gt;")
	return r.Replace(s)
}
