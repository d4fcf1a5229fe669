package tools

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/probe"
	"github.com/perflab/perflab/internal/testenv"
)

func cpusAllowed(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "Cpus_allowed_list:"); ok {
			return strings.TrimSpace(v)
		}
	}
	t.Fatalf("no Cpus_allowed_list in %s", path)
	return ""
}

// threadAffinities is the CPU list of every thread of this process.
func threadAffinities(t *testing.T) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	tasks, _ := os.ReadDir("/proc/self/task")
	for _, e := range tasks {
		if b, err := os.ReadFile(filepath.Join("/proc/self/task", e.Name(), "status")); err == nil {
			for _, l := range strings.Split(string(b), "\n") {
				if v, ok := strings.CutPrefix(l, "Cpus_allowed_list:"); ok {
					out[strings.TrimSpace(v)] = true
				}
			}
		}
	}
	return out
}

// A client is placed from its first instruction, and perflab's own
// threads keep their placement.
func TestLaunchPinsChildNotParent(t *testing.T) {
	if runtime.NumCPU() < 2 {
		testenv.Unavailable(t, "needs 2 CPUs")
	}
	before := threadAffinities(t)
	for _, cpu := range []int{0, 1} {
		res, err := runTool(context.Background(), invocation{tool: "sh", argv: []string{"/bin/sh", "-c", "grep Cpus_allowed_list /proc/self/status"}, cpus: []int{cpu}})
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(string(res.stdout)), "Cpus_allowed_list:")); got != strconv.Itoa(cpu) {
			t.Errorf("child pinned to %d runs on %q", cpu, got)
		}
	}
	// The thread that forked a pinned child exits with its goroutine; Go
	// tears it down asynchronously, so allow it a moment. A thread that
	// went back to Go's pool would stay, and fail this.
	deadline := time.Now().Add(3 * time.Second)
	for {
		var odd []string
		for a := range threadAffinities(t) {
			if !before[a] {
				odd = append(odd, a)
			}
		}
		if len(odd) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("perflab threads kept a child's affinity %v (before: %v)", odd, before)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// nginx forks its workers at once; they must inherit the server's CPUs.
func TestServerAndWorkersPinned(t *testing.T) {
	if runtime.NumCPU() < 2 {
		testenv.Unavailable(t, "needs 2 CPUs")
	}
	testenv.RequireTool(t, "wrk")
	if _, ok := lookPath("nginx"); !ok {
		testenv.Unavailable(t, "nginx not installed")
	}
	w := &Wrk{}
	env := &probe.Env{Params: w.Defaults(true).Merge(probe.Params{"server_cpus": "1", "workers": "2"}), Dir: t.TempDir(), Log: io.Discard}
	defer w.Teardown(env)
	if err := w.Setup(context.Background(), env); err != nil {
		t.Fatal(err)
	}
	var nginx []proc
	for _, p := range descendants(os.Getpid()) {
		if strings.Contains(p.cmdline, "nginx") {
			nginx = append(nginx, p)
		}
	}
	if len(nginx) < 3 { // master + 2 workers
		t.Fatalf("expected nginx master and 2 workers, got %+v", nginx)
	}
	for _, p := range nginx {
		if got := cpusAllowed(t, filepath.Join("/proc", strconv.Itoa(p.pid), "status")); got != "1" {
			t.Errorf("nginx pid %d (%s) allowed on %q, want 1", p.pid, p.cmdline, got)
		}
	}
	if !strings.Contains(strings.Join(env.Notes, "\n"), "placement: server CPUs 1, client unpinned") {
		t.Errorf("placement not noted: %q", env.Notes)
	}
}

// A server that dies mid-run fails the iteration at once with a message
// naming it, instead of a client waiting forever (redis-benchmark retries
// without end).
func TestServerDeathFailsIteration(t *testing.T) {
	testenv.RequireTool(t, "redis-benchmark")
	testenv.RequireTool(t, "redis-server")
	r := &Redis{}
	env := &probe.Env{Params: r.Defaults(true).Merge(probe.Params{"requests": "100000000"}), Dir: t.TempDir(), Log: io.Discard}
	defer r.Teardown(env)
	if err := r.Setup(context.Background(), env); err != nil {
		t.Fatal(err)
	}
	pgid := r.srv.pgid
	go func() {
		time.Sleep(500 * time.Millisecond)
		_ = syscall.Kill(pgid, syscall.SIGKILL)
	}()
	start := time.Now()
	_, err := r.Iterate(context.Background(), env)
	var te *ToolError
	if !errors.As(err, &te) || te.Tool != "redis-server" || !strings.Contains(err.Error(), "exited during the run") {
		t.Fatalf("got %v", err)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("took %v to notice", d)
	}
}

// Ctrl-C while the database is being initialised: Setup returns, and
// Teardown leaves no process, port or file.
func TestCancelDuringSetupLeavesNothing(t *testing.T) {
	testenv.RequireTool(t, "sysbench")
	if _, ok := lookPath("mariadbd", "mysqld"); !ok {
		testenv.Unavailable(t, "mariadbd not installed")
	}
	for _, after := range []time.Duration{300 * time.Millisecond, 3 * time.Second} {
		o := &OLTP{}
		dir := t.TempDir()
		env := &probe.Env{Params: o.Defaults(true), Dir: dir, Log: io.Discard}
		ctx, cancel := context.WithTimeout(context.Background(), after)
		var started []proc
		var ports map[string]bool
		done := make(chan error)
		go func() { done <- o.Setup(ctx, env) }()
		// Sample what runs until Setup returns.
		ports = map[string]bool{}
	loop:
		for {
			select {
			case err := <-done:
				if err == nil {
					t.Logf("setup finished within %v; teardown still must clean up", after)
				}
				break loop
			case <-time.After(50 * time.Millisecond):
				ps := descendants(os.Getpid())
				started = append(started, ps...)
				for k := range listenPorts(t, ps) {
					ports[k] = true
				}
			}
		}
		cancel()
		if err := o.Teardown(env); err != nil {
			t.Errorf("teardown: %v", err)
		}
		assertNothingLeft(t, "oltp cancelled after "+after.String(), dir, started, ports)
	}
}

func TestToolErrors(t *testing.T) {
	t.Run("missing", func(t *testing.T) {
		t.Setenv("PATH", t.TempDir())
		_, err := need("sysbench")
		if err == nil || !strings.Contains(err.Error(), "sysbench not installed") || !strings.Contains(err.Error(), "install") {
			t.Fatalf("got %v", err)
		}
		for _, p := range []interface{ Available() error }{newSysbenchCPU(), &Fio{}, &Wrk{}, &Redis{}, &Qperf{}, &Iperf3{}, &Sockperf{}, &StressNG{}} {
			if err := p.Available(); err == nil || !strings.Contains(err.Error(), "not installed") {
				t.Errorf("%T: %v", p, err)
			}
		}
	})
	t.Run("too old", func(t *testing.T) {
		dir := t.TempDir()
		t.Setenv("PATH", dir)
		for name, out := range map[string]string{
			"fio":       "fio-2.0.9",
			"iperf3":    "iperf 3.0.11 (cJSON 1.0.2)",
			"stress-ng": "stress-ng, version 0.06.01",
			"sysbench":  "sysbench 0.3.9",
		} {
			if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\necho '"+out+"'\n"), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		for _, p := range []interface{ Available() error }{newSysbenchCPU(), &Fio{}, &Iperf3{}, &StressNG{}} {
			if err := p.Available(); err == nil || !strings.Contains(err.Error(), "is too old") {
				t.Errorf("%T: %v, want a too-old refusal", p, err)
			}
		}
	})
	t.Run("fails", func(t *testing.T) {
		testenv.RequireTool(t, "sysbench")
		var sb sysbench
		if err := sb.available(context.Background()); err != nil {
			t.Fatal(err)
		}
		argv := sb.argv("cpu", 1, time.Second, []string{"--cpu-max-prime=0"}, "run")
		_, err := sb.run(context.Background(), &probe.Env{}, t.TempDir(), argv, time.Minute)
		var te *ToolError
		if !errors.As(err, &te) || te.ExitCode != 1 {
			t.Fatalf("got %v", err)
		}
		msg := err.Error()
		for _, want := range []string{"sysbench", "exit status 1", "Invalid value of cpu-max-prime", "--cpu-max-prime=0", "install"} {
			if !strings.Contains(msg, want) {
				t.Errorf("message %q lacks %q", msg, want)
			}
		}
	})
	t.Run("timeout kills the group", func(t *testing.T) {
		marker := "perflab-test-sleep-" + strconv.Itoa(os.Getpid())
		_, err := runTool(context.Background(), invocation{tool: "sh",
			argv:    []string{"/bin/sh", "-c", "exec -a " + marker + " sleep 30 & sleep 30; echo never"},
			timeout: 300 * time.Millisecond})
		if err == nil || !strings.Contains(err.Error(), "timed out after 300ms") {
			t.Fatalf("got %v", err)
		}
		if left := mentioning(marker); len(left) > 0 {
			t.Errorf("a grandchild survived: %+v", left)
		}
	})
}
