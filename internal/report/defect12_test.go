package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/termfmt"
)

// Each delta of the JSON names its metric and probe, so jq users need no
// join with metrics by index (defect 12).
func TestCompareJSONDeltasNameTheirMetric(t *testing.T) {
	c := demo(t, 2)
	var b bytes.Buffer
	if err := JSON(&b, c); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Metrics []struct{ Probe, Metric, Unit string }
		Pairs   []struct {
			Deltas []struct {
				Metric            int
				Probe, Name, Unit string
			}
		}
	}
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Pairs) != 1 || len(doc.Pairs[0].Deltas) == 0 {
		t.Fatalf("no deltas:\n%s", b.String())
	}
	for _, d := range doc.Pairs[0].Deltas {
		m := doc.Metrics[d.Metric]
		if d.Name == "" || d.Name != m.Metric || d.Probe != m.Probe || d.Unit != m.Unit {
			t.Errorf("delta %+v does not name its metric %+v", d, m)
		}
	}
}

// The geomean line says the change one way: an unsigned oriented gain
// with its word, not "+2.8% better … (ratio of medians ×0.9906)", which
// read as a contradiction (defect 12).
func TestGeomeanSaidOneWay(t *testing.T) {
	c := demo(t, 2)
	var text, md bytes.Buffer
	if err := Text(&text, c, termfmt.Style{}); err != nil {
		t.Fatal(err)
	}
	if err := Markdown(&md, c); err != nil {
		t.Fatal(err)
	}
	for name, out := range map[string]string{"text": text.String(), "md": md.String()} {
		lines := 0
		for _, l := range strings.Split(out, "\n") {
			if !strings.Contains(l, "geomean") {
				continue
			}
			lines++
			if strings.Contains(l, "ratio of medians") || strings.Contains(l, "×") {
				t.Errorf("%s: the geomean line still gives a raw ratio: %q", name, l)
			}
			word := strings.Contains(l, "% better") || strings.Contains(l, "% worse") || strings.Contains(l, "unchanged")
			signed := strings.Contains(l, "+") || strings.Contains(l, "−")
			if !word || signed {
				t.Errorf("%s: the geomean line is not one unsigned gain with its word: %q", name, l)
			}
		}
		if lines == 0 {
			t.Errorf("%s: no geomean line:\n%s", name, out)
		}
	}
	if got := gainWords(-34.71); got != "34.7% worse" {
		t.Errorf("gainWords(−34.71) = %q", got)
	}
	if got := gainWords(0.04); got != "0.04% better" {
		t.Errorf("gainWords(0.04) = %q", got)
	}
}
