package report

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/audit"
	"github.com/perflab/perflab/internal/fixture"
	"github.com/perflab/perflab/internal/hostfs"
	"github.com/perflab/perflab/internal/snapshot"
	"github.com/perflab/perflab/internal/termfmt"
)

// checkDoc is a check of the kvm fixture host with THP set to always (a
// high-severity finding for the database workload, with a fix) and the
// seed-004 comparison of fixture_test.go as its measurements.
func checkDoc(t *testing.T, sides int) *CheckDoc {
	t.Helper()
	fs := fixture.Tree(t, "kvm", map[string]string{
		"/sys/kernel/mm/transparent_hugepage/enabled": "[always] madvise never\n",
	})
	return checkDocFS(t, fs, sides)
}

func checkDocFS(t *testing.T, fs hostfs.FS, sides int) *CheckDoc {
	t.Helper()
	snap, err := snapshot.Collect(fs, snapshot.Options{Now: time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	w, err := audit.ResolveWorkload("database")
	if err != nil {
		t.Fatal(err)
	}
	rep := audit.NewReport(snap, w, audit.Run(snap, w), "test", "fixture")
	d := &CheckDoc{Perflab: "test", Host: "db-7 <&>", TakenAt: snap.TakenAt, Label: "check", Suite: "basic", Audit: rep,
		Notes: []string{"net.udp failed: <script>alert(1)</script>"}}
	if sides > 0 {
		d.Comparison = demo(t, sides)
		if sides == 2 {
			d.Previous = &CheckPrevious{At: time.Date(2025, 2, 1, 12, 0, 0, 0, time.UTC), Runs: 2}
		}
	}
	return d
}

func findingRules(d *CheckDoc) []string {
	var out []string
	for _, f := range failing(d.Audit) {
		out = append(out, f.Rule)
	}
	return out
}

func TestCheckHTMLRendersInChromium(t *testing.T) {
	d := checkDoc(t, 2)
	rules := findingRules(d)
	if len(rules) == 0 || !strings.Contains(strings.Join(rules, " "), "THP") {
		t.Fatalf("the fixture must fail a THP rule for the database workload, failing: %v", rules)
	}
	var page bytes.Buffer
	if err := CheckHTML(&page, d); err != nil {
		t.Fatal(err)
	}
	src := page.String()
	for _, bad := range []string{"<script src", "<link", "@import", "url(http", "src=\"http", "<script>alert"} {
		if strings.Contains(src, bad) {
			t.Errorf("page holds %q (external resource or unescaped text)", bad)
		}
	}
	dom := renderInChromium(t, page.Bytes())
	if errs := attr(t, dom, "data-errors"); errs != "" {
		t.Fatalf("page errors: %s", errs)
	}
	if attr(t, dom, "data-rendered") != "1" {
		t.Fatal("the measurements script did not finish")
	}
	// The findings table: one row per failing finding, each with its fix.
	table := between(t, dom, `<table id="findings">`, "</table>")
	if got := strings.Count(table, "<tr class=\"sev-"); got != len(rules) {
		t.Errorf("%d finding rows, want %d", got, len(rules))
	}
	for _, r := range rules {
		if !strings.Contains(table, `data-rule="`+r+`"`) {
			t.Errorf("findings table lacks %s", r)
		}
	}
	thp := between(t, table, `data-rule="MEM-THP`, "</tr>")
	if !strings.Contains(thp, `<pre class="fix">`) || !strings.Contains(thp, "transparent_hugepage") {
		t.Errorf("THP finding lacks its fix: %s", thp)
	}
	// Next to the measurements: the THP finding names the memory probe
	// of this check whose numbers it moves.
	if !strings.Contains(thp, `<span class="related">memory.latency</span>`) {
		t.Errorf("THP finding does not point at memory.latency: %s", thp)
	}
	// The measurements part is the compare page: charts drawn by script,
	// the causes of the change since the previous check, and the summary
	// tile says how many metrics got worse.
	n, _ := strconv.Atoi(attr(t, dom, "data-charts"))
	if want := len(d.Comparison.Metrics) + 1; n != want {
		t.Errorf("%d charts, want %d", n, want)
	}
	if got := strings.Count(dom, `<svg class="chart metric"`); got != len(d.Comparison.Metrics) {
		t.Errorf("%d metric charts drawn, want %d", got, len(d.Comparison.Metrics))
	}
	worse := d.Comparison.Pairs[0].Counts["worse"]
	if !regexp.MustCompile(`id="vs-previous"><b>` + strconv.Itoa(worse) + ` worse`).MatchString(dom) {
		t.Errorf("summary tile lacks %d worse: %s", worse, between(t, dom, `id="check-summary"`, "</div>\n</div>"))
	}
	for _, want := range []string{`id="causes-0"`, "cpufreq governor", "db-7 &lt;&amp;&gt;", "&lt;script&gt;alert(1)"} {
		if !strings.Contains(dom, want) {
			t.Errorf("DOM lacks %q", want)
		}
	}
}

// A check without measurements (--no-bench) is plain HTML: no script but
// the page shell's error trap.
func TestCheckHTMLAuditOnly(t *testing.T) {
	d := checkDoc(t, 0)
	var page bytes.Buffer
	if err := CheckHTML(&page, d); err != nil {
		t.Fatal(err)
	}
	src := page.String()
	if strings.Count(src, "<script") != 1 || !strings.Contains(src, ErrorTrap) {
		t.Error("an audit-only page needs no script but the shell's error trap")
	}
	for _, want := range []string{`<table id="findings">`, "Nothing was measured", `<details id="passing">`} {
		if !strings.Contains(src, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if strings.Contains(src, `<span class="related">`) {
		t.Error("nothing was measured, so no finding can point at a measurement")
	}
}

func TestCheckTextSummary(t *testing.T) {
	d := checkDoc(t, 2)
	var b bytes.Buffer
	if err := CheckText(&b, d, termfmt.Style{}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	fails := failing(d.Audit)
	if !strings.Contains(out, strconv.Itoa(len(fails))+" failing: ") {
		t.Errorf("no failing count:\n%s", out)
	}
	// The top findings carry their fix; the rest are counted, not listed.
	shown := 0
	for _, f := range fails {
		if strings.Contains(out, " "+f.Rule+"  ") {
			shown++
		}
	}
	if want := min(len(fails), topFindings); shown != want {
		t.Errorf("%d findings detailed, want %d:\n%s", shown, want, out)
	}
	if len(fails) > topFindings && !strings.Contains(out, strconv.Itoa(len(fails)-topFindings)+" more") {
		t.Errorf("hidden findings not counted:\n%s", out)
	}
	if !strings.Contains(out, "fix: ") {
		t.Errorf("no fix shown:\n%s", out)
	}
	// Measurements against the previous check, with the cause of the
	// change and the verdict counts.
	for _, want := range []string{"against the previous check of", "events_per_sec.t1", "Likely causes", "cpufreq governor", "worse,"} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	// The table is grouped by probe: the suite is in the heading, and
	// metric names alone are ambiguous across probes.
	if !regexp.MustCompile(`(?m)^probe +metric `).MatchString(out) || !regexp.MustCompile(`(?m)^memory\.latency +latency\.256MiB `).MatchString(out) {
		t.Errorf("table not grouped by probe:\n%s", out)
	}
	// A first check says the next one will compare with it.
	d1 := checkDoc(t, 1)
	b.Reset()
	if err := CheckText(&b, d1, termfmt.Style{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "first check") || strings.Contains(b.String(), "Likely causes") {
		t.Errorf("first-check summary wrong:\n%s", b.String())
	}
}

func TestCheckJSONAndMarkdown(t *testing.T) {
	d := checkDoc(t, 2)
	var b bytes.Buffer
	if err := CheckJSON(&b, d); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Kind   string `json:"kind"`
		Schema int    `json:"schema"`
		Audit  struct {
			Summary struct{ Fail int } `json:"summary"`
		} `json:"audit"`
		Bench *struct {
			Sides []struct{ Name string } `json:"sides"`
			Pairs []struct {
				Causes []struct{ Knob string } `json:"likely_causes"`
			} `json:"pairs"`
		} `json:"bench"`
		Previous *CheckPrevious `json:"previous"`
		Notes    []string       `json:"notes"`
	}
	if err := json.Unmarshal(b.Bytes(), &got); err != nil {
		t.Fatalf("%v\n%s", err, b.String())
	}
	if got.Kind != CheckKind || got.Schema != CheckSchema || got.Audit.Summary.Fail != d.Audit.Summary.Fail ||
		got.Bench == nil || len(got.Bench.Sides) != 2 || got.Previous == nil || got.Previous.Runs != 2 || len(got.Notes) != 1 {
		t.Fatalf("unexpected document: %+v", got)
	}
	if len(got.Bench.Pairs) != 1 || len(got.Bench.Pairs[0].Causes) == 0 || got.Bench.Pairs[0].Causes[0].Knob != "cpu-governor" {
		t.Errorf("causes: %+v", got.Bench.Pairs)
	}
	d0 := checkDoc(t, 0)
	b.Reset()
	if err := CheckJSON(&b, d0); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `"bench": null`) || !strings.Contains(b.String(), `"previous": null`) {
		t.Errorf("audit-only JSON must say bench and previous are null:\n%.600s", b.String())
	}

	b.Reset()
	if err := CheckMarkdown(&b, d); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	for _, want := range []string{"# perflab check: db-7", "Compared with the previous check", "## perflab audit", "| Status | Severity |", "# perflab compare", "## Notes"} {
		if !strings.Contains(md, want) {
			t.Errorf("Markdown lacks %q", want)
		}
	}
}

func between(t *testing.T, s, start, end string) string {
	t.Helper()
	i := strings.Index(s, start)
	if i < 0 {
		t.Fatalf("no %q in:\n%.1500s", start, s)
	}
	s = s[i:]
	j := strings.Index(s, end)
	if j < 0 {
		return s
	}
	return s[:j]
}
