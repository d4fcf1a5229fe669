package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/clierr"
	"github.com/perflab/perflab/internal/run"
	"github.com/perflab/perflab/internal/snapshot"
	"github.com/perflab/perflab/internal/store"
	"github.com/perflab/perflab/internal/testenv"
)

// fleetHistory stores 16 runs of cpu on h1, one an hour, in a new SQLite
// file: from the 9th on, THP is never instead of always and the host is
// 8% slower. Half are labelled before, half after; each has 8 samples.
func fleetHistory(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "local.db")
	st, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	t0 := time.Date(2026, 4, 1, 8, 0, 0, 0, time.UTC)
	for i := 0; i < 16; i++ {
		thp, label, centre := "always", "before", 1000.0
		if i >= 8 {
			thp, label, centre = "never", "after", 920.0
		}
		snap := &snapshot.Snapshot{Schema: snapshot.Schema, ID: "snap-" + thp, Host: snapshot.Host{Hostname: "h1"},
			Memory: snapshot.Memory{THP: snapshot.THP{Enabled: thp}}, Sysctl: map[string]string{}, Unavailable: map[string]string{}}
		r := &run.Run{Schema: run.Schema, ID: fmt.Sprintf("%02dabcdef%02d", i, i), Label: label, Probe: "cpu", Host: "h1",
			SnapshotID: snap.ID, Params: map[string]string{"threads": "1"}, Complete: true, Stop: run.StopFixed,
			Started: t0.Add(time.Duration(i) * time.Hour), Ended: t0.Add(time.Duration(i)*time.Hour + time.Minute),
			Metrics: []run.Metric{{Name: "events_per_sec.t1", Unit: "events/s", Better: run.Higher}}}
		for k := 0; k < 8; k++ {
			// Deterministic spread of ±0.7% around the centre.
			v := centre * (1 + 0.002*float64((k*3+i)%7-3))
			r.Samples = append(r.Samples, run.Sample{Metric: "events_per_sec.t1", Iteration: k, Value: v})
		}
		if err := st.SaveRun(context.Background(), r, snap); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

func TestRunsHistory(t *testing.T) {
	t.Setenv("NO_COLOR", "1")
	db := fleetHistory(t)
	code, out, errs := runCLI(t, "runs", "history", "cpu", "events_per_sec.t1", "--db", db, "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var doc struct {
		Series []struct {
			Points  []json.RawMessage
			Changes []struct {
				ChangePoint struct{ Index int } `json:"change_point"`
				Settings    []struct{ Path, Before, After string }
			}
		}
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Series) != 1 || len(doc.Series[0].Points) != 16 || len(doc.Series[0].Changes) != 1 {
		t.Fatalf("history: %s", out)
	}
	c := doc.Series[0].Changes[0]
	if c.ChangePoint.Index != 8 || len(c.Settings) != 1 || c.Settings[0].Path != "memory.thp.enabled" || c.Settings[0].After != "never" {
		t.Errorf("change point %+v, want at 8 naming THP", c)
	}
	code, out, _ = runCLI(t, "runs", "history", "cpu", "events_per_sec.t1", "--db", db)
	if code != 0 || !strings.Contains(out, "memory.thp.enabled: always → never") || !strings.Contains(out, "(worse)") {
		t.Errorf("text history (%d):\n%s", code, out)
	}
	for _, bad := range [][]string{
		{"nope", "events_per_sec.t1"},
		{"cpu", "nope"},
		{"cpu", "events_per_sec.t1", "--host", "h9"},
		{"cpu", "events_per_sec.t1", "--alpha", "2"},
		{"cpu", "events_per_sec.t1", "--min-segment", "1"},
	} {
		code, _, errs := runCLI(t, append([]string{"runs", "history", "--db", db}, bad...)...)
		if code != clierr.Usage || strings.Count(strings.TrimSpace(errs), "\n") > 1 || strings.Contains(errs, "goroutine") {
			t.Errorf("%v: exit %d, stderr %q", bad, code, errs)
		}
	}
}

// TestPostgresSameOutputAsSQLite pushes a SQLite history into a real
// PostgreSQL server and requires runs list, compare and runs history to
// print exactly what they print from the SQLite file.
func TestPostgresSameOutputAsSQLite(t *testing.T) {
	t.Setenv("NO_COLOR", "1")
	lite := fleetHistory(t)
	pg := testenv.Postgres(t)
	code, out, errs := runCLI(t, "runs", "push", "--db", pg, "--from", lite)
	if code != 0 || !strings.Contains(out, "pushed 16 runs") {
		t.Fatalf("push: exit %d\n%s%s", code, out, errs)
	}
	code, out, errs = runCLI(t, "runs", "push", "--db", pg, "--from", lite, "--format", "json")
	if code != 0 || !strings.Contains(out, `"added": 0`) || !strings.Contains(out, `"present": 16`) {
		t.Fatalf("second push added runs: exit %d\n%s%s", code, out, errs)
	}
	for _, args := range [][]string{
		{"runs", "list"},
		{"runs", "list", "--format", "json"},
		{"runs", "list", "--labels"},
		{"runs", "list", "--label", "after", "--limit", "3"},
		{"runs", "show", "08abc"},
		{"compare", "before", "after"},
		{"compare", "before", "after", "--format", "json"},
		{"compare", "00abcdef00", "15abcdef15", "--format", "md"},
		{"runs", "history", "cpu", "events_per_sec.t1"},
		{"runs", "history", "cpu", "events_per_sec.t1", "--format", "json"},
	} {
		codeL, want, errL := runCLI(t, append(args, "--db", lite)...)
		codeP, got, errP := runCLI(t, append(args, "--db", pg)...)
		if codeL != 0 || codeP != 0 {
			t.Errorf("%v: exit sqlite %d postgres %d: %s %s", args, codeL, codeP, errL, errP)
			continue
		}
		if testing.Verbose() {
			t.Logf("%v:\n%s", args, got)
		}
		if got != want {
			t.Errorf("%v: PostgreSQL output differs from SQLite's\n--- sqlite\n%s\n--- postgres\n%s", args, want, got)
		}
	}
}

func TestRunsPushBadInput(t *testing.T) {
	lite := fleetHistory(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"runs", "push", "--from", lite}, "needs --db"},
		{[]string{"runs", "push", "--db", lite, "--from", lite}, "same store"},
		{[]string{"runs", "push", "--db", "postgres://u:hunter2@[::1", "--from", lite}, "bad database path"},
		{[]string{"runs", "push", "--db", "postgres://u:hunter2@127.0.0.1:1/x?connect_timeout=2", "--from", lite}, "cannot connect to PostgreSQL"},
	} {
		code, _, errs := runCLI(t, c.args...)
		if code == 0 || !strings.Contains(errs, c.want) || strings.Contains(errs, "hunter2") {
			t.Errorf("%v: exit %d, stderr %q, want %q", c.args, code, errs, c.want)
		}
	}
}
