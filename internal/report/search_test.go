package report

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/search"
)

func sampleSearch() *search.Result {
	nan := math.NaN()
	return &search.Result{Probe: "net.tcp", Metric: "bandwidth", Unit: "MB/s", Better: "higher",
		Objective: "maximise bandwidth subject to latency <= 50", MinGain: 0.02,
		Steps: []search.Step{
			{Knob: "net.ipv4.tcp_wmem", From: "4096 4096 4096", Kept: "4096 16384 4194304", Pass: 1, Runs: 6,
				Tried: []search.Tried{{Value: "4096 16384 4194304", Effect: search.Effect{Ratio: 3, Lo: 2.5, Hi: 3.5, Blocks: 3, Verdict: "better"}}}},
			{Knob: "net.ipv4.tcp_fin_timeout", From: "60", Pass: 1, Runs: 6,
				Tried: []search.Tried{{Value: "15", Effect: search.Effect{Ratio: 1.01, Lo: nan, Hi: nan, Blocks: 3, Verdict: "unclear"}}}},
		},
		Gain: &search.Effect{Ratio: 3.1, Lo: 2.8, Hi: 3.4, Blocks: 6, Verdict: "better"}, Confirmed: true,
		Winner:      []search.Setting{{Knob: "net.ipv4.tcp_wmem", Value: "4096 16384 4194304", From: "4096 4096 4096", Share: 1, ShareLo: nan, ShareHi: nan}},
		Rejected:    []search.Rejected{{Knob: "net.ipv4.tcp_tw_reuse", Value: "0", Effect: search.Effect{Ratio: 0.8, Lo: 0.75, Hi: 0.85, Verdict: "worse"}, Harmful: true, Why: "harmful: <b>"}},
		Constraints: []search.ConstraintCheck{{Constraint: "latency <= 50", Worst: 31, Baseline: 30, Held: true}},
		Conclusion:  "1 setting(s) improve bandwidth", Runs: 30, Blocks: 12, ConfirmBlocks: 6, Seconds: 300, BudgetSeconds: 1800, Restored: true}
}

// A search renders in every format with its budget, and its JSON reads
// back (what perflab report search:ID shows again), NaN as NaN.
func TestSearchRenderAndRoundTrip(t *testing.T) {
	r := sampleSearch()
	for _, f := range []string{"text", "md", "html"} {
		var b bytes.Buffer
		if err := Write(&b, r, f, Options{}); err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"wmem", "tw", "30 runs in 12 blocks", "latency", "50", "+210"} {
			if !strings.Contains(b.String(), want) {
				t.Errorf("%s lacks %q:\n%s", f, want, b.String())
			}
		}
		if f == "html" && strings.Contains(b.String(), "<b>\"") {
			t.Errorf("html does not escape")
		}
	}
	var b bytes.Buffer
	if err := Write(&b, r, "json", Options{}); err != nil {
		t.Fatal(err)
	}
	back, err := DecodeSearch(b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if !math.IsNaN(back.Steps[1].Tried[0].Effect.Lo) || back.Gain.Hi != 3.4 || !back.Confirmed || back.Winner[0].Share != 1 || !math.IsNaN(back.Winner[0].ShareLo) || back.Rejected[0].Harmful != true {
		t.Errorf("round trip: %+v", back)
	}
	if _, err := DecodeSearch([]byte(`{"kind":"perflab-bisect"}`)); err == nil {
		t.Error("a bisect document decoded as a search")
	}
}
