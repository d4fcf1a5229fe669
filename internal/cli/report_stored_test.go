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
	"github.com/perflab/perflab/internal/search"
	"github.com/perflab/perflab/internal/store"
)

// A stored bisection or search shows again through perflab report KIND:ID
// (a unique id prefix is enough), as text and json; an unknown id is one
// usage line.
func TestReportStored(t *testing.T) {
	t.Setenv("NO_COLOR", "1")
	for _, c := range []struct {
		kind, id string
		result   any
		text     []string
	}{
		{"bisect", "0123abcd0123abcd", &bisect.Result{Probe: "net.tcp", Metric: "bandwidth", Unit: "MB/s", Better: "higher",
			All:    &bisect.Effect{Ratio: 40, Lo: 38, Hi: 42},
			Causes: []bisect.CauseResult{{Knob: "net.ipv4.tcp_rmem", Good: "4096 131072 6291456", Bad: "4096 4096 4096", Confirmed: true, Share: 1, ShareLo: 0.98, ShareHi: 1.02, Improved: 3, Blocks: 3, Outcome: "confirmed", Joint: []string{"net.ipv4.tcp_wmem"}}},
			Runs:   17, NaiveRuns: 24, Restored: true},
			[]string{"CONFIRMED net.ipv4.tcp_rmem", "only together with net.ipv4.tcp_wmem"}},
		{"search", "89abcdef01234567", &search.Result{Probe: "net.tcp", Metric: "bandwidth", Unit: "MB/s", Better: "higher", Objective: "maximise bandwidth",
			Gain: &search.Effect{Ratio: 3, Lo: 2.8, Hi: 3.2, Blocks: 6, Verdict: "better"}, Confirmed: true,
			Winner:     []search.Setting{{Knob: "net.ipv4.tcp_wmem", Value: "4096 16384 4194304", From: "4096 4096 4096", Share: 1}},
			Conclusion: "1 setting(s) improve bandwidth", Runs: 40, Blocks: 18, ConfirmBlocks: 6, Restored: true},
			[]string{"net.ipv4.tcp_wmem", "40 runs in 18 blocks"}},
	} {
		t.Run(c.kind, func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "runs.db")
			st, err := store.Open(db)
			if err != nil {
				t.Fatal(err)
			}
			var b bytes.Buffer
			if err := report.Write(&b, c.result, "json", report.Options{}); err != nil {
				t.Fatal(err)
			}
			if err := st.SaveReport(context.Background(), store.Report{ID: c.id, Kind: c.kind, Created: time.Now(), Host: "h", Doc: b.Bytes()}); err != nil {
				t.Fatal(err)
			}
			st.Close()
			code, out, errs := runCLI(t, "report", c.kind+":"+c.id[:4], "--db", db)
			for _, want := range c.text {
				if code != 0 || !strings.Contains(out, want) {
					t.Errorf("text: exit %d, want %q in\n%s%s", code, want, out, errs)
				}
			}
			if code, out, _ := runCLI(t, "report", c.kind+":"+c.id, "--db", db, "--format", "json"); code != 0 || !strings.Contains(out, `"kind": "perflab-`+c.kind+`"`) {
				t.Errorf("json: %d %s", code, out)
			}
			if code, _, errs := runCLI(t, "report", c.kind+":ffff", "--db", db); code != clierr.Usage || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
				t.Errorf("unknown id: exit %d, %q", code, errs)
			}
		})
	}
}
