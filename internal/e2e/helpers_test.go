package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/bench"
	"github.com/perflab/perflab/internal/compare"
	"github.com/perflab/perflab/internal/hostfs"
	"github.com/perflab/perflab/internal/monitor"
	"github.com/perflab/perflab/internal/probe"
	"github.com/perflab/perflab/internal/probe/builtin"
	"github.com/perflab/perflab/internal/run"
	"github.com/perflab/perflab/internal/snapshot"
)

// hogEnv makes the test binary a CPU hog instead of running tests.
const hogEnv = "PERFLAB_E2E_HOG"

func TestMain(m *testing.M) {
	if os.Getenv(hogEnv) != "" {
		hog()
		return
	}
	os.Exit(m.Run())
}

// hog spins one CPU until killed, and gives up on its own after two
// minutes so that a crashed test run cannot leave it behind for long.
func hog() {
	runtime.GOMAXPROCS(1)
	deadline := time.Now().Add(2 * time.Minute)
	x := uint64(1)
	for i := 0; ; i++ {
		x = x*6364136223846793005 + 1442695040888963407
		if i&0xfffff == 0 && time.Now().After(deadline) {
			break
		}
	}
	fmt.Fprint(os.Stderr, x&1)
}

// hogsPerCPU is how many busy loops share each CPU: enough that the
// probe's share of a CPU (1/4) stays well below what load from tests of
// other packages running alongside can leave it (1/2 with one neighbour).
const hogsPerCPU = 3

// startHogs starts hogsPerCPU busy-looping children per CPU and returns a function
// that kills them; they are also killed when the test ends, and with the
// test process (Pdeathsig).
//
// Pdeathsig fires when the thread that forked the child exits, and the
// probes end their CPU-pinned threads by exiting them, so the children are
// forked from a goroutine locked to its own thread that lives until stop.
func startHogs(t *testing.T) (stop func()) {
	t.Helper()
	started := make(chan error, 1)
	quit := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		var cmds []*exec.Cmd
		defer func() {
			for _, cmd := range cmds {
				_ = cmd.Process.Kill()
				_ = cmd.Wait()
			}
		}()
		for i := 0; i < hogsPerCPU*runtime.NumCPU(); i++ {
			cmd := exec.Command(os.Args[0])
			cmd.Env = append(os.Environ(), hogEnv+"=1")
			cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
			if err := cmd.Start(); err != nil {
				started <- err
				return
			}
			cmds = append(cmds, cmd)
		}
		started <- nil
		<-quit
	}()
	var once sync.Once
	stop = func() {
		once.Do(func() { close(quit); <-done })
	}
	t.Cleanup(stop)
	if err := <-started; err != nil {
		t.Fatalf("starting a CPU hog: %v", err)
	}
	return stop
}

// liveFS is the host's own root.
func liveFS(t *testing.T) hostfs.FS {
	t.Helper()
	fs, err := hostfs.New("/")
	if err != nil {
		t.Fatal(err)
	}
	return fs
}

// measurement says how to run one probe for a side.
type measurement struct {
	probe   string
	params  probe.Params // over the probe's quick defaults
	budget  time.Duration
	maxRuns int
}

// measure takes a snapshot of the host and runs m through the bench
// harness with the monitor on, exactly as 'perflab bench' does, and
// returns the run with its snapshot. Precision is off so that every side
// runs for its whole budget or repetition cap, the same on both sides.
func measure(t *testing.T, m measurement, label string) (*run.Run, *snapshot.Snapshot) {
	t.Helper()
	fs := liveFS(t)
	snap, err := snapshot.Collect(fs, snapshot.Options{})
	if err != nil {
		t.Fatal(err)
	}
	p, ok := bench.NewCatalog(builtin.All()...).Probe(m.probe)
	if !ok {
		t.Fatalf("no probe %s", m.probe)
	}
	sm, err := monitor.New(fs)
	if err != nil {
		t.Fatal(err)
	}
	item := bench.Item{Probe: p, Params: p.Defaults(true).Merge(m.params), Budget: m.budget, MaxRuns: m.maxRuns}
	opt := bench.Options{Precision: 0, MinRuns: bench.DefaultMinRuns, MaxRuns: m.maxRuns, Budget: m.budget,
		Warmup: 1, Label: label, Version: "e2e", Monitor: sm, MonitorInterval: 500 * time.Millisecond,
		Host: bench.Host{Name: snap.Host.Hostname, MachineID: snap.Host.MachineID, BootID: snap.Host.BootID, SnapshotID: snap.ID}}
	runs, err := bench.Run(context.Background(), []bench.Item{item}, opt)
	if err != nil {
		t.Fatalf("bench %s: %v", m.probe, err)
	}
	r := runs[0]
	if !r.Complete || len(r.Samples) == 0 {
		t.Fatalf("run of %s incomplete: %s %s", m.probe, r.Stop, r.Error)
	}
	return r, snap
}

// side builds a compare side from runs and their snapshots.
func side(name string, runs []*run.Run, snaps ...*snapshot.Snapshot) compare.Side {
	s := compare.Side{Name: name, Runs: runs, Snapshots: map[string]*snapshot.Snapshot{}}
	for _, sn := range snaps {
		s.Snapshots[sn.ID] = sn
	}
	return s
}

// explain renders a pair for a failure message: verdicts, causes and the
// monitor differences, so a failing proof shows what compare said.
func explain(c *compare.Comparison, p compare.Pair) string {
	var b strings.Builder
	for _, d := range p.Deltas {
		row := c.Metrics[d.Row]
		fmt.Fprintf(&b, "  %s/%s: %s Δ%+.1f%% p_adj=%.3g\n", row.Probe, row.Metric, d.Verdict, d.DeltaPct, d.PAdj)
	}
	for i, cs := range p.Causes {
		fmt.Fprintf(&b, "  cause %d: %s (%s) score %.2f moved %d/%d diffs %v\n", i+1, cs.Knob, cs.Source, cs.Score, len(cs.Moved), cs.Affected, cs.Diffs)
	}
	for _, m := range p.Monitor {
		fmt.Fprintf(&b, "  monitor %s: %.3g → %.3g %s notable=%v p=%.3g\n", m.Field, m.Base, m.Other, m.Unit, m.Notable, m.P)
	}
	return b.String()
}
