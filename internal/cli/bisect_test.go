package cli

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/bisect"
	"github.com/perflab/perflab/internal/clierr"
	"github.com/perflab/perflab/internal/report"
	"github.com/perflab/perflab/internal/store"
	"github.com/perflab/perflab/internal/termfmt"
)

// A stored bisection shows again through perflab report bisect:ID, in every
// format; an unknown id is one usage line.
func TestReportStoredBisect(t *testing.T) {
	t.Setenv("NO_COLOR", "1")
	db := filepath.Join(t.TempDir(), "runs.db")
	st, err := store.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	res := &bisect.Result{Probe: "net.tcp", Metric: "bandwidth", Unit: "MB/s", Better: "higher",
		All:    &bisect.Effect{Ratio: 40, Lo: 38, Hi: 42},
		Causes: []bisect.CauseResult{{Knob: "net.ipv4.tcp_rmem", Good: "4096 131072 6291456", Bad: "4096 4096 4096", Confirmed: true, Share: 1, ShareLo: 0.98, ShareHi: 1.02, Improved: 3, Blocks: 3, Outcome: "confirmed", Joint: []string{"net.ipv4.tcp_wmem"}}},
		Runs:   17, NaiveRuns: 24, Restored: true}
	var b bytes.Buffer
	if err := report.Bisect(&b, res, "json", termfmt.Style{}); err != nil {
		t.Fatal(err)
	}
	if err := st.SaveReport(context.Background(), store.Report{ID: "0123abcd0123abcd", Kind: "bisect", Created: time.Now(), Host: "h", Doc: b.Bytes()}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	code, out, errs := runCLI(t, "report", "bisect:0123", "--db", db)
	if code != 0 || !strings.Contains(out, "CONFIRMED net.ipv4.tcp_rmem") || !strings.Contains(out, "only together with net.ipv4.tcp_wmem") {
		t.Errorf("text: %d %s %s", code, out, errs)
	}
	if code, out, _ := runCLI(t, "report", "bisect:0123abcd0123abcd", "--db", db, "--format", "json"); code != 0 || !strings.Contains(out, `"kind": "perflab-bisect"`) {
		t.Errorf("json: %d %s", code, out)
	}
	if code, _, errs := runCLI(t, "report", "bisect:ffff", "--db", db); code != clierr.Usage || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
		t.Errorf("unknown id: exit %d, %q", code, errs)
	}
}
