package cli

import (
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/clierr"
)

// Bad input to tune search is one line and exit 2, before anything is
// changed.
func TestTuneSearchBadInput(t *testing.T) {
	for _, args := range [][]string{
		{"tune", "search", "web"},
		{"tune", "search", "web", "--measure", "net.tcp"},
		{"tune", "search", "nosuchworkload", "--measure", "net.tcp", "--yes"},
		{"tune", "search", "web", "--measure", "net.tcp", "--objective", "max:bandwidth,latency<", "--yes"},
		{"tune", "search", "web", "--measure", "net.tcp", "--knob", "a b=1", "--yes"},
		{"tune", "search", "web", "--measure", "net.tcp", "--blocks", "1", "--yes"},
		{"tune", "search", "web", "--measure", "net.tcp", "--min-gain", "0", "--yes"},
		{"tune", "search", "web", "--measure", "nosuchprobe", "--yes"},
	} {
		code, _, errs := runCLI(t, args...)
		if code != clierr.Usage || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
			t.Errorf("%v: exit %d, %q", args, code, errs)
		}
	}
	code, out, errs := runCLI(t, "tune", "search", "web", "--measure", "net.tcp", "--dry-run")
	if code != 0 || !strings.Contains(out, "net.core.somaxconn") || !strings.Contains(out, "one screening pass is") {
		t.Errorf("dry run: %d %s %s", code, out, errs)
	}
}
