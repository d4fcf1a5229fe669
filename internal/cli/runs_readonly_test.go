package cli

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/clierr"
	"github.com/perflab/perflab/internal/fixture"
	"github.com/perflab/perflab/internal/run"
	"github.com/perflab/perflab/internal/snapshot"
	"github.com/perflab/perflab/internal/store"
)

// readOnlyDB stores two comparable runs (labels before and after) and then
// shares the database the way an operator would: file 0444 in a 0555
// directory. Root is not stopped by those bits, so what the tests prove is
// that reading commands open the database read-only and write nothing.
func readOnlyDB(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "shared")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "perflab.db")
	st, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range []struct {
		id, label string
		centre    float64
	}{{"aaaa1111", "before", 1000}, {"bbbb2222", "after", 800}, {"cccc3333", "before", 1004}, {"dddd4444", "after", 797}} {
		snap := &snapshot.Snapshot{Schema: snapshot.Schema, ID: "snap-" + c.id, Sysctl: map[string]string{}, Unavailable: map[string]string{}}
		t0 := time.Date(2025, 6, 1, 10, i, 0, 0, time.UTC)
		r := &run.Run{Schema: run.Schema, ID: c.id, Label: c.label, Probe: "cpu", Host: "h", SnapshotID: snap.ID, Params: map[string]string{},
			Complete: true, Stop: run.StopFixed, Started: t0, Ended: t0.Add(time.Second),
			Metrics: []run.Metric{{Name: "events_per_sec.t1", Unit: "events/s", Better: run.Higher}}}
		for k := 0; k < 8; k++ {
			r.Samples = append(r.Samples, run.Sample{Metric: "events_per_sec.t1", Value: c.centre + float64(k), Iteration: k})
		}
		if err := st.SaveRun(context.Background(), r, snap); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o444); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o555); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(dir, 0o755) })
	return path
}

// dbState is the directory listing and the database bytes, which reading
// commands must leave exactly as they were.
func dbState(t *testing.T, path string) string {
	t.Helper()
	ents, err := os.ReadDir(filepath.Dir(path))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	b, _ := os.ReadFile(path)
	return strings.Join(names, ",") + "\n" + string(b)
}

func TestRunsOnReadOnlyDatabase(t *testing.T) {
	t.Setenv("NO_COLOR", "1")
	db := readOnlyDB(t)
	before := dbState(t, db)
	out := t.TempDir()
	exportFile := filepath.Join(out, "a.json")
	if err := os.WriteFile(exportFile, []byte(`{"kind":"perflab-runs","schema":1,"runs":[{"id":"cccc3333","probe":"cpu","metrics":[{"name":"x","better":"higher"}],"samples":[{"metric":"x","value":1}]}],"snapshots":{}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		args []string
		code int
		want []string // pieces of stdout (exit 0) or of the one stderr line
	}{
		{"list", []string{"runs", "list"}, clierr.OK, []string{"aaaa1111", "bbbb2222"}},
		{"list labels", []string{"runs", "list", "--labels"}, clierr.OK, []string{"before", "after"}},
		{"list json", []string{"runs", "list", "--format", "json", "--label", "after"}, clierr.OK, []string{`"id": "bbbb2222"`, `"samples": 8`}},
		{"show", []string{"runs", "show", "aaaa"}, clierr.OK, []string{"aaaa1111", "events_per_sec.t1"}},
		{"show json", []string{"runs", "show", "bbbb", "--format", "json"}, clierr.OK, []string{`"id": "bbbb2222"`, `"value": 807`}},
		{"export", []string{"runs", "export", "--label", "before", "-o", filepath.Join(out, "before.json")}, clierr.OK, nil},
		{"compare", []string{"compare", "before", "after"}, clierr.OK, []string{"worse *"}},
		{"report", []string{"report", "after"}, clierr.OK, []string{"events_per_sec.t1"}},
		// Commands that write fail up front naming the problem and the fix.
		{"rm", []string{"runs", "rm", "aaaa"}, clierr.Runtime, []string{"database is read-only", db, "mode 0444", "make the database and its directory writable", "--db", "runs list/show/export"}},
		{"import", []string{"runs", "import", exportFile}, clierr.Runtime, []string{"database is read-only", "mode 0444"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, append(c.args, "--db", db)...)
			if code != c.code {
				t.Fatalf("exit %d, want %d; stderr %q", code, c.code, stderr)
			}
			got := stdout
			if c.code != clierr.OK {
				got = stderr
				if stdout != "" || !strings.HasPrefix(stderr, "perflab: ") || strings.Count(stderr, "\n") != 1 {
					t.Errorf("not one 'perflab: …' line on stderr (stdout %q): %q", stdout, stderr)
				}
			}
			for _, w := range c.want {
				if !strings.Contains(got, w) {
					t.Errorf("output does not say %q:\n%s", w, got)
				}
			}
			if after := dbState(t, db); after != before {
				t.Errorf("perflab %s changed the database or its directory (now %s)", strings.Join(c.args, " "), strings.SplitN(after, "\n", 2)[0])
			}
		})
	}
	// rm deleted nothing.
	code, stdout, _ := runCLI(t, "runs", "list", "--db", db, "--format", "json")
	var runs []struct{ ID string }
	if code != 0 || json.Unmarshal([]byte(stdout), &runs) != nil || len(runs) != 4 {
		t.Errorf("runs after refused writes: %s", stdout)
	}
}

// Reading commands never create the database; with nothing stored, list
// answers with an empty list and the others say where they looked.
func TestRunsWithoutDatabase(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("XDG_DATA_HOME", dir)
	db := filepath.Join(dir, "none.db")
	for _, c := range []struct {
		args   []string
		code   int
		stdout string
		want   string // in stderr
	}{
		{[]string{"runs", "list", "--db", db}, clierr.OK, "", "no runs are stored yet: there is no database at " + db},
		{[]string{"runs", "list", "--db", db, "--format", "json"}, clierr.OK, "[]\n", ""},
		{[]string{"runs", "list", "--labels", "--format", "json"}, clierr.OK, "[]\n", ""},
		{[]string{"runs", "show", "abc", "--db", db}, clierr.Usage, "", "there is no database at " + db + " (store runs with 'perflab bench' first, or check --db)"},
		{[]string{"runs", "export", "--db", db}, clierr.Usage, "", "no runs are stored yet"},
		{[]string{"compare", "before", "after", "--db", db}, clierr.Usage, "", `"before" is neither a file, a label nor a run id, and no runs are stored yet: there is no database at ` + db},
		{[]string{"report", "before"}, clierr.Usage, "", filepath.Join(dir, "perflab", "perflab.db")},
	} {
		code, stdout, stderr := runCLI(t, c.args...)
		if code != c.code || stdout != c.stdout || !strings.Contains(stderr, c.want) {
			t.Errorf("perflab %s: exit %d, stdout %q, stderr %q; want exit %d, stdout %q, stderr with %q",
				strings.Join(c.args, " "), code, stdout, stderr, c.code, c.stdout, c.want)
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("reading commands created %v", ents)
	}
}

// The exporter reads bench series from a database it may not write and
// leaves it untouched.
func TestExporterReadsReadOnlyDatabase(t *testing.T) {
	db := readOnlyDB(t)
	before := dbState(t, db)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	addrRE := regexp.MustCompile(`listening on (http://\S+/metrics)`)
	scraped := make(chan string, 1)
	stderr := &syncBuffer{onWrite: func(s string) {
		if m := addrRE.FindStringSubmatch(s); m != nil {
			// Scrape once the server runs, then stop the exporter.
			go func() {
				defer cancel()
				resp, err := http.Get(m[1])
				if err != nil {
					scraped <- err.Error()
					return
				}
				defer resp.Body.Close()
				b, _ := io.ReadAll(resp.Body)
				scraped <- string(b)
			}()
		}
	}}
	code, _, errOut := runCLIWith(t, ctx, nil, stderr, "exporter", "--root", fixture.Dir("metal"), "--listen", "127.0.0.1:0", "--db", db)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var page string
	select {
	case page = <-scraped:
	default:
		t.Fatalf("never scraped; stderr %q", errOut)
	}
	if !strings.Contains(page, `perflab_bench_median{better="higher",label="after",metric="events_per_sec.t1",probe="cpu",unit="events/s"} 800.5`) { // dddd4444, the latest "after" run: 797 + 3.5
		t.Errorf("no bench series from the read-only database:\n%s", grepLines(page, "perflab_bench"))
	}
	if after := dbState(t, db); !reflect.DeepEqual(after, before) {
		t.Error("the exporter changed the database or its directory")
	}
}

func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
