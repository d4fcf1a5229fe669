package report

import (
	"bytes"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/bisect"
)

func sampleBisect() *bisect.Result {
	nan := math.NaN()
	return &bisect.Result{Probe: "memory.pagefault", Metric: "ns_per_page.thp", Unit: "ns", Better: "lower",
		All: &bisect.Effect{Ratio: 0.12, Lo: 0.1, Hi: 0.14},
		Steps: []bisect.Step{
			{Knobs: []string{"thp", "vm.swappiness"}, Effect: &bisect.Effect{Ratio: 0.12, Lo: 0.1, Hi: 0.14}, Outcome: "improves", Runs: 6, Children: []int{1, 2}},
			{Knobs: []string{"thp"}, Effect: &bisect.Effect{Ratio: 0.12, Lo: 0.11, Hi: 0.13}, Outcome: "found", Runs: 4},
			{Knobs: []string{"vm.swappiness"}, Outcome: "cleared", Why: "the other half recovers the whole effect"},
		},
		Causes: []bisect.CauseResult{
			{Knob: "/sys/kernel/mm/transparent_hugepage/enabled", Good: "always", Bad: "never", Confirmed: true, Share: 0.97, ShareLo: 0.91, ShareHi: 1.03, Improved: 3, Blocks: 3, Outcome: "confirmed"},
			{Knob: "vm.swappiness", Good: "60", Bad: "10", Share: 0, ShareLo: nan, ShareHi: nan, Outcome: "cleared"},
		},
		Untestable: []bisect.Untestable{{Path: "kernel.params.mitigations", Good: "off", Bad: "auto", Why: "a boot parameter", Instruction: "reboot with mitigations=off"}},
		Runs:       19, NaiveRuns: 18, Restored: true}
}

// A bisection renders in every format, and its JSON reads back as the same
// result (what perflab report bisect:ID shows again).
func TestBisectRenderAndRoundTrip(t *testing.T) {
	r := sampleBisect()
	for _, f := range []string{"text", "md", "html"} {
		var b bytes.Buffer
		if err := Write(&b, r, f, Options{}); err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"hugepage", "97%", "mitigations"} {
			if !strings.Contains(b.String(), want) {
				t.Errorf("%s lacks %q:\n%s", f, want, b.String())
			}
		}
	}
	var b bytes.Buffer
	if err := Write(&b, r, "json", Options{}); err != nil {
		t.Fatal(err)
	}
	back, err := DecodeBisect(b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if !math.IsNaN(back.Causes[1].ShareLo) || back.Causes[0].Share != 0.97 || back.Steps[2].Effect != nil || back.All.Hi != 0.14 {
		t.Errorf("round trip: %+v", back)
	}
	back.Causes[1].ShareLo, back.Causes[1].ShareHi = 0, 0
	r.Causes[1].ShareLo, r.Causes[1].ShareHi = 0, 0
	if !reflect.DeepEqual(back, r) {
		t.Errorf("round trip differs:\n%+v\n%+v", back, r)
	}
	if _, err := DecodeBisect([]byte(`{"kind":"perflab-compare"}`)); err == nil {
		t.Error("another document accepted as a bisection")
	}
}
