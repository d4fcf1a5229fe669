package diff

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/perflab/perflab/internal/termfmt"
)

// WriteTable prints rows as an aligned text table: each function's
// inclusive and self share before → after with the change in percentage
// points, growth in red and shrinkage in green when style is on.
func WriteTable(w io.Writer, rows []Row, style termfmt.Style) error {
	if len(rows) == 0 {
		_, err := fmt.Fprintln(w, "no functions in either profile")
		return err
	}
	nameW := len("function")
	for _, r := range rows {
		if n := utf8.RuneCountInString(r.Function); n > nameW {
			nameW = min(n, 70)
		}
	}
	fmt.Fprintf(w, "%-*s  %-30s  %s\n", nameW, "function", "inclusive (before → after)", "self (before → after)")
	for _, r := range rows {
		name := r.Function
		if utf8.RuneCountInString(name) > nameW {
			name = string([]rune(name)[:nameW-1]) + "…"
		}
		incl := change(r.InclBefore, r.InclAfter, style)
		self := change(r.SelfBefore, r.SelfAfter, style)
		note := ""
		switch {
		case r.Appeared:
			note = "  new"
		case r.Disappeared:
			note = "  gone"
		}
		pad := nameW - utf8.RuneCountInString(name)
		if _, err := fmt.Fprintf(w, "%s%s  %s  %s%s\n", name, strings.Repeat(" ", pad), incl, self, note); err != nil {
			return err
		}
	}
	b, a := rows[0].TotalBefore, rows[0].TotalAfter
	_, err := fmt.Fprintf(w, "shares of the total count (%s before, %s after); changes in percentage points (pp)\n",
		strconv.FormatFloat(b, 'f', -1, 64), strconv.FormatFloat(a, 'f', -1, 64))
	return err
}

// change renders "1.15% → 23.98% (+22.83 pp)" padded to a fixed width.
func change(before, after float64, style termfmt.Style) string {
	d := after - before
	s := fmt.Sprintf("%6.2f%% → %6.2f%%", before, after)
	ds := fmt.Sprintf("(%+.2f pp)", d)
	switch {
	case d >= 0.005:
		ds = style.Red(ds)
	case d <= -0.005:
		ds = style.Green(ds)
	}
	return s + " " + ds + strings.Repeat(" ", max(0, 12-len(fmt.Sprintf("(%+.2f pp)", d))))
}
