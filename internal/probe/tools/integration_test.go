package tools

import (
	"context"
	"io"
	"math"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/probe"
	"github.com/perflab/perflab/internal/testenv"
)

// runReal runs a probe the way the harness does — Setup, iterations,
// Teardown — against the real tool, checks every declared metric came
// back finite and positive, and that Teardown left no process, listening
// port or file behind.
func runReal(t *testing.T, p probe.Probe, params probe.Params, iterations int) (*probe.Env, []map[string]float64) {
	t.Helper()
	env, got, _ := runRealPorts(t, p, params, iterations)
	return env, got
}

// runServerReal is runReal for a probe that starts a server: the leak
// check is only meaningful if the server's listening port was seen.
func runServerReal(t *testing.T, p probe.Probe, params probe.Params, iterations int) (*probe.Env, []map[string]float64) {
	t.Helper()
	env, got, ports := runRealPorts(t, p, params, iterations)
	if len(ports) == 0 {
		t.Errorf("%s: no listening port of its server was seen during the run", p.Name())
	}
	return env, got
}

// runServerRealAllowZero is runServerReal where the metrics zeroOK may be 0
// (a pass/fail verdict).
func runServerRealAllowZero(t *testing.T, p probe.Probe, params probe.Params, iterations int, zeroOK ...string) (*probe.Env, []map[string]float64) {
	t.Helper()
	env, got, ports := runRealPorts(t, p, params, iterations, zeroOK...)
	if len(ports) == 0 {
		t.Errorf("%s: no listening port of its server was seen during the run", p.Name())
	}
	return env, got
}

func runRealPorts(t *testing.T, p probe.Probe, params probe.Params, iterations int, zeroOK ...string) (*probe.Env, []map[string]float64, map[string]bool) {
	t.Helper()
	dir := t.TempDir()
	env := &probe.Env{Params: p.Defaults(true).Merge(params), Dir: dir, NCPU: 2, Log: io.Discard}
	ms, err := p.Metrics(env.Params)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var got []map[string]float64
	setupErr := p.Setup(ctx, env)
	started := descendants(os.Getpid())
	ports := listenPorts(t, started)
	if setupErr == nil {
		for i := 0; i < iterations; i++ {
			v, err := p.Iterate(ctx, env)
			if err != nil {
				t.Errorf("%s iteration %d: %v", p.Name(), i, err)
				break
			}
			got = append(got, v)
		}
	} else {
		t.Errorf("%s setup: %v", p.Name(), setupErr)
	}
	if err := p.Teardown(env); err != nil {
		t.Errorf("%s teardown: %v", p.Name(), err)
	}
	assertNothingLeft(t, p.Name(), dir, started, ports)
	for i, v := range got {
		if len(v) != len(ms) {
			t.Errorf("%s iteration %d: %d values for %d metrics", p.Name(), i, len(v), len(ms))
		}
		for _, m := range ms {
			x, ok := v[m.Name]
			if !ok || math.IsNaN(x) || math.IsInf(x, 0) || x < 0 || x == 0 && !slices.Contains(zeroOK, m.Name) {
				t.Errorf("%s iteration %d: %s = %v (present %v)", p.Name(), i, m.Name, x, ok)
			}
		}
	}
	if env.ToolVersion == "" || len(env.Command) == 0 {
		t.Errorf("%s: tool version %q, command %q not recorded", p.Name(), env.ToolVersion, env.Command)
	}
	return env, got, ports
}

// assertNothingLeft: the processes the probe started are gone, nothing
// mentions its directory, its ports are free and its files removed (the
// scratch directory itself belongs to the harness).
func assertNothingLeft(t *testing.T, name, dir string, started []proc, ports map[string]bool) {
	t.Helper()
	if left := alive(started); len(left) > 0 {
		t.Errorf("%s: processes left after teardown: %+v", name, left)
	}
	if left := mentioning(dir); len(left) > 0 {
		t.Errorf("%s: processes still mention %s: %+v", name, dir, left)
	}
	if b := stillBound(t, ports); len(b) > 0 {
		t.Errorf("%s: ports still bound after teardown: %v", name, b)
	}
	if ents, _ := os.ReadDir(dir); len(ents) > 0 {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Errorf("%s: files left in the scratch directory: %v", name, names)
	}
}

func TestSysbenchReal(t *testing.T) {
	testenv.RequireTool(t, "sysbench")
	runReal(t, newSysbenchCPU(), probe.Params{"threads": "1,2"}, 2)
	runReal(t, newSysbenchMemory(), probe.Params{"mode": "seq", "oper": "read,write"}, 2)
	runReal(t, newSysbenchThreads(), probe.Params{"threads": "4"}, 2)
	runReal(t, newSysbenchMutex(), probe.Params{"mutex_locks": "2000"}, 2)
	env, _ := runReal(t, newSysbenchFileIO(), probe.Params{"size": "16MiB", "mode": "seqwr,rndrd"}, 2)
	if !strings.Contains(strings.Join(env.Notes, "\n"), "prepare") {
		t.Errorf("fileio notes do not show the prepare command: %q", env.Notes)
	}
}

func TestOLTPReal(t *testing.T) {
	testenv.RequireTool(t, "sysbench")
	if _, ok := lookPath("mariadbd", "mysqld"); !ok {
		testenv.Unavailable(t, "mariadbd not installed (scripts/test installs mariadb-server)")
	}
	env, got := runServerReal(t, &OLTP{}, probe.Params{"threads": "8", "table_size": "1000", "duration": "1s"}, 2)
	if env.Command[1] != "oltp_point_select" || !strings.Contains(strings.Join(env.Command, " "), "--mysql-host=127.0.0.1") {
		t.Errorf("command %q", env.Command)
	}
	// Point selects on a cached table: thousands per second even on a busy CI host.
	for _, v := range got {
		if v["tps"] < 100 {
			t.Errorf("tps %v implausibly low", v["tps"])
		}
	}
}

func TestFioReal(t *testing.T) {
	testenv.RequireTool(t, "fio")
	runReal(t, &Fio{}, probe.Params{"size": "16MiB", "jobs": "read,randwrite"}, 2)
}

func TestWrkNginxReal(t *testing.T) {
	testenv.RequireTool(t, "wrk")
	if _, ok := lookPath("nginx"); !ok {
		testenv.Unavailable(t, "nginx not installed (scripts/test installs nginx-light)")
	}
	env, got := runServerReal(t, &Wrk{}, probe.Params{"duration": "1s", "connections": "10"}, 1)
	// Short connections cost a TCP handshake per request: slower than keep-alive.
	for _, v := range got {
		if v["short.requests_per_sec"] >= v["keepalive.requests_per_sec"] {
			t.Logf("short %v ≥ keep-alive %v req/s (possible on a loaded host)", v["short.requests_per_sec"], v["keepalive.requests_per_sec"])
		}
	}
	if env.Command[0] == "" || !strings.HasSuffix(env.Command[0], "wrk") {
		t.Errorf("command %q", env.Command)
	}
}

func TestRedisReal(t *testing.T) {
	testenv.RequireTool(t, "redis-benchmark")
	testenv.RequireTool(t, "redis-server")
	env, _ := runServerReal(t, &Redis{}, probe.Params{"requests": "20000", "tests": "ping,set,get"}, 2)
	if !strings.Contains(strings.Join(env.Command, " "), "-P 16 -d 1000 -c 50") {
		t.Errorf("command %q is not seed 002's", env.Command)
	}
}

func TestQperfReal(t *testing.T) {
	testenv.RequireTool(t, "qperf")
	runServerReal(t, &Qperf{}, probe.Params{"tests": "tcp_bw,udp_lat"}, 1)
}

func TestIperf3Real(t *testing.T) {
	testenv.RequireTool(t, "iperf3")
	runServerReal(t, &Iperf3{}, nil, 2)
}

func TestSockperfReal(t *testing.T) {
	testenv.RequireTool(t, "sockperf")
	runServerReal(t, &Sockperf{}, probe.Params{"duration": "1s"}, 2)
	runServerReal(t, &Sockperf{}, probe.Params{"duration": "1s", "protocol": "tcp"}, 1)
}

func TestStressNGReal(t *testing.T) {
	testenv.RequireTool(t, "stress-ng")
	runReal(t, &StressNG{}, probe.Params{"stressors": "cpu,switch"}, 1)
}

// dd through the page cache and around it: the cached read is served from
// memory and the direct write is not, so they differ (a real device, or
// even a loaded VM's virtual disk, is far slower than memory).
func TestDDReal(t *testing.T) {
	testenv.RequireTool(t, "dd")
	_, got := runReal(t, &DD{}, probe.Params{"count": "32"}, 2)
	for _, v := range got {
		if v["read_cached.mb_per_sec"] <= v["write_direct.mb_per_sec"] {
			t.Logf("cached read %v ≤ direct write %v MB/s (possible on a loaded host)", v["read_cached.mb_per_sec"], v["write_direct.mb_per_sec"])
		}
	}
	// Reads alone lay the file out first.
	runReal(t, &DD{}, probe.Params{"count": "8", "tests": "read"}, 1)
}

func TestEtcdReal(t *testing.T) {
	testenv.RequireTool(t, "etcd")
	env, got := runServerReal(t, &Etcd{}, probe.Params{"duration": "300ms", "clients": "4", "keyspace": "50", "value_sizes": "64,1024"}, 2)
	for _, v := range got {
		if v["put_seq.v64.p99"] < v["put_seq.v64.p50"] {
			t.Errorf("p99 %v < p50 %v", v["put_seq.v64.p99"], v["put_seq.v64.p50"])
		}
	}
	if !strings.HasSuffix(env.Command[0], "etcd") {
		t.Errorf("command %q", env.Command)
	}
}

func TestEtcdCheckPerfReal(t *testing.T) {
	testenv.Short(t) // 60 s
	testenv.RequireTool(t, "etcd")
	testenv.RequireTool(t, "etcdctl")
	_, got := runServerRealAllowZero(t, &EtcdCheckPerf{}, nil, 1, "pass")
	if len(got) == 1 && got[0]["throughput"] <= 0 {
		t.Errorf("throughput %v", got[0]["throughput"])
	}
}

// A sweep measures every level against one server and returns the curve:
// one value per metric and level, the level in the name.
func TestOLTPSweepReal(t *testing.T) {
	testenv.RequireTool(t, "sysbench")
	if _, ok := lookPath("mariadbd", "mysqld"); !ok {
		testenv.Unavailable(t, "mariadbd not installed (scripts/test installs mariadb-server)")
	}
	_, got := runServerReal(t, &OLTP{}, probe.Params{"concurrency": "1,20,100", "table_size": "1000", "duration": "1s"}, 1)
	for _, v := range got {
		for _, l := range []string{"c1", "c20", "c100"} {
			if v["tps."+l] < 50 {
				t.Errorf("tps.%s = %v", l, v["tps."+l])
			}
		}
	}
}

func TestRedisSweepReal(t *testing.T) {
	testenv.RequireTool(t, "redis-benchmark")
	testenv.RequireTool(t, "redis-server")
	env, got := runServerReal(t, &Redis{}, probe.Params{"requests": "20000", "tests": "set,get", "concurrency": "1,20"}, 1)
	if len(got) == 1 && (got[0]["set.requests_per_sec.c1"] <= 0 || got[0]["get.requests_per_sec.c20"] <= 0) {
		t.Errorf("curve %v", got[0])
	}
	if !strings.Contains(strings.Join(env.Notes, "\n"), "one redis-benchmark process") {
		t.Errorf("notes %q", env.Notes)
	}
}

// seqwr for less time than the files take to write leaves them short;
// the read tests after it (this iteration's and the next's) still run.
func TestSysbenchFileIOSeqwrThenRead(t *testing.T) {
	testenv.Short(t) // writes 3 GiB
	testenv.RequireTool(t, "sysbench")
	runReal(t, newSysbenchFileIO(), probe.Params{"mode": "seqwr,seqrd", "size": "3GiB", "files": "2", "duration": "1s"}, 2)
}
