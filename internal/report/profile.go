package report

import (
	"fmt"
	"io"

	"github.com/perflab/perflab/internal/profile"
	"github.com/perflab/perflab/internal/termfmt"
)

// ProfileSummary is what 'perflab profile' prints after recording: the
// sample count, the hottest functions and stacks, and where the graph went.
func ProfileSummary(w io.Writer, p *profile.Profile, top int, path, format string, st termfmt.Style) {
	prof := p.Fold.Profile
	fmt.Fprintf(w, "%s: %d samples of %s at %d Hz over %.1f s, %d unique stacks\n",
		p.What, p.Fold.Stats.Samples, p.Event, p.Freq, p.Elapsed.Seconds(), len(prof.Stacks))
	fmt.Fprintln(w, st.Bold("hottest functions (self):"))
	for _, h := range profile.HottestFunctions(prof, top) {
		fmt.Fprintf(w, "  %6.2f%%  %s\n", h.Share, h.Name)
	}
	fmt.Fprintln(w, st.Bold("hottest stacks (leaf ← root):"))
	for _, h := range profile.HottestStacks(prof, top) {
		fmt.Fprintf(w, "  %6.2f%%  %s\n", h.Share, profile.Abbrev(h.Name, 110))
	}
	fmt.Fprintf(w, "wrote %s (%s)\n", path, format)
}
