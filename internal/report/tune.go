package report

import (
	"fmt"
	"io"

	"github.com/perflab/perflab/internal/audit"
	"github.com/perflab/perflab/internal/termfmt"
	"github.com/perflab/perflab/internal/tune"
)

// TunePlan is the text of 'perflab tune plan' (and of apply before it
// asks): each knob with its current and planned value, and what perflab
// leaves to be done by hand.
func TunePlan(w io.Writer, p tune.Plan, st termfmt.Style) {
	if len(p.Items) == 0 && len(p.Instructions) == 0 {
		fmt.Fprintf(w, "Nothing to change: this host already meets workload %s.\n", p.Workload)
		return
	}
	fmt.Fprintf(w, "%s %d knob(s) for workload %s:\n", st.Bold("Plan:"), len(p.Items), p.Workload)
	for _, it := range p.Items {
		line := fmt.Sprintf("  %-18s %s: %s → %s", it.Rule, it.Change.Target, orDash(it.Change.Current), it.Change.Value)
		if it.Blocked != "" {
			line += "  " + st.Red("cannot change: "+it.Blocked)
		}
		fmt.Fprintln(w, line)
	}
	if len(p.Instructions) > 0 {
		fmt.Fprintf(w, "\n%s (perflab never applies these itself):\n", st.Bold("By hand"))
		for _, it := range p.Instructions {
			fmt.Fprintf(w, "  %-18s %s\n", it.Rule, audit.FixCommands([]audit.Change{it.Change}))
		}
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// TuneStatus is the text of 'perflab tune status': each transaction of
// the journal (nil: none) with its entries.
func TuneStatus(w io.Writer, j *tune.Journal) {
	if j == nil {
		fmt.Fprintln(w, "No tuning applied.")
		return
	}
	for _, t := range j.Txns {
		fmt.Fprintf(w, "#%d %s  %s\n", t.ID, t.Time.Format("2006-01-02 15:04:05Z"), t.Source)
		for _, en := range j.Entries {
			if en.Txn == t.ID {
				where := ""
				if why := en.Elsewhere(); why != "" {
					where = "  (" + why + ")"
				}
				fmt.Fprintf(w, "   %-8s %s: %s → %s%s\n", en.State, en.Change.Target, en.Old, en.New, where)
			}
		}
	}
	for _, en := range j.Entries {
		if en.State == tune.Pending {
			fmt.Fprintln(w, "An apply was interrupted (pending entries): run 'perflab tune revert' to restore.")
			break
		}
	}
}

// TuneVerify is the text of 'perflab tune verify': each applied knob OK,
// DRIFT or ERROR.
func TuneVerify(w io.Writer, drift []tune.Drift, st termfmt.Style) {
	if len(drift) == 0 {
		fmt.Fprintln(w, "Nothing applied: no tuning journal on this host.")
	}
	for _, d := range drift {
		switch {
		case d.Error != "":
			fmt.Fprintf(w, "%s %s: %s\n", st.Red("ERROR"), d.Target, d.Error)
		case d.OK:
			fmt.Fprintf(w, "%s    %s = %s\n", st.Green("OK"), d.Target, d.Current)
		default:
			fmt.Fprintf(w, "%s %s = %s, expected %s\n", st.Red("DRIFT"), d.Target, d.Current, d.Expected)
		}
	}
}
