package report

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/bench"
	"github.com/perflab/perflab/internal/effect"
	"github.com/perflab/perflab/internal/run"
	"github.com/perflab/perflab/internal/termfmt"
)

func TestInterleavedFormats(t *testing.T) {
	res := &bench.Interleaved{Blocks: 8, Stopped: "precision", Effects: []bench.Effect{
		{Probe: "cpu", Metric: "events", Unit: "events/s", Better: run.Higher, Base: "alone", State: "neighbour", Blocks: 8, Ratio: 0.95, Lo: 0.94, Hi: 0.96, P: 0.001, Verdict: effect.Worse},
		{Probe: "cpu", Metric: "same", Unit: "events/s", Better: run.Higher, Base: "alone", State: "neighbour", Blocks: 8, Ratio: 1.001, Lo: 0.995, Hi: 1.007, P: 0.6, Verdict: effect.Equivalent},
		{Probe: "cpu", Metric: "one", Unit: "ns", Better: run.Lower, Base: "alone", State: "neighbour", Blocks: 1, Ratio: 1.2, Lo: math.NaN(), Hi: math.NaN(), P: math.NaN(), Verdict: effect.Inconclusive},
	}}
	for _, style := range []termfmt.Style{{}, {On: true}} {
		var b bytes.Buffer
		if err := Interleaved(&b, res, "text", style); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		for _, want := range []string{"8 blocks", "stopped by precision", "neighbour vs alone", "−5.0%", "[−6.0%, −4.0%]", "worse", "equivalent", "inconclusive"} {
			if !strings.Contains(out, want) {
				t.Errorf("text lacks %q:\n%s", want, out)
			}
		}
	}
	var b bytes.Buffer
	if err := Interleaved(&b, res, "json", termfmt.Style{}); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Kind    string
		Effects []struct {
			Verdict  string
			DeltaPct *float64 `json:"delta_pct"`
			RatioLo  *float64 `json:"ratio_lo"`
		}
	}
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil || doc.Kind != InterleavedKind || len(doc.Effects) != 3 {
		t.Fatalf("json: %v %s", err, b.String())
	}
	if doc.Effects[0].Verdict != "worse" || doc.Effects[2].RatioLo != nil || doc.Effects[2].Verdict != "inconclusive" {
		t.Errorf("json effects %s", b.String())
	}
	b.Reset()
	if err := Interleaved(&b, res, "md", termfmt.Style{}); err != nil || !strings.Contains(b.String(), "| cpu | events | neighbour vs alone | −5.0% [−6.0%, −4.0%] | worse |") {
		t.Errorf("md: %v\n%s", err, b.String())
	}
}
