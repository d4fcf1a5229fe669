package cli

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/clierr"
	"github.com/perflab/perflab/internal/store"
)

// fastBench is a short, real probe run: syscall cost at 5 ms per iteration.
var fastBench = []string{"bench", "syscall", "--param", "duration=5ms", "--min-runs", "6", "--max-runs", "6", "--budget", "20s"}

func TestBenchBadInput(t *testing.T) {
	t.Setenv("XDG_DATA_HOME", t.TempDir())
	dir := t.TempDir()
	newer := filepath.Join(dir, "newer.db")
	s, err := store.Open(newer)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	db, _ := sql.Open("sqlite", newer)
	if _, err := db.Exec(`UPDATE schema_version SET version = 999`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	before, _ := os.ReadFile(newer)

	ctx := context.Background()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"bench", "nosuch"}, `unknown suite or probe "nosuch"`},
		{[]string{"bench"}, "name a suite or probe"},
		{[]string{"bench", "syscall", "--dir", filepath.Join(dir, "missing")}, "is not a directory"},
		{[]string{"bench", "syscall", "--cpus", "4000"}, "CPU 4000, which is not available"},
		{[]string{"bench", "syscall", "--cpus", "x"}, `bad --cpus "x"`},
		{[]string{"bench", "syscall", "--format", "xml"}, `unknown --format "xml"`},
		{[]string{"bench", "syscall", "--param", "nokey=1"}, "--param nokey is a parameter of none of the selected probes"},
		{[]string{"bench", "syscall", "--param", "duration=forever"}, "duration"},
		{[]string{"bench", "syscall", "--min-runs", "8", "--max-runs", "7"}, "--max-runs 7 is below --min-runs 8"},
		{[]string{"bench", "syscall", "--precision", "1.5"}, "--precision"},
		{[]string{"bench", "syscall", "--db", newer}, "newer than this perflab"},
		{[]string{"bench", "syscall", "--db", filepath.Join(dir, "nodir", "x.db")}, "does not exist"},
	} {
		code, _, stderr := runCLIWith(t, ctx, nil, nil, c.args...)
		if code != clierr.Usage || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and %q", c.args, code, stderr, c.want)
		}
		if strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
			t.Errorf("%v: more than one line of error: %q", c.args, stderr)
		}
	}
	if after, _ := os.ReadFile(newer); !bytes.Equal(before, after) {
		t.Error("the newer-schema database was changed")
	}
}

func TestBenchList(t *testing.T) {
	code, out, _ := runCLIWith(t, context.Background(), nil, nil, "bench", "list")
	if code != 0 || !strings.Contains(out, "quick") || !strings.Contains(out, "memory.latency") || !strings.Contains(out, "parameters:") {
		t.Errorf("bench list: exit %d\n%s", code, out)
	}
	code, out, _ = runCLIWith(t, context.Background(), nil, nil, "bench", "list", "--format", "json")
	var doc struct{ Suites, Probes []map[string]any }
	if code != 0 || json.Unmarshal([]byte(out), &doc) != nil || len(doc.Suites) == 0 || len(doc.Probes) == 0 {
		t.Errorf("bench list --format json: exit %d\n%s", code, out)
	}
}

func TestBenchStoresAndRunsManage(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("XDG_DATA_HOME", dir)
	db := filepath.Join(dir, "runs.db")
	ctx := context.Background()

	code, out, stderr := runCLIWith(t, ctx, nil, nil, append(fastBench, "--db", db, "--label", "before", "--format", "json")...)
	if code != 0 {
		t.Fatalf("bench: exit %d: %s", code, stderr)
	}
	var res []struct {
		ID      string
		Stop    string
		Metrics []struct {
			Name        string
			Unit        string
			N           int
			CIHalfWidth *float64 `json:"ci_half_width"`
		}
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || len(res) != 1 {
		t.Fatalf("bench json: %v\n%s", err, out)
	}
	if res[0].Stop != "precision" && res[0].Stop != "max-runs" {
		t.Errorf("stop %s", res[0].Stop)
	}
	for _, m := range res[0].Metrics {
		if m.N != 6 || m.Unit == "" || m.CIHalfWidth == nil {
			t.Errorf("metric %+v: want n=6, a unit and a CI", m)
		}
	}
	if !strings.Contains(stderr, "stored 1 run(s)") {
		t.Errorf("stderr does not say the run was stored: %q", stderr)
	}
	id := res[0].ID

	// list, with a label filter and as labels
	code, out, _ = runCLIWith(t, ctx, nil, nil, "runs", "list", "--db", db, "--label", "before")
	if code != 0 || !strings.Contains(out, id[:12]) || !strings.Contains(out, "syscall") {
		t.Errorf("runs list: exit %d\n%s", code, out)
	}
	code, out, _ = runCLIWith(t, ctx, nil, nil, "runs", "list", "--db", db, "--label", "after")
	if code != 0 || strings.Contains(out, id[:12]) {
		t.Errorf("runs list --label after shows the run: %s", out)
	}
	code, out, _ = runCLIWith(t, ctx, nil, nil, "runs", "list", "--db", db, "--labels")
	if code != 0 || !strings.Contains(out, "before") {
		t.Errorf("runs list --labels: %s", out)
	}
	// show by prefix: text with units and CI, json with every sample
	code, out, _ = runCLIWith(t, ctx, nil, nil, "runs", "show", id[:6], "--db", db)
	if code != 0 || !strings.Contains(out, "±") || !strings.Contains(out, " ns") || !strings.Contains(out, "host activity") {
		t.Errorf("runs show: exit %d\n%s", code, out)
	}
	code, out, _ = runCLIWith(t, ctx, nil, nil, "runs", "show", id[:6], "--db", db, "--format", "json")
	var full struct {
		Samples  []any
		Monitor  []any
		Snapshot string `json:"snapshot_id"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &full) != nil || len(full.Samples) == 0 || full.Snapshot == "" {
		t.Errorf("runs show json: exit %d\n%.300s", code, out)
	}

	// export → import into another database, twice (the second skips)
	exp := filepath.Join(dir, "export.json")
	if code, _, stderr = runCLIWith(t, ctx, nil, nil, "runs", "export", "--db", db, "-o", exp); code != 0 || !strings.Contains(stderr, "1 snapshot") {
		t.Fatalf("runs export: exit %d %s", code, stderr)
	}
	other := filepath.Join(dir, "other.db")
	code, out, _ = runCLIWith(t, ctx, nil, nil, "runs", "import", exp, "--db", other)
	if code != 0 || !strings.Contains(out, "imported 1 run(s)") {
		t.Errorf("runs import: exit %d %s", code, out)
	}
	code, out, _ = runCLIWith(t, ctx, nil, nil, "runs", "import", exp, "--db", other)
	if code != 0 || !strings.Contains(out, "imported 0 run(s)") || !strings.Contains(out, "1 already stored") {
		t.Errorf("second import: exit %d %s", code, out)
	}
	st, err := store.Open(other)
	if err != nil {
		t.Fatal(err)
	}
	r, err := st.Run(ctx, id)
	if err != nil || r.SnapshotID == "" {
		t.Fatalf("imported run: %v", err)
	}
	if _, err := st.Snapshot(ctx, r.SnapshotID); err != nil {
		t.Errorf("imported run's snapshot: %v", err)
	}
	st.Close()

	// rm, then the id is gone (exit 2 naming it)
	if code, out, _ = runCLIWith(t, ctx, nil, nil, "runs", "rm", id[:8], "--db", db); code != 0 || !strings.Contains(out, "deleted run "+id[:12]) {
		t.Errorf("runs rm: exit %d %s", code, out)
	}
	if code, _, stderr = runCLIWith(t, ctx, nil, nil, "runs", "show", id[:8], "--db", db); code != clierr.Usage || !strings.Contains(stderr, "no run") {
		t.Errorf("show after rm: exit %d %s", code, stderr)
	}
}

func TestRunsImportRefusesBadFilesAndImportsNothing(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("XDG_DATA_HOME", dir)
	db := filepath.Join(dir, "runs.db")
	good := filepath.Join(dir, "good.json")
	os.WriteFile(good, []byte(`{"kind":"perflab-runs","schema":1,"runs":[{"id":"abc","probe":"cpu","metrics":[{"name":"x","better":"higher"}],"samples":[{"metric":"x","value":1}]}],"snapshots":{}}`), 0o644)
	corrupt := filepath.Join(dir, "corrupt.json")
	os.WriteFile(corrupt, []byte(`{"kind":"perflab-runs","schema":1,"runs":[{"id":"x"`), 0o644)
	newer := filepath.Join(dir, "newer.json")
	os.WriteFile(newer, []byte(`{"kind":"perflab-runs","schema":42,"runs":[]}`), 0o644)
	ctx := context.Background()
	for _, c := range []struct {
		files []string
		want  string
	}{
		{[]string{good, corrupt}, "corrupt.json"},
		{[]string{good, newer}, "upgrade perflab"},
		{[]string{filepath.Join(dir, "missing.json")}, "cannot read"},
	} {
		code, _, stderr := runCLIWith(t, ctx, nil, nil, append([]string{"runs", "import", "--db", db}, c.files...)...)
		if code != clierr.Usage || !strings.Contains(stderr, c.want) {
			t.Errorf("import %v: exit %d %q, want exit 2 with %q", c.files, code, stderr, c.want)
		}
	}
	code, out, _ := runCLIWith(t, ctx, nil, nil, "runs", "list", "--db", db, "--format", "json")
	if code != 0 || strings.TrimSpace(out) != "[]" {
		t.Errorf("a refused import stored runs: %s", out)
	}
	if code, _, _ := runCLIWith(t, ctx, nil, nil, "runs", "import", "--db", db, good); code != 0 {
		t.Errorf("good file refused: %d", code)
	}
	if code, _, stderr := runCLIWith(t, ctx, nil, nil, "runs", "rm", "--db", db, "abc", "zzz"); code != clierr.Usage || !strings.Contains(stderr, `no run "zzz"`) {
		t.Errorf("rm with a bad id: exit %d %s", code, stderr)
	}
	if code, out, _ := runCLIWith(t, ctx, nil, nil, "runs", "list", "--db", db); code != 0 || !strings.Contains(out, "abc") {
		t.Errorf("rm with one bad id deleted the good one: %s", out)
	}
}

func TestBenchInterruptStoresPartialRun(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("XDG_DATA_HOME", dir)
	db := filepath.Join(dir, "runs.db")
	scratch := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var once sync.Once
	stderr := &syncBuffer{onWrite: func(s string) {
		// Ctrl-C a little after the probe has started measuring (no noise
		// check: its readings would take the time before the first sample).
		if strings.Contains(s, "starting") {
			once.Do(func() { time.AfterFunc(800*time.Millisecond, cancel) })
		}
	}}
	code, _, errOut := runCLIWith(t, ctx, nil, stderr, "bench", "syscall", "--param", "duration=5ms", "--precision", "0", "--max-runs", "100000", "--budget", "1m", "--db", db, "--dir", scratch, "--no-noise-check")
	if code != clierr.Runtime || !strings.Contains(errOut, "interrupted") || !strings.Contains(errOut, "marked incomplete") {
		t.Fatalf("exit %d, stderr %q; want 3, interrupted, partial run stored", code, errOut)
	}
	code, out, _ := runCLIWith(t, context.Background(), nil, nil, "runs", "list", "--db", db, "--format", "json")
	var runs []struct {
		Complete bool
		Stop     string
		Samples  int
	}
	if code != 0 || json.Unmarshal([]byte(out), &runs) != nil || len(runs) != 1 {
		t.Fatalf("runs after interrupt: %s", out)
	}
	if runs[0].Complete || runs[0].Stop != "interrupted" || runs[0].Samples == 0 {
		t.Errorf("stored run %+v: want incomplete, interrupted, with the samples taken", runs[0])
	}
	if ents, _ := os.ReadDir(scratch); len(ents) != 0 {
		t.Errorf("scratch files left in --dir: %v", ents)
	}
}
