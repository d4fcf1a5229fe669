package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/perflab/perflab/internal/deps"
	"github.com/perflab/perflab/internal/termfmt"
)

// Deps is the text of 'perflab deps [SUITE]'.
func Deps(w io.Writer, s deps.Status, suite string, st termfmt.Style) {
	for _, r := range s.Tools {
		// Pad before colouring: ANSI codes would count as width.
		state := st.Green(fmt.Sprintf("%-20s", "installed "+orDash(r.Version)))
		if r.Path == "" {
			state = st.Yellow(fmt.Sprintf("%-20s", "missing"))
		}
		fmt.Fprintf(w, "%-16s %s %-28s %s\n", r.Tool, state, strings.Join(r.Suites, ","), r.Why)
	}
	if s.Install != "" {
		fmt.Fprintf(w, "\nInstall the missing tools: %s\n(or: perflab deps install %s)\n", s.Install, suite)
	} else {
		fmt.Fprintln(w, "\nEverything is installed.")
	}
}
