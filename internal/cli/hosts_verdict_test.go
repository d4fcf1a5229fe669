package cli

import (
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/run"
	"github.com/perflab/perflab/internal/serve"
	"github.com/perflab/perflab/internal/snapshot"
	"github.com/perflab/perflab/internal/store"
)

func readExportGz(t *testing.T, path string) *run.Export {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	e, err := run.ReadExport(zr)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return e
}

// storeOf writes the exports' runs (with their snapshots) to a new store.
func storeOf(t *testing.T, exports ...*run.Export) string {
	t.Helper()
	db := filepath.Join(t.TempDir(), "runs.db")
	st, err := store.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, e := range exports {
		for _, r := range e.Runs {
			if err := st.SaveRun(context.Background(), r, e.Snapshots[r.SnapshotID]); err != nil {
				t.Fatal(err)
			}
		}
	}
	return db
}

type hostDrift struct {
	Probe      string   `json:"probe"`
	Metric     string   `json:"metric"`
	Verdict    string   `json:"verdict"`
	HostDrift  bool     `json:"host_drift"`
	RunID      string   `json:"run_id"`
	PreviousID string   `json:"previous_run_id"`
	Baseline   []string `json:"baseline_run_ids"`
}

// hostsVerdicts reads the console's hosts page as JSON and checks every
// verdict on it against 'perflab compare --format json' on the same two
// runs and store; it returns probe → verdict.
func hostsVerdicts(t *testing.T, db string) map[string]string {
	t.Helper()
	st, err := store.OpenReadOnly(db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	h := serve.New(st, serve.Config{Listen: "127.0.0.1:0"}).Handler()
	req := httptest.NewRequest(http.MethodGet, "/?format=json", nil)
	req.Host = "127.0.0.1"
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		t.Fatalf("hosts page: %d %s", rec.Code, rec.Body)
	}
	var doc struct {
		Data struct {
			Hosts []struct {
				Host  string      `json:"host"`
				Drift []hostDrift `json:"drift"`
			} `json:"hosts"`
		} `json:"data"`
		Hosts []struct {
			Host  string      `json:"host"`
			Drift []hostDrift `json:"drift"`
		} `json:"hosts"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &doc); err != nil {
		t.Fatalf("hosts JSON: %v", err)
	}
	hosts := doc.Hosts
	if len(hosts) == 0 {
		hosts = doc.Data.Hosts
	}
	out := map[string]string{}
	for _, hr := range hosts {
		for _, d := range hr.Drift {
			out[d.Probe] = d.Verdict
			if d.HostDrift {
				out[d.Probe] += " (host drift)"
			}
			if want := compareVerdict(t, db, d); d.Verdict+hd(d.HostDrift) != want {
				t.Errorf("%s %s/%s (%s vs %s): console says %s, perflab compare says %s", hr.Host, d.Probe, d.Metric, d.RunID, d.PreviousID, d.Verdict, want)
			}
		}
	}
	return out
}

func compareVerdict(t *testing.T, db string, d hostDrift) string {
	t.Helper()
	code, out, errs := runCLI(t, "compare", strings.Join(d.Baseline, ","), d.RunID, "--db", db, "--format", "json")
	if code != 0 && code != 1 {
		t.Fatalf("compare %s %s: exit %d: %s", d.PreviousID, d.RunID, code, errs)
	}
	var c struct {
		Pairs []struct {
			Deltas []struct {
				Probe     string `json:"probe"`
				Name      string `json:"name"`
				Verdict   string `json:"verdict"`
				HostDrift bool   `json:"host_drift"`
			} `json:"deltas"`
		} `json:"pairs"`
	}
	if err := json.Unmarshal([]byte(out), &c); err != nil {
		t.Fatalf("compare JSON: %v\n%s", err, out)
	}
	for _, p := range c.Pairs {
		for _, del := range p.Deltas {
			if del.Probe == d.Probe && del.Name == d.Metric {
				return del.Verdict + hd(del.HostDrift)
			}
		}
	}
	t.Fatalf("compare %s %s has no %s/%s", d.PreviousID, d.RunID, d.Probe, d.Metric)
	return ""
}

// The console's hosts page decides as compare does: every verdict it
// shows equals compare's on the same runs, for stores holding the real
// A/A runs (nothing changed between them) up to aa-k, k = 4…9. Over the
// store holding all of them it calls no probe better or worse; over the
// smaller stores (fewer earlier runs to measure the drift) at most 5% of
// verdicts may, the level compare's own A/A acceptance allows
// (compare.TestRealAA).
func TestHostsVerdictIsCompares(t *testing.T) {
	var aa []*run.Export
	for n := 3; n <= 9; n++ {
		aa = append(aa, readExportGz(t, filepath.Join("..", "..", "testdata", "aa", fmt.Sprintf("aa-%d.json.gz", n))))
	}
	checked, changed := 0, 0
	for k := 2; k <= len(aa); k++ {
		vs := hostsVerdicts(t, storeOf(t, aa[:k]...))
		for probe, v := range vs {
			checked++
			if v == "better" || v == "worse" {
				changed++
				t.Logf("A/A aa-%d against aa-3…aa-%d: %s called %s", k+2, k+1, probe, v)
				if k == len(aa) {
					t.Errorf("over all the A/A runs the console calls %s %s", probe, v)
				}
			}
		}
	}
	if checked < 6*8 || float64(changed) > 0.05*float64(checked) {
		t.Errorf("%d of %d console verdicts on A/A runs call a change (want ≤ 5%%)", changed, checked)
	}
}

func hd(b bool) string {
	if b {
		return " (host drift)"
	}
	return ""
}

// A THP always → never pair, one run a side: the console calls
// memory.pagefault worse, as compare does (the gross-change rule). The
// "never" run is the real A/A run with its huge-page metrics scaled by
// the ×8 THP always vs never moves them on this VM (stats.GrossFactor's
// note), its snapshot's THP setting edited: everything else is as
// measured.
func TestHostsVerdictTHPPair(t *testing.T) {
	e := readExportGz(t, filepath.Join("..", "..", "testdata", "aa", "aa-9.json.gz"))
	var always *run.Run
	for _, r := range e.Runs {
		if r.Probe == "memory.pagefault" {
			always = r
		}
	}
	if always == nil {
		t.Fatal("aa-9 has no memory.pagefault run")
	}
	never := *always
	never.ID, never.Label = "ffff0000thpnever", "thp-never"
	never.Started, never.Ended = always.Started.Add(time.Hour), always.Ended.Add(time.Hour)
	never.Samples = nil
	for _, smp := range always.Samples {
		switch smp.Metric {
		case "ns_per_page.thp":
			smp.Value *= 8
		case "touch_bw.thp":
			smp.Value /= 8
		}
		never.Samples = append(never.Samples, smp)
	}
	snap := *e.Snapshots[always.SnapshotID]
	snap.ID = "ffff0000snapnever"
	snap.Memory.THP.Enabled = "never"
	never.SnapshotID = snap.ID
	always.Label = "thp-always"
	vs := hostsVerdicts(t, storeOf(t, &run.Export{Runs: []*run.Run{always}, Snapshots: e.Snapshots},
		&run.Export{Runs: []*run.Run{&never}, Snapshots: map[string]*snapshot.Snapshot{snap.ID: &snap}}))
	if vs["memory.pagefault"] != "worse" {
		t.Errorf("THP always → never: console says %q for memory.pagefault, want worse", vs["memory.pagefault"])
	}
}
