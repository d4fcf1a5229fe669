package compare

import (
	"bytes"
	"path/filepath"
	"sort"
	"testing"

	"github.com/perflab/perflab/internal/run"
	"github.com/perflab/perflab/internal/testenv"
)

// loadAA reads the A/A fixtures: 'perflab bench quick' runs exported from
// the development VM with nothing changed between them, some back to back
// and some 15 or more minutes apart (testdata/aa/README.md).
func loadAA(t *testing.T) []Side {
	t.Helper()
	files, err := filepath.Glob("../../testdata/aa/*.json.gz")
	if err != nil || len(files) < 3 {
		t.Fatalf("A/A fixtures: %d files (%v), want at least 3", len(files), err)
	}
	sort.Strings(files)
	var sides []Side
	for _, f := range files {
		e, err := run.ReadExport(bytes.NewReader(testenv.Gunzip(t, f)))
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		sides = append(sides, Side{Name: filepath.Base(f), Runs: e.Runs, Snapshots: e.Snapshots})
	}
	return sides
}

// TestRealAA is issue 12's acceptance on real data: compared pairwise, one
// export against another, at least 95% of metrics read same, equivalent or
// inconclusive — both as files alone (one run a side, no history) and with
// the other A/A runs as the store's history (calibrated), changes that the
// host-drift reference explains not counting as changes — and no setting
// or identity is named as a likely cause of what moved.
func TestRealAA(t *testing.T) {
	sides := loadAA(t)
	var history []*run.Run
	for _, s := range sides {
		history = append(history, s.Runs...)
	}
	for _, mode := range []struct {
		name string
		hist []*run.Run
	}{{"files alone", nil}, {"with history", history}} {
		counts := map[Verdict]int{}
		total, drift := 0, 0
		for i := range sides {
			for j := i + 1; j < len(sides); j++ {
				c, err := Compare([]Side{sides[i], sides[j]}, Options{History: mode.hist})
				if err != nil {
					t.Fatal(err)
				}
				p := c.Pairs[0]
				for _, d := range p.Deltas {
					counts[d.Verdict]++
					total++
					if d.HostDrift {
						drift++ // the host, not the system, changed (issue 12 point 3)
					}
					if d.Verdict == Better || d.Verdict == Worse {
						row := c.Metrics[d.Row]
						t.Logf("%s: %s vs %s: %s/%s %s %+.1f%% [%+.1f, %+.1f] drift %s/%d host_drift=%v", mode.name, sides[i].Name, sides[j].Name,
							row.Probe, row.Metric, d.Verdict, d.DeltaPct, d.DeltaLoPct, d.DeltaHiPct, d.Drift.Source, d.Drift.DF, d.HostDrift)
					}
				}
				for _, cs := range p.Causes {
					if cs.Supported() && (cs.Kind == KindSetting || cs.Kind == KindIdentity) {
						t.Errorf("%s: %s vs %s names %s (%s) as a likely cause: %v", mode.name, sides[i].Name, sides[j].Name, cs.Knob, cs.Kind, cs.Diffs)
					}
				}
			}
		}
		changed := counts[Better] + counts[Worse] - drift
		t.Logf("%s: %d metric comparisons: %v, %d of the changes explained by host drift", mode.name, total, counts, drift)
		if total == 0 || float64(changed) > 0.05*float64(total) {
			t.Errorf("%s: %d of %d A/A metric comparisons read better or worse beyond host drift (%.1f%%), want ≤ 5%%", mode.name, changed, total, 100*float64(changed)/float64(total))
		}
	}
}
