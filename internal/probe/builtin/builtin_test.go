package builtin

import (
	"context"
	"errors"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/clierr"
	"github.com/perflab/perflab/internal/probe"
)

// tiny are parameters small enough to run every probe under -race in well
// under a second each.
var tiny = map[string]probe.Params{
	"cpu":              {"max_prime": "2000", "threads": "1,2", "duration": "20ms"},
	"memory.bandwidth": {"size": "4MiB", "threads": "1,2", "duration": "10ms"},
	"memory.stream":    {"array_size": "4MiB", "threads": "1,2", "passes": "3"},
	"memory.latency":   {"min": "16KiB", "max": "4MiB", "duration": "5ms", "hugepages": "false"},
	"memory.pagefault": {"size": "8MiB", "duration": "5ms"},
	"sched.wakeup":     {"pairs": "1,2", "duration": "20ms"},
	"sched.ctxswitch":  {"duration": "20ms"},
	"syscall":          {"duration": "5ms"},
	"disk":             {"size": "2MiB", "block": "256KiB", "duration": "10ms", "direct": "auto"},
	"net.tcp":          {"msg_size": "16KiB", "duration": "20ms"},
	"net.udp":          {"duration": "20ms"},
	"net.ping":         {"duration": "20ms"},
}

func newEnv(t *testing.T, p probe.Probe, over probe.Params) *probe.Env {
	t.Helper()
	params := p.Defaults(true).Merge(over)
	return &probe.Env{Params: params, Dir: t.TempDir(), Log: io.Discard}
}

// openFDs lists this process's open descriptors.
func openFDs(t *testing.T) map[string]string {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, e := range ents {
		target, _ := os.Readlink("/proc/self/fd/" + e.Name())
		out[e.Name()] = target
	}
	return out
}

func TestAllProbesDistinctAndTiny(t *testing.T) {
	seen := map[string]bool{}
	for _, p := range All() {
		if seen[p.Name()] {
			t.Errorf("duplicate probe name %s", p.Name())
		}
		seen[p.Name()] = true
		if _, ok := tiny[p.Name()]; !ok {
			t.Errorf("probe %s has no tiny parameters in this test", p.Name())
		}
		if len(p.Doc()) < 100 {
			t.Errorf("%s: Doc is too short to say what and how", p.Name())
		}
		if got, ok := ByName(p.Name()); !ok || got.Name() != p.Name() {
			t.Errorf("ByName(%q) failed", p.Name())
		}
		for _, quick := range []bool{false, true} {
			if _, err := p.Metrics(p.Defaults(quick)); err != nil {
				t.Errorf("%s: own defaults (quick=%v) rejected: %v", p.Name(), quick, err)
			}
		}
	}
}

// TestProbesRun runs each probe with tiny parameters and checks every
// declared metric comes back positive and finite, nothing undeclared comes
// back, and Teardown leaves no descriptor or file behind.
func TestProbesRun(t *testing.T) {
	for _, p := range All() {
		t.Run(p.Name(), func(t *testing.T) {
			env := newEnv(t, p, tiny[p.Name()])
			ms, err := p.Metrics(env.Params)
			if err != nil {
				t.Fatal(err)
			}
			before := openFDs(t)
			if err := p.Setup(context.Background(), env); err != nil {
				t.Fatalf("Setup: %v", err)
			}
			for i := 0; i < 2; i++ {
				vals, err := p.Iterate(context.Background(), env)
				if err != nil {
					t.Fatalf("Iterate %d: %v", i, err)
				}
				for _, m := range ms {
					v, ok := vals[m.Name]
					if !ok {
						t.Errorf("metric %s missing", m.Name)
						continue
					}
					// A share (net.tcp's retransmissions) is 0 on a clean path;
					// every other metric is a rate, a time or a size.
					if m.Unit == "%" {
						if !(v >= 0 && v <= 100) {
							t.Errorf("metric %s = %v %%, want 0–100", m.Name, v)
						}
					} else if !(v > 0) || math.IsInf(v, 0) {
						t.Errorf("metric %s = %v, want a positive finite value", m.Name, v)
					}
				}
				if len(vals) != len(ms) {
					t.Errorf("got %d values for %d declared metrics: %v", len(vals), len(ms), vals)
				}
			}
			if err := p.Teardown(env); err != nil {
				t.Fatalf("Teardown: %v", err)
			}
			assertNoLeaks(t, before, env.Dir)
		})
	}
}

func assertNoLeaks(t *testing.T, before map[string]string, dir string) {
	t.Helper()
	after := openFDs(t)
	for fd, target := range after {
		if _, ok := before[fd]; !ok {
			t.Errorf("descriptor %s -> %s left open", fd, target)
		}
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		t.Errorf("file %s left in the scratch directory", e.Name())
	}
}

// TestCancellation cancels each probe shortly into a long Iterate: it must
// return the context's error promptly, and Teardown must still clean up.
func TestCancellation(t *testing.T) {
	for _, p := range All() {
		t.Run(p.Name(), func(t *testing.T) {
			over := probe.Params{}
			for k, v := range tiny[p.Name()] {
				over[k] = v
			}
			// Every probe would run for minutes: by passes (STREAM, whose
			// duration only bounds them; 0s is passes alone), or by time.
			if _, ok := p.Defaults(false)["passes"]; ok {
				over["passes"], over["duration"] = "1000", "0s"
			} else {
				over["duration"] = "30s"
			}
			env := newEnv(t, p, over)
			before := openFDs(t)
			if err := p.Setup(context.Background(), env); err != nil {
				t.Fatalf("Setup: %v", err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(50*time.Millisecond, cancel)
			done := make(chan error, 1)
			go func() {
				_, err := p.Iterate(ctx, env)
				done <- err
			}()
			select {
			case err := <-done:
				if !errors.Is(err, context.Canceled) {
					t.Errorf("Iterate after cancel returned %v, want context.Canceled", err)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("Iterate ignored cancellation for 5 s")
			}
			if err := p.Teardown(env); err != nil {
				t.Fatalf("Teardown: %v", err)
			}
			assertNoLeaks(t, before, env.Dir)
		})
	}
}

// TestTeardownWithoutSetup: the harness calls Teardown after a failed Setup.
func TestTeardownWithoutSetup(t *testing.T) {
	before := openFDs(t)
	for _, p := range All() {
		if err := p.Teardown(&probe.Env{Log: io.Discard}); err != nil {
			t.Errorf("%s: Teardown without Setup: %v", p.Name(), err)
		}
	}
	after := openFDs(t)
	if len(after) < len(before) {
		t.Errorf("Teardown without Setup closed descriptors it did not own: %d -> %d", len(before), len(after))
	}
}

func TestParamValidation(t *testing.T) {
	bad := []struct {
		probe, key, value string
	}{
		{"cpu", "max_prime", "two"},
		{"cpu", "threads", "0"},
		{"cpu", "threads", "1,1"},
		{"cpu", "duration", "fast"},
		{"memory.bandwidth", "size", "1KiB"},
		{"memory.bandwidth", "ops", "read,scan"},
		{"memory.latency", "max", "3MiB"},
		{"memory.latency", "max", "8KiB"},
		{"memory.latency", "hugepages", "maybe"},
		{"memory.pagefault", "size", "3MiB"},
		{"sched.wakeup", "pairs", "1,x"},
		{"sched.wakeup", "placement", "far"},
		{"sched.ctxswitch", "duration", "-1s"},
		{"syscall", "duration", "2h"},
		{"disk", "size", "1000000"},
		{"disk", "direct", "sometimes"},
		{"net.tcp", "msg_size", "0"},
		{"net.tcp", "tests", "latency,ping"},
		{"net.udp", "size", "70000"},
		{"net.udp", "colour", "blue"},
	}
	for _, c := range bad {
		p, ok := ByName(c.probe)
		if !ok {
			t.Fatalf("no probe %s", c.probe)
		}
		params := p.Defaults(false).Merge(probe.Params{c.key: c.value})
		_, err := p.Metrics(params)
		if err == nil {
			t.Errorf("%s %s=%s: accepted", c.probe, c.key, c.value)
			continue
		}
		if !strings.Contains(err.Error(), c.key) {
			t.Errorf("%s %s=%s: error %q does not name the parameter", c.probe, c.key, c.value, err)
		}
		var ce *clierr.Error
		if !errors.As(err, &ce) || ce.Code != clierr.Usage {
			t.Errorf("%s %s=%s: error is not a usage error: %v", c.probe, c.key, c.value, err)
		}
		// Setup rejects it too, before taking anything.
		if err := p.Setup(context.Background(), &probe.Env{Params: params, Dir: t.TempDir(), Log: io.Discard}); err == nil {
			t.Errorf("%s %s=%s: Setup accepted", c.probe, c.key, c.value)
		}
		_ = p.Teardown(&probe.Env{Log: io.Discard})
	}
}

func TestMetricShapes(t *testing.T) {
	cpu := &CPU{}
	ms, err := cpu.Metrics(probe.Params{"threads": "4,1,2"})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, m := range ms {
		names = append(names, m.Name)
		if m.Series != "threads" || m.XUnit != "threads" || m.Name != "events_per_sec.t"+strconv.Itoa(int(m.X)) {
			t.Errorf("cpu metric %+v: want series threads and X = thread count", m)
		}
	}
	if strings.Join(names, " ") != "events_per_sec.t1 events_per_sec.t2 events_per_sec.t4" {
		t.Errorf("cpu metrics %v", names)
	}

	lat := &MemLatency{}
	ms, err = lat.Metrics(probe.Params{"min": "16KiB", "max": "1MiB"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"latency.16KiB", "latency.32KiB", "latency.64KiB", "latency.128KiB", "latency.256KiB", "latency.512KiB", "latency.1MiB"}
	if len(ms) != len(want) {
		t.Fatalf("latency metrics %v", ms)
	}
	for i, m := range ms {
		if m.Name != want[i] || m.Series != "latency" || m.XUnit != "B" || m.X != float64(int64(16<<10)<<i) {
			t.Errorf("latency metric %d = %+v, want %s at X=%d B", i, m, want[i], 16<<10<<i)
		}
	}
	// The full default must reach at least 512 MiB.
	ms, _ = lat.Metrics(lat.Defaults(false))
	if last := ms[len(ms)-1]; last.X < 512<<20 {
		t.Errorf("default latency curve stops at %v B", last.X)
	}
}
