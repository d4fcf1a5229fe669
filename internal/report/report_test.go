package report

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/termfmt"
)

func TestTextLeadsWithCauses(t *testing.T) {
	var b bytes.Buffer
	if err := Text(&b, demo(t, 2), termfmt.Style{}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if strings.Contains(out, "\x1b[") {
		t.Error("colour written with style off")
	}
	causes := strings.Index(out, "Likely causes")
	table := strings.Index(out, "events_per_sec.t1")
	gov := strings.Index(out, "cpufreq governor")
	if causes < 0 || gov < 0 || table < 0 || !(causes < gov && gov < table) {
		t.Fatalf("causes must lead, governor first:\n%s", out)
	}
	// The lines themselves are in testdata/golden/compare/demo.txt.golden.
	// Columns line up: every table line has its Δ column at the same
	// rune offset as the header.
	lines := strings.Split(out, "\n")
	var header string
	for _, l := range lines {
		if strings.HasPrefix(l, "suite") {
			header = l
		}
	}
	col := strings.Index(header, "Δ")
	for _, l := range lines {
		if strings.HasPrefix(l, "basic ") {
			r := []rune(l)
			hr := []rune(header)
			hcol := len([]rune(header[:col]))
			if len(r) <= hcol || len(hr) <= hcol || (r[hcol-1] != ' ' || r[hcol-2] != ' ') {
				t.Errorf("misaligned row %q (header %q)", l, header)
			}
		}
	}
}

func TestTextColour(t *testing.T) {
	var b bytes.Buffer
	if err := Text(&b, demo(t, 2), termfmt.Style{On: true}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "\x1b[31m") {
		t.Error("worse results must be red when colour is on")
	}
}

func TestTextSingleAndThreeSides(t *testing.T) {
	var b bytes.Buffer
	if err := Text(&b, demo(t, 1), termfmt.Style{}); err != nil {
		t.Fatal(err)
	}
	if out := b.String(); !strings.Contains(out, "perflab report: vm") || strings.Contains(out, "Likely causes") || !strings.Contains(out, "min – max") {
		t.Errorf("single run report:\n%s", out)
	}
	b.Reset()
	if err := Text(&b, demo(t, 3), termfmt.Style{}); err != nil {
		t.Fatal(err)
	}
	if out := b.String(); !strings.Contains(out, "Likely causes (third vs vm)") || strings.Count(out, "Summary (") != 2 {
		t.Errorf("three sides:\n%s", out)
	}
}

func TestMarkdown(t *testing.T) {
	var b bytes.Buffer
	if err := Markdown(&b, demo(t, 2)); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if !strings.HasPrefix(out, "# perflab compare") || strings.Index(out, "## Likely causes") > strings.Index(out, "## Metrics") {
		t.Errorf("structure:\n%s", out)
	}
	// The metric with a pipe in its name must not break the table.
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "pipe") && strings.HasPrefix(l, "| basic") {
			if n := strings.Count(strings.ReplaceAll(l, `\|`, ""), "|"); n != 8 {
				t.Errorf("row has %d cell separators, want 8: %s", n, l)
			}
		}
	}
	if !strings.Contains(out, "**worse**") {
		t.Error("significant verdicts are bold")
	}
}

func TestJSONSchema(t *testing.T) {
	c := demo(t, 2)
	var b bytes.Buffer
	if err := JSON(&b, c); err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc["kind"] != JSONKind || doc["schema"].(float64) != JSONSchema {
		t.Errorf("header %v %v", doc["kind"], doc["schema"])
	}
	metrics := doc["metrics"].([]any)
	pairs := doc["pairs"].([]any)
	if len(metrics) != len(c.Metrics) || len(pairs) != 1 {
		t.Fatalf("metrics %d pairs %d", len(metrics), len(pairs))
	}
	p := pairs[0].(map[string]any)
	for _, k := range []string{"deltas", "suites", "likely_causes", "config_diff", "monitor_diff", "counts"} {
		if _, ok := p[k]; !ok {
			t.Errorf("pair lacks %s", k)
		}
	}
	// The 3-sample metric has no CI: null, not a number and not an error.
	for i, m := range metrics {
		mm := m.(map[string]any)
		if strings.HasPrefix(mm["metric"].(string), "pipe") {
			s := mm["sides"].([]any)[0].(map[string]any)
			if s["ci_lo"] != nil || s["n"].(float64) != 3 {
				t.Errorf("metric %d side: %v", i, s)
			}
		}
	}
	for _, d := range p["deltas"].([]any) {
		dm := d.(map[string]any)
		row := c.Metrics[int(dm["metric"].(float64))]
		if row.Metric == "events_per_sec.t1" {
			if dm["verdict"] != "worse" || dm["significant"] != true || math.Abs(dm["delta_pct"].(float64)+20) > 2 {
				t.Errorf("events delta %v", dm)
			}
		}
	}
}
