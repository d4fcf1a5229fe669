package serve

import (
	"strings"
	"testing"
)

type boundedDoc struct {
	Sides []struct {
		RunIDs []string `json:"run_ids"`
	} `json:"sides"`
	Pairs []struct {
		Deltas []struct {
			Verdict string `json:"verdict"`
			Drift   struct {
				RunsBase        int `json:"runs_base"`
				CalibrationRuns int `json:"calibration_runs"`
			} `json:"drift"`
		} `json:"deltas"`
		Changed int `json:"changed"`
	} `json:"pairs"`
	Notes []string `json:"notes"`
}

// A label side of more runs than the console compares is the newest
// compareProbeRuns runs of each probe, the page says so (once per label)
// and names the command for every run, and the verdicts are still
// compare's: the same label twice (A/A) changes nothing, a label after
// the smallStore step against one before it is a change.
func TestCompareBoundsLabelSides(t *testing.T) {
	oldMost, oldPer := compareMostRuns, compareProbeRuns
	compareMostRuns, compareProbeRuns = 10, 5 // of the 12 runs (6 of each of 2 probes) a label holds
	t.Cleanup(func() { compareMostRuns, compareProbeRuns = oldMost, oldPer })
	st := openRO(t, smallStore(t))
	h := New(st, Config{Listen: "127.0.0.1:0"}).Handler()

	var aa boundedDoc
	getJSON(t, h, "/compare?s=node02-w001&s=node02-w001&format=json", &aa)
	if len(aa.Sides) != 2 || len(aa.Sides[0].RunIDs) != 10 || len(aa.Pairs) != 1 || len(aa.Pairs[0].Deltas) == 0 {
		t.Fatalf("A/A: %+v", aa)
	}
	if aa.Pairs[0].Changed != 0 {
		t.Errorf("A/A of one label: %d changes", aa.Pairs[0].Changed)
	}
	for _, d := range aa.Pairs[0].Deltas {
		if d.Verdict != "same" && d.Verdict != "equivalent" {
			t.Errorf("A/A of one label: verdict %s", d.Verdict)
		}
		if d.Drift.RunsBase != 5 || d.Drift.CalibrationRuns != 0 {
			t.Errorf("A/A: drift from %d runs and %d calibration runs, want 5 and none (no history for a bounded side)", d.Drift.RunsBase, d.Drift.CalibrationRuns)
		}
	}
	notes := strings.Join(aa.Notes, "\n")
	if !strings.Contains(notes, "node02-w001: the newest 5 runs of each probe, 10 of its 12 runs") || strings.Count(notes, "node02-w001: the newest") != 1 ||
		!strings.Contains(notes, "perflab compare 'node02-w001' 'node02-w001'") {
		t.Errorf("notes do not say the sides are bounded: %q", aa.Notes)
	}
	code, page := get(t, h, "/compare?s=node02-w001&s=node02-w001")
	if code != 200 || !strings.Contains(page, "10 of its 12 runs") {
		t.Errorf("the page does not say the sides are bounded (%d)", code)
	}

	var step boundedDoc
	getJSON(t, h, "/compare?s=node01-w000&s=node01-w003&format=json", &step)
	if len(step.Pairs) != 1 || step.Pairs[0].Changed == 0 {
		t.Errorf("before and after node01's −15%% step: %+v", step.Pairs)
	}

	// Within the bound nothing is said and the history is read.
	compareMostRuns = 12
	var whole boundedDoc
	getJSON(t, h, "/compare?s=node02-w001&s=node02-w002&format=json", &whole)
	if strings.Contains(strings.Join(whole.Notes, " "), "newest") {
		t.Errorf("a label within the bound is said to be bounded: %q", whole.Notes)
	}
	calibrated := false
	for _, d := range whole.Pairs[0].Deltas {
		calibrated = calibrated || d.Drift.CalibrationRuns > 0
	}
	if !calibrated {
		t.Error("a label within the bound is compared without the noise history")
	}
}

// The start-up prime runs only on a loaded index (a first start does not
// wait for the index), and forgets the comparison it made: the first
// request computes its own.
func TestWarmForgetsItsComparison(t *testing.T) {
	st := openRO(t, smallStore(t))
	s := New(st, Config{Listen: "127.0.0.1:0"})
	s.warm(t.Context())
	if s.ix.loaded {
		t.Error("the prime read the index on a first start")
	}
	if err := s.ensureLoaded(t.Context()); err != nil {
		t.Fatal(err)
	}
	s.warm(t.Context())
	if len(s.compares) != 0 {
		t.Errorf("the prime left %d comparisons cached", len(s.compares))
	}
	var c boundedDoc
	getJSON(t, s.Handler(), "/compare?s=host:node01&s=host:node02&format=json", &c)
	if len(c.Pairs) != 1 || len(s.compares) != 1 {
		t.Errorf("after the prime: %d pairs, %d cached", len(c.Pairs), len(s.compares))
	}
}

// A bounded label side's monitor diff is made from the series of its
// newest compareMonitorRuns runs of each probe, and the note says so;
// its verdicts still come from every run of the side.
func TestCompareBoundsLabelMonitorDiff(t *testing.T) {
	oldMost, oldPer, oldMon := compareMostRuns, compareProbeRuns, compareMonitorRuns
	compareMostRuns, compareProbeRuns, compareMonitorRuns = 10, 5, 2
	t.Cleanup(func() { compareMostRuns, compareProbeRuns, compareMonitorRuns = oldMost, oldPer, oldMon })
	st := openRO(t, smallStore(t))
	h := New(st, Config{Listen: "127.0.0.1:0"}).Handler()

	var doc struct {
		Sides []struct {
			RunIDs []string `json:"run_ids"`
		} `json:"sides"`
		Pairs []struct {
			Monitor []struct {
				Field  string `json:"field"`
				Points [2]int `json:"points"`
			} `json:"monitor_diff"`
		} `json:"pairs"`
		Notes []string `json:"notes"`
	}
	getJSON(t, h, "/compare?s=node01-w000&s=node01-w003&format=json", &doc)
	if len(doc.Sides) != 2 || len(doc.Pairs) != 1 {
		t.Fatalf("%+v", doc)
	}
	// The points of system_pct (every point records it) of the first
	// compareMonitorRuns runs of each probe, in the side's order (each
	// probe's newest first).
	want := [2]int{}
	for i, sd := range doc.Sides {
		runs, err := st.RunsByIDs(t.Context(), sd.RunIDs)
		if err != nil || len(runs) != len(sd.RunIDs) || len(runs) != 10 {
			t.Fatalf("side %d: %d runs, %v", i, len(runs), err)
		}
		perProbe := map[string]int{}
		for _, r := range runs {
			if perProbe[r.Probe] < compareMonitorRuns {
				perProbe[r.Probe]++
				want[i] += len(r.Monitor)
			}
		}
	}
	if want[0] == 0 || want[1] == 0 {
		t.Fatal("the store's runs have no monitor series: nothing is tested")
	}
	found := false
	for _, m := range doc.Pairs[0].Monitor {
		if m.Field == "system_pct" {
			found = true
			if m.Points != want {
				t.Errorf("system_pct from %v points, want %v (the newest %d runs of each probe)", m.Points, want, compareMonitorRuns)
			}
		}
	}
	if !found {
		t.Errorf("no system_pct in the monitor diff: %+v", doc.Pairs[0].Monitor)
	}
	if notes := strings.Join(doc.Notes, "\n"); !strings.Contains(notes, "node01-w000: the newest 5 runs of each probe, 10 of its 12 runs; its monitor diff from the newest 2 of each probe") {
		t.Errorf("the notes do not say how the monitor diff is bounded: %q", doc.Notes)
	}
}
