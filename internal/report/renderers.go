package report

import (
	"fmt"
	"io"

	"github.com/perflab/perflab/internal/audit"
	"github.com/perflab/perflab/internal/bisect"
	"github.com/perflab/perflab/internal/compare"
	"github.com/perflab/perflab/internal/deps"
	"github.com/perflab/perflab/internal/fleet"
	"github.com/perflab/perflab/internal/fleetrun"
	"github.com/perflab/perflab/internal/run"
	"github.com/perflab/perflab/internal/store"
	"github.com/perflab/perflab/internal/termfmt"
	"github.com/perflab/perflab/internal/tune"
)

// rendererOf is the one table from a result's type to its writers. A
// result type that is not here has no renderer (Write answers a
// FormatError); adding an output means adding its case here and its
// golden files.
func rendererOf(result any, o Options) renderer {
	st := o.Style
	switch r := result.(type) {
	case *compare.Comparison:
		return renderer{"a comparison", map[string]func(io.Writer) error{
			FormatText: func(w io.Writer) error { return Text(w, r, st) },
			FormatMD:   func(w io.Writer) error { return Markdown(w, r) },
			FormatJSON: func(w io.Writer) error { return JSON(w, r) },
			FormatHTML: func(w io.Writer) error { return HTML(w, r) },
		}}
	case *CheckDoc:
		return renderer{"a check", map[string]func(io.Writer) error{
			FormatText: func(w io.Writer) error { return CheckText(w, r, st) },
			FormatMD:   func(w io.Writer) error { return CheckMarkdown(w, r) },
			FormatJSON: func(w io.Writer) error { return CheckJSON(w, r) },
			FormatHTML: func(w io.Writer) error { return CheckHTML(w, r) },
		}}
	case *bisect.Result:
		return renderer{"a bisection", map[string]func(io.Writer) error{
			FormatText: func(w io.Writer) error { return bisectText(w, r, st) },
			FormatMD:   func(w io.Writer) error { return bisectMD(w, r) },
			FormatJSON: jsonOf(bisectJSON(r)),
			FormatHTML: func(w io.Writer) error { return bisectHTML(w, r) },
		}}
	case bisect.Plan:
		return renderer{"a bisection plan", map[string]func(io.Writer) error{
			FormatText: func(w io.Writer) error { return bisectPlanText(w, r) },
			FormatJSON: jsonOf(bisectPlanDoc(r)),
		}}
	case *History:
		return renderer{"a history", map[string]func(io.Writer) error{
			FormatText: func(w io.Writer) error { return historyText(w, r.Method, r.Series) },
			FormatMD:   func(w io.Writer) error { return historyMarkdown(w, r.Method, r.Series) },
			FormatJSON: func(w io.Writer) error { return historyJSON(w, r.Method, r.Series) },
		}}
	case *fleet.Report:
		return renderer{"a fleet report", map[string]func(io.Writer) error{
			FormatText: func(w io.Writer) error { return fleetText(w, r) },
			FormatMD:   func(w io.Writer) error { return fleetMarkdown(w, r) },
			FormatJSON: jsonOf(r),
			FormatHTML: func(w io.Writer) error { return fleetHTML(w, r) },
		}}
	case *fleetrun.Report:
		return renderer{"a fleet run", map[string]func(io.Writer) error{
			FormatText: func(w io.Writer) error { return fleetRunText(w, r) },
			FormatJSON: jsonOf(r),
		}}
	case *Retrans:
		return renderer{"a retransmission trace", map[string]func(io.Writer) error{
			FormatText: func(w io.Writer) error { return retransText(w, r.RetransReport, false, r.Events) },
			FormatMD:   func(w io.Writer) error { return retransText(w, r.RetransReport, true, r.Events) },
			FormatJSON: jsonOf(r.RetransReport),
		}}
	case *Cache:
		return renderer{"a page-cache trace", map[string]func(io.Writer) error{
			FormatText: func(w io.Writer) error { return cacheText(w, r.CacheReport, false, r.Streamed) },
			FormatMD:   func(w io.Writer) error { return cacheText(w, r.CacheReport, true, false) },
			FormatJSON: jsonOf(r.CacheReport),
		}}
	case IRQViews:
		return renderer{"the NICs' IRQs", map[string]func(io.Writer) error{
			FormatText: textOf(func(w io.Writer) { irqText(w, r, st) }),
			FormatJSON: jsonOf(r),
		}}
	case Rules:
		return renderer{"the rule catalogue", map[string]func(io.Writer) error{
			FormatText: textOf(func(w io.Writer) { RuleTable(w, r, st) }),
			FormatJSON: func(w io.Writer) error {
				docs := make([]audit.RuleDoc, len(r))
				for i, x := range r {
					docs[i] = x.Doc()
				}
				return writeIndented(w, docs)
			},
		}}
	case *audit.Rule:
		return renderer{"a rule", map[string]func(io.Writer) error{
			FormatText: textOf(func(w io.Writer) { Rule(w, r, st) }),
			FormatJSON: jsonOf(r.Doc()),
		}}
	case WorkloadList:
		return renderer{"the workloads", map[string]func(io.Writer) error{
			FormatText: textOf(func(w io.Writer) { Workloads(w, st) }),
			FormatJSON: func(w io.Writer) error {
				docs, err := audit.WorkloadDocs()
				if err != nil {
					return err
				}
				return writeIndented(w, docs)
			},
		}}
	case *DepsStatus:
		return renderer{"the tools' status", map[string]func(io.Writer) error{
			FormatText: textOf(func(w io.Writer) { Deps(w, r.Status, r.Suite, st) }),
			FormatJSON: jsonOf(r.Status),
		}}
	case tune.Plan:
		return renderer{"a tuning plan", map[string]func(io.Writer) error{
			FormatText: textOf(func(w io.Writer) { TunePlan(w, r, st) }),
			FormatJSON: jsonOf(r),
		}}
	case TuneDrift:
		return renderer{"a tuning verification", map[string]func(io.Writer) error{
			FormatText: textOf(func(w io.Writer) { TuneVerify(w, r, st) }),
			FormatJSON: func(w io.Writer) error {
				if r == nil {
					r = TuneDrift{}
				}
				return writeIndented(w, []tune.Drift(r))
			},
		}}
	case *tune.Journal:
		return renderer{"the tuning journal", map[string]func(io.Writer) error{
			FormatText: textOf(func(w io.Writer) { TuneStatus(w, r) }),
			FormatJSON: jsonOf(r),
		}}
	case *Push:
		return renderer{"a push", map[string]func(io.Writer) error{
			FormatText: func(w io.Writer) error {
				_, err := fmt.Fprintf(w, "pushed %d runs from %s to %s (%d already there)\n", r.Added, r.From, r.To, r.Present)
				return err
			},
			FormatJSON: jsonOf(r),
		}}
	case LabelList:
		return renderer{"the labels", map[string]func(io.Writer) error{
			FormatText: func(w io.Writer) error { return Labels(w, r) },
			FormatJSON: func(w io.Writer) error {
				if r == nil {
					r = LabelList{}
				}
				return writeIndented(w, []store.LabelCount(r))
			},
		}}
	case RunList:
		return renderer{"a run list", map[string]func(io.Writer) error{
			FormatText: func(w io.Writer) error { return RunsList(w, r) },
			FormatJSON: func(w io.Writer) error {
				ls := make([]run.Listing, 0, len(r))
				for _, x := range r {
					ls = append(ls, x.Listing())
				}
				return writeIndented(w, ls)
			},
		}}
	case *RunView:
		return renderer{"a run", map[string]func(io.Writer) error{
			FormatText: textOf(func(w io.Writer) { RunShow(w, r.Run, st, r.Series, r.Samples) }),
			FormatMD:   func(w io.Writer) error { return Bench(w, []*run.Run{r.Run}, FormatMD, termfmt.Style{}) },
			FormatJSON: jsonOf(r.Run),
		}}
	}
	return renderer{}
}

// LabelList is 'runs labels': each label in use with its number of runs.
type LabelList []store.LabelCount

// RunList is 'runs list'.
type RunList []*run.Run

// RunView is 'runs show': one run, with its whole monitor series
// (Series) and every sample (Samples) in text.
type RunView struct {
	Run             *run.Run
	Series, Samples bool
}

// TuneDrift is 'tune verify': each journaled knob, still as applied or not.
type TuneDrift []tune.Drift

// Push is 'runs push': how many runs went from one store to another.
type Push struct {
	From string `json:"from"`
	To   string `json:"to"`
	store.PushResult
}

// Rules is the rule catalogue as 'perflab rules' lists it.
type Rules []*audit.Rule

// WorkloadList is 'perflab rules --workloads': the built-in workloads.
type WorkloadList struct{}

// DepsStatus is 'perflab deps': the tools of Suite and whether each is
// installed.
type DepsStatus struct {
	Status deps.Status
	Suite  string
}
