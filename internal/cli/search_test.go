package cli

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/clierr"
	"github.com/perflab/perflab/internal/report"
	"github.com/perflab/perflab/internal/search"
	"github.com/perflab/perflab/internal/store"
	"github.com/perflab/perflab/internal/termfmt"
)

// A stored search shows again through perflab report search:ID; an
// unknown id is one usage line.
func TestReportStoredSearch(t *testing.T) {
	t.Setenv("NO_COLOR", "1")
	db := filepath.Join(t.TempDir(), "runs.db")
	st, err := store.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	res := &search.Result{Probe: "net.tcp", Metric: "bandwidth", Unit: "MB/s", Better: "higher", Objective: "maximise bandwidth",
		Gain: &search.Effect{Ratio: 3, Lo: 2.8, Hi: 3.2, Blocks: 6, Verdict: "better"}, Confirmed: true,
		Winner:     []search.Setting{{Knob: "net.ipv4.tcp_wmem", Value: "4096 16384 4194304", From: "4096 4096 4096", Share: 1}},
		Conclusion: "1 setting(s) improve bandwidth", Runs: 40, Blocks: 18, ConfirmBlocks: 6, Restored: true}
	var b bytes.Buffer
	if err := report.Search(&b, res, "json", termfmt.Style{}); err != nil {
		t.Fatal(err)
	}
	if err := st.SaveReport(context.Background(), store.Report{ID: "89abcdef01234567", Kind: "search", Created: time.Now(), Host: "h", Doc: b.Bytes()}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	code, out, errs := runCLI(t, "report", "search:89ab", "--db", db)
	if code != 0 || !strings.Contains(out, "net.ipv4.tcp_wmem") || !strings.Contains(out, "40 runs in 18 blocks") {
		t.Errorf("text: %d %s %s", code, out, errs)
	}
	if code, out, _ := runCLI(t, "report", "search:89ab", "--db", db, "--format", "json"); code != 0 || !strings.Contains(out, `"kind": "perflab-search"`) {
		t.Errorf("json: %d %s", code, out)
	}
	if code, _, errs := runCLI(t, "report", "search:ffff", "--db", db); code != clierr.Usage || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
		t.Errorf("unknown id: exit %d, %q", code, errs)
	}
}

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
