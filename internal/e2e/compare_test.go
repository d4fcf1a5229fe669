package e2e

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/audit"
	"github.com/perflab/perflab/internal/compare"
	"github.com/perflab/perflab/internal/probe"
	"github.com/perflab/perflab/internal/run"
	"github.com/perflab/perflab/internal/snapshot"
	"github.com/perflab/perflab/internal/testenv"
	"github.com/perflab/perflab/internal/tune"
)

const thpKnob = "/sys/kernel/mm/transparent_hugepage/enabled"

// setTHP sets the THP policy the way 'perflab tune apply' does: through
// the journal, so that the cleanup's Revert restores the original policy.
func setTHP(t *testing.T, h tune.Host, mode string) {
	t.Helper()
	p := tune.Plan{Workload: "e2e", Items: []tune.Item{{Rule: "E2E-THP",
		Change: audit.Change{Kind: audit.KindFile, Target: thpKnob, Value: mode}}}}
	if _, err := h.Apply(context.Background(), p, tune.ApplyOptions{Source: "e2e thp " + mode}); err != nil {
		t.Fatalf("setting THP to %s: %v", mode, err)
	}
}

// TestCompareNamesTHP measures page-fault cost with THP madvise and then
// never, and checks that compare ranks the THP policy first among the
// likely causes, tied to the page-fault metric that moved.
func TestCompareNamesTHP(t *testing.T) {
	testenv.Short(t)
	testenv.RequireRoot(t)
	fs := liveFS(t)
	if !fs.Exists(thpKnob) {
		testenv.Unavailable(t, "kernel without transparent huge pages")
	}
	h := tune.Host{FS: fs, Dir: t.TempDir()}
	t.Cleanup(func() {
		if _, err := h.Revert(tune.RevertOptions{}); err != nil {
			t.Errorf("restoring THP: %v", err)
		}
	})
	m := measurement{probe: "memory.pagefault", params: probe.Params{"size": "32MiB", "duration": "60ms"}, budget: 5 * time.Second, maxRuns: 12}

	var ra, rb *run.Run
	var sa, sb *snapshot.Snapshot
	var history []*run.Run
	whenQuiet(t, func() []*run.Run {
		setTHP(t, h, "madvise")
		// The store's history of this probe on this host, as 'perflab
		// check' passes it to compare: earlier runs with THP as it was.
		// One run a side is then calibrated (docs/statistics.md); the
		// ×4 gross rule alone is a coin toss for this probe, whose
		// madvise → never ratio lands at 3.5–8 on this VM. Six earlier
		// runs, not three: with three (two degrees of freedom) the
		// calibrated p of a ×5.3 change was 0.025 in one CI pass, which
		// Holm's adjustment over the probe's 4 metrics holds back
		// (inconclusive, honestly: the calibration's spread was wide).
		history = history[:0]
		for i := range 6 {
			r, _ := measure(t, m, fmt.Sprintf("earlier-%d", i))
			history = append(history, r)
		}
		ra, sa = measure(t, m, "thp-madvise")
		setTHP(t, h, "never")
		rb, sb = measure(t, m, "thp-never")
		return []*run.Run{ra, rb}
	})
	if sa.Memory.THP.Enabled != "madvise" || sb.Memory.THP.Enabled != "never" {
		t.Fatalf("snapshots saw THP %q and %q", sa.Memory.THP.Enabled, sb.Memory.THP.Enabled)
	}

	c, err := compare.Compare([]compare.Side{side("madvise", []*run.Run{ra}, sa), side("never", []*run.Run{rb}, sb)}, compare.Options{History: history})
	if err != nil {
		t.Fatal(err)
	}
	p := c.Pairs[0]
	why := explain(c, p)
	t.Logf("compare said:\n%s", why)
	// With THP off, MADV_HUGEPAGE does nothing: the thp mode faults 4 KiB
	// pages, several times the cost per page.
	thpRow := -1
	for _, d := range p.Deltas {
		if c.Metrics[d.Row].Metric == "ns_per_page.thp" {
			thpRow = d.Row
			if d.Verdict != compare.Worse {
				t.Fatalf("ns_per_page.thp is %s with THP never, want worse:\n%s", d.Verdict, why)
			}
		}
	}
	if thpRow < 0 {
		t.Fatalf("no ns_per_page.thp metric:\n%s", why)
	}
	if len(p.Causes) == 0 {
		t.Fatalf("no likely cause:\n%s", why)
	}
	top := p.Causes[0]
	if top.Knob != "thp" || !top.Supported() {
		t.Fatalf("top likely cause is %s, want thp:\n%s", top.Knob, why)
	}
	if !hasDiff(top.Diffs, "memory.thp.enabled", "madvise", "never") {
		t.Errorf("THP cause lacks the enabled madvise → never diff: %v", top.Diffs)
	}
	if !contains(top.Moved, thpRow) {
		t.Errorf("THP cause is not tied to ns_per_page.thp (moved rows %v, want %d):\n%s", top.Moved, thpRow, why)
	}
}

// TestCompareNamesCPUHog measures CPU throughput alone and then with
// busy-looping processes on every CPU, one run each as 'perflab bench' makes
// them, and checks that the cpu metrics are worse and the host-activity
// evidence (run queue, CPU pressure) is named among the likely causes.
func TestCompareNamesCPUHog(t *testing.T) {
	testenv.Short(t)
	m := measurement{probe: "cpu", params: probe.Params{"duration": "100ms", "max_prime": "5000"}, budget: 5 * time.Second, maxRuns: 40}
	// Only the baseline must be quiet: other load during the hogged run
	// can only make it slower still.
	// Runs are the unit: three a side, alternating, so the host's drift
	// over the test falls on both sides alike.
	var alone, hogged []*run.Run
	var sa, sb *snapshot.Snapshot
	for range 3 {
		var ra *run.Run
		whenQuiet(t, func() []*run.Run {
			ra, sa = measure(t, m, "alone")
			return []*run.Run{ra}
		})
		alone = append(alone, ra)
		stop := startHogs(t)
		time.Sleep(200 * time.Millisecond) // let the hogs reach the run queue
		rb, s := measure(t, m, "hogged")
		stop()
		hogged, sb = append(hogged, rb), s
	}

	c, err := compare.Compare([]compare.Side{side("alone", alone, sa), side("hogged", hogged, sb)}, compare.Options{})
	if err != nil {
		t.Fatal(err)
	}
	p := c.Pairs[0]
	why := explain(c, p)
	t.Logf("compare said:\n%s", why)
	for _, d := range p.Deltas {
		if row := c.Metrics[d.Row]; strings.HasPrefix(row.Metric, "events_per_sec.") && d.Verdict != compare.Worse {
			t.Errorf("%s is %s with a CPU hog, want worse:\n%s", row.Metric, d.Verdict, why)
		}
	}
	var named []string
	for _, cs := range p.Causes {
		if cs.Source == "monitor" && cs.Supported() {
			named = append(named, cs.Knob)
		}
	}
	load := false
	for _, k := range named {
		load = load || k == "ctxsw" || k == "cpu-pressure" || k == "steal"
	}
	if !load {
		t.Fatalf("no run-queue, CPU-pressure or steal evidence among the likely causes (monitor causes %v):\n%s", named, why)
	}
	// The hogs are on the run queue: whatever else the machine runs, it
	// holds more tasks on average (notable or not, other load may vary).
	for _, md := range p.Monitor {
		if md.Field == "procs_running" && !(md.Other > md.Base) {
			t.Errorf("the run queue did not grow with the hogs:\n%s", why)
		}
	}
}

// whenQuiet runs measure, and runs it again while the host was saturated
// by other work during any of the runs it returns: on a shared machine, or
// with tests of other packages running alongside, a run taken while a
// dozen tasks queue for two CPUs measures the neighbours, not the setting
// under test. Whether the host was quiet is judged from the monitor's run
// queue during the runs, never from the measured values, so retrying
// cannot pick a favourable result. It gives up after about 45 seconds.
func whenQuiet(t *testing.T, measure func() []*run.Run) {
	t.Helper()
	limit := float64(2*runtime.NumCPU() + 1) // the probe's own threads plus a neighbour per CPU
	deadline := time.Now().Add(45 * time.Second)
	for {
		busiest := 0.0
		for _, r := range measure() {
			busiest = max(busiest, meanRunQueue(r))
		}
		if busiest <= limit {
			return
		}
		if time.Now().After(deadline) {
			testenv.Unavailable(t, "host too busy for an A/B measurement: %.1f tasks on the run queue (limit %.0f)", busiest, limit)
		}
		t.Logf("run queue %.1f tasks > %.0f during the measurement: the host is busy, measuring again", busiest, limit)
		time.Sleep(2 * time.Second)
	}
}

func meanRunQueue(r *run.Run) float64 {
	var sum float64
	for _, p := range r.Monitor {
		sum += float64(p.RunQueue)
	}
	if len(r.Monitor) == 0 {
		return 0
	}
	return sum / float64(len(r.Monitor))
}

// TestCompareAA compares the same probe with the same configuration with
// itself: every verdict must be same or equivalent, and no likely cause
// may claim to explain a change. The two sides are measured in alternating
// blocks, so that load from elsewhere on the machine falls on both alike,
// as an A/A test must be run.
func TestCompareAA(t *testing.T) {
	testenv.Short(t)
	m := measurement{probe: "syscall", params: probe.Params{"duration": "10ms"}, budget: 10 * time.Second, maxRuns: 8}
	var a, b []*run.Run
	var snaps []*snapshot.Snapshot
	for i := 0; i < 6; i++ {
		ra, sa := measure(t, m, "A")
		rb, sb := measure(t, m, "B")
		a, b = append(a, ra), append(b, rb)
		snaps = append(snaps, sa, sb)
	}
	c, err := compare.Compare([]compare.Side{side("A", a, snaps...), side("B", b, snaps...)}, compare.Options{})
	if err != nil {
		t.Fatal(err)
	}
	p := c.Pairs[0]
	why := explain(c, p)
	t.Logf("compare said:\n%s", why)
	if len(p.Deltas) == 0 {
		t.Fatal("nothing compared")
	}
	for _, d := range p.Deltas {
		if d.Verdict != compare.Same && d.Verdict != compare.Equivalent {
			t.Errorf("%s is %s in an A/A comparison:\n%s", c.Metrics[d.Row].Metric, d.Verdict, why)
		}
	}
	for _, cs := range p.Causes {
		if cs.Supported() {
			t.Errorf("A/A comparison claims %s explains a change:\n%s", cs.Knob, why)
		}
	}
}

func hasDiff(ds []compare.Diff, path, before, after string) bool {
	for _, d := range ds {
		if d.Path == path && d.Before == before && d.After == after {
			return true
		}
	}
	return false
}

func contains(xs []int, x int) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}
