package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/clierr"
	"github.com/perflab/perflab/internal/run"
	"github.com/perflab/perflab/internal/snapshot"
	"github.com/perflab/perflab/internal/store"
)

func TestCompareGoBenchFiles(t *testing.T) {
	t.Setenv("NO_COLOR", "1")
	old, new := filepath.Join("..", "compare", "testdata", "old.txt"), filepath.Join("..", "compare", "testdata", "new.txt")
	code, out, errs := runCLI(t, "compare", old, new)
	if code != clierr.OK || !strings.Contains(out, "better *") || errs != "" {
		t.Fatalf("code %d\n%s\n%s", code, out, errs)
	}
	// new → old is a regression: exit 1 only with --fail-on-regression,
	// after the report was printed.
	if code, _, _ := runCLI(t, "compare", new, old); code != clierr.OK {
		t.Errorf("without --fail-on-regression: exit %d", code)
	}
	code, out, errs = runCLI(t, "compare", new, old, "--fail-on-regression")
	if code != clierr.Check || !strings.Contains(out, "worse *") || !strings.Contains(errs, "regression") {
		t.Errorf("exit %d, stderr %q", code, errs)
	}
	dir := t.TempDir()
	html := filepath.Join(dir, "r.html")
	if code, _, errs := runCLI(t, "compare", old, new, "--format", "html", "-o", html); code != 0 {
		t.Fatalf("html: %d %s", code, errs)
	}
	if data, err := os.ReadFile(html); err != nil || !strings.Contains(string(data), "Content-Security-Policy") {
		t.Errorf("html report: %v", err)
	}
	if code, out, _ := runCLI(t, "report", old, "--format", "json"); code != 0 || !strings.Contains(out, `"kind": "perflab-compare"`) {
		t.Errorf("report json: %d", code)
	}
}

func TestCompareBadInput(t *testing.T) {
	old := filepath.Join("..", "compare", "testdata", "old.txt")
	dir := t.TempDir()
	junk := filepath.Join(dir, "junk.bin")
	os.WriteFile(junk, []byte("hello\n"), 0o644)
	badJSON := filepath.Join(dir, "snap.json")
	os.WriteFile(badJSON, []byte(`{"schema": 1, "id": "x"}`), 0o644)
	t.Setenv("XDG_DATA_HOME", dir)
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"compare", old, junk}, "neither a perflab run export nor Go benchmark output"},
		{[]string{"compare", old, badJSON}, "not a perflab run export"},
		{[]string{"compare", old, filepath.Join(dir, "missing.txt")}, "no such file"},
		{[]string{"compare", old, "no-such-label"}, "neither a file, a label nor a run id"},
		{[]string{"compare", old}, "requires at least 2"},
		{[]string{"compare", old, old, "--format", "pdf"}, "unknown --format"},
		{[]string{"compare", old, old, "--alpha", "2"}, "--alpha"},
	}
	for _, c := range cases {
		code, out, errs := runCLI(t, c.args...)
		if code != clierr.Usage || !strings.Contains(errs, c.want) || out != "" {
			t.Errorf("%v: exit %d, stderr %q, stdout %q", c.args, code, errs, out)
		}
		if strings.Count(strings.TrimSpace(errs), "\n") != 0 {
			t.Errorf("%v: more than one line: %q", c.args, errs)
		}
	}
}

func TestCompareFromStore(t *testing.T) {
	t.Setenv("NO_COLOR", "1")
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "runs.db")
	st, err := store.Open(dbPath)
	if err != nil {
		t.Fatal(err)
	}
	mk := func(id, label, gov string, centre float64) {
		snap := &snapshot.Snapshot{Schema: 1, ID: "snap-" + id, CPU: snapshot.CPU{Governors: map[string][]int{gov: {0, 1}}},
			Sysctl: map[string]string{}, Unavailable: map[string]string{}}
		r := &run.Run{Schema: 1, ID: id, Label: label, Probe: "cpu", Host: "h", SnapshotID: snap.ID, Params: map[string]string{},
			Complete: true, Stop: run.StopFixed, Started: time.Now(), Ended: time.Now(),
			Metrics: []run.Metric{{Name: "events_per_sec.t1", Unit: "events/s", Better: run.Higher}}}
		for i := 0; i < 8; i++ {
			r.Samples = append(r.Samples, run.Sample{Metric: "events_per_sec.t1", Value: centre + float64(i), Iteration: i})
		}
		if err := st.SaveRun(context.Background(), r, snap); err != nil {
			t.Fatal(err)
		}
	}
	// Three runs before (the run is the unit: they measure the drift),
	// one after, named by its id prefix.
	mk("aaaa1111", "before", "performance", 1000)
	mk("aaaa1112", "before", "performance", 1003)
	mk("aaaa1113", "before", "performance", 998)
	mk("bbbb2222", "after", "powersave", 800)
	st.Close()
	code, out, errs := runCLI(t, "compare", "before", "bbbb", "--db", dbPath)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	causes, table := strings.Index(out, "cpufreq governor"), strings.Index(out, "events_per_sec.t1  ")
	if causes < 0 || table < 0 || causes > table || !strings.Contains(out, "worse *") {
		t.Errorf("report:\n%s", out)
	}
	if code, _, errs := runCLI(t, "compare", "before", "zzzz", "--db", dbPath); code != clierr.Usage || !strings.Contains(errs, `"zzzz"`) {
		t.Errorf("unknown id: %d %s", code, errs)
	}
}
