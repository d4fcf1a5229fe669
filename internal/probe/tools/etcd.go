package tools

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/perflab/perflab/internal/probe"
	"github.com/perflab/perflab/internal/run"
)

// Etcd measures a private etcd (seed 002 benchmarked etcd's
// "transactions, watch" next to nginx, redis and MySQL).
//
// The client, and why. etcd's own load generator, tools/benchmark, speaks
// gRPC through clientv3, but Debian's etcd-client ships only etcdctl, and
// driving gRPC from perflab would mean the etcd clientv3 module and its
// gRPC and protobuf tree, far outside perflab's few dependencies. etcd
// also serves its v3 API as JSON over HTTP (the grpc-gateway, /v3/kv/put,
// /v3/kv/range, /v3/kv/txn, /v3/watch, in every etcd since 3.3 under
// /v3beta and since 3.4 under /v3), so perflab drives that with net/http:
// `clients` goroutines, each with its own keep-alive connection, issue
// requests back to back and time each one. The requests are the same
// operations the benchmark tool sends (put, range with and without
// serializable, a txn with one compare and one put, a watch), and every
// one passes through etcd's gRPC server and raft, but the gateway adds
// JSON and HTTP/1.1 translation in the server: perflab's ops/s are lower
// than tools/benchmark's on the same host and compare only with perflab's
// own etcd runs (same version of etcd, same parameters). The standard
// pass/fail, `etcdctl check perf`, runs the shipped gRPC client; see
// EtcdCheckPerf.
//
// The server. Setup starts `etcd` on 127.0.0.1 with a data directory in
// the run's scratch directory, its own client and peer ports, a one-member
// cluster and revision auto-compaction, and waits for /health. It gets the
// lifecycle of every private server (server.go): own process group,
// SIGTERM then SIGKILL on Teardown, parent-death signal, directory
// removed. The server's address is the one seam between launching and
// measuring (etcdServer.base): with a server on another host the same
// workloads run against that address.
type Etcd struct {
	path, version string
	cfg           etcdConfig
	etcdServer
}

type etcdConfig struct {
	tests      []string
	valueSizes []int
	clients    int
	keyspace   int
	duration   time.Duration
	levels     []int // concurrency sweep (sweep.go)
	pl         placement
}

var etcdTests = []string{"put_seq", "put_random", "range_linearizable", "range_serializable", "txn", "watch"}

func (*Etcd) Name() string { return "etcd" }

func (*Etcd) Doc() string {
	return "etcd v3 operations per second and latency percentiles against a private one-member etcd on loopback " +
		"(data directory in the scratch directory, so on --dir's filesystem: etcd fsyncs its WAL on every write), " +
		"driven over etcd's JSON/HTTP gateway by `clients` concurrent keep-alive connections for `duration` per " +
		"test: put_seq and put_random (keys k00000000… in order, or uniformly at random among `keyspace`; once per " +
		"value size in `value_sizes`), range_linearizable and range_serializable (one key, quorum read or local " +
		"read), txn (compare mod_revision > 0, then put), watch (one watch stream on a prefix while `clients` " +
		"writers put into it; latency from sending the put to receiving its event). Latencies are client-side " +
		"round trips in ms. The gateway's JSON translation makes the numbers lower than etcd's gRPC benchmark tool: " +
		"compare them with perflab's own etcd runs."
}

func (*Etcd) Defaults(quick bool) probe.Params {
	p := probe.Params{"tests": strings.Join(etcdTests, ","), "value_sizes": "256,4096", "clients": "16",
		"keyspace": "1000", "duration": "3s", sweepKey: ""}
	if quick {
		p["value_sizes"], p["duration"] = "256", "1s"
	}
	// The client is perflab itself: only the server can be pinned.
	p = withPlacement(p)
	delete(p, "client_cpus")
	return p
}

func (e *Etcd) parse(p probe.Params) (etcdConfig, error) {
	const n = "etcd"
	var c etcdConfig
	if err := checkKnown(n, p, e.Defaults(false)); err != nil {
		return c, err
	}
	var err error
	if c.tests, err = listParam(n, p, "tests", strings.Join(etcdTests, ","), etcdTests); err != nil {
		return c, err
	}
	// 1.5 MiB is etcd's default request size limit.
	if c.valueSizes, err = intsParam(n, p, "value_sizes", []int{256, 4096}, 1, 1<<20); err != nil {
		return c, err
	}
	if c.clients, err = intParam(n, p, "clients", 16, 1, 4096); err != nil {
		return c, err
	}
	if c.keyspace, err = intParam(n, p, "keyspace", 1000, 1, 10_000_000); err != nil {
		return c, err
	}
	if c.duration, err = p.DurationIn(n, "duration", 3*time.Second, 100*time.Millisecond, 10*time.Minute); err != nil {
		return c, err
	}
	if c.levels, err = sweepParam(n, p); err != nil {
		return c, err
	}
	c.pl, err = placementParams(n, p)
	return c, err
}

// etcdMetricTests are the tests as metric prefixes: a put once per value
// size ("put_seq.v256").
func (c etcdConfig) metricTests() []string {
	var out []string
	for _, t := range c.tests {
		if strings.HasPrefix(t, "put_") {
			for _, v := range c.valueSizes {
				out = append(out, t+".v"+strconv.Itoa(v))
			}
			continue
		}
		out = append(out, t)
	}
	return out
}

func (e *Etcd) Metrics(p probe.Params) ([]run.Metric, error) {
	c, err := e.parse(p)
	if err != nil {
		return nil, err
	}
	var ms []run.Metric
	for _, t := range c.metricTests() {
		ms = append(ms,
			run.Metric{Name: t + ".ops_per_sec", Unit: "ops/s", Better: run.Higher},
			run.Metric{Name: t + ".p50", Unit: "ms", Better: run.Lower},
			run.Metric{Name: t + ".p99", Unit: "ms", Better: run.Lower})
	}
	return sweepMetrics(ms, c.levels, "clients"), nil
}

// etcdFindServer finds etcd, which must serve the v3 gateway under /v3
// (3.4 and newer; 3.3 had it under /v3beta only).
func etcdFindServer(ctx context.Context) (path, version string, err error) {
	return findTool(ctx, "etcd", "3.4", "older etcd serves the JSON gateway under /v3beta, not /v3")
}

func (e *Etcd) Available() error {
	var err error
	e.path, e.version, err = etcdFindServer(context.Background())
	return err
}

func (e *Etcd) Setup(ctx context.Context, env *probe.Env) error {
	c, err := e.parse(env.Params)
	if err != nil {
		return err
	}
	e.cfg = c
	if err := e.Available(); err != nil {
		return err
	}
	env.ToolVersion = e.version
	env.Notes = append(env.Notes, placementNote(c.pl)+" (the client is perflab itself)",
		"client: perflab over etcd's JSON/HTTP gateway (numbers compare with perflab's etcd runs, not with etcd's gRPC benchmark tool)")
	if err := e.startLocal(ctx, env, e.path, c.pl.server); err != nil {
		return err
	}
	recordCommand(env, e.srv.argv)
	e.client(c.clients)
	// Every key a range or txn may touch exists, with the first value size.
	if slices.ContainsFunc(c.tests, func(t string) bool { return !strings.HasPrefix(t, "put_") }) {
		if err := e.fill(ctx, c.keyspace, c.valueSizes[0], c.clients); err != nil {
			return e.srv.failed(err)
		}
	}
	return nil
}

// etcdServer is a private etcd and a client for its gateway. base is the
// address every workload uses; startLocal is the only code that knows the
// server runs here.
type etcdServer struct {
	privateServer
	peerPort int
	base     string // "http://127.0.0.1:2379"
	hc       *http.Client
}

// startLocal starts a one-member etcd in its own directory of the scratch
// directory and waits until /health says true.
func (s *etcdServer) startLocal(ctx context.Context, env *probe.Env, path string, cpus []int) error {
	if err := s.prepare(env, "etcd", false); err != nil {
		return err
	}
	var err error
	if s.peerPort, err = freePort(false); err != nil {
		return err
	}
	client := "http://127.0.0.1:" + strconv.Itoa(s.port)
	peer := "http://127.0.0.1:" + strconv.Itoa(s.peerPort)
	argv := []string{path, "--name", "perflab", "--data-dir", filepath.Join(s.dir, "data"),
		"--listen-client-urls", client, "--advertise-client-urls", client,
		"--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
		"--initial-cluster", "perflab=" + peer, "--initial-cluster-state", "new",
		// Bound the database: puts overwrite a fixed key space, and the
		// revisions they leave are compacted away.
		"--auto-compaction-mode", "revision", "--auto-compaction-retention", "10000",
		"--logger", "zap", "--log-outputs", "stderr"}
	s.base = client
	s.client(1)
	return s.start(ctx, env, "etcd", argv, cpus, s.healthy)
}

// client sets up the HTTP client for n concurrent connections.
func (s *etcdServer) client(n int) {
	if s.hc != nil {
		s.hc.CloseIdleConnections()
	}
	tr := &http.Transport{
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
		MaxIdleConns:        n + 2,
		MaxIdleConnsPerHost: n + 2,
		MaxConnsPerHost:     0,
		IdleConnTimeout:     time.Minute,
		DisableCompression:  true,
	}
	s.hc = &http.Client{Transport: tr}
}

// healthy is the readiness check: GET /health answers {"health":"true"}.
func (s *etcdServer) healthy(ctx context.Context) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.base+"/health", nil)
	if err != nil {
		return err
	}
	resp, err := s.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var h struct {
		Health string `json:"health"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<16)).Decode(&h); err != nil {
		return fmt.Errorf("/health: %w", err)
	}
	if h.Health != "true" {
		return fmt.Errorf("/health says %q", h.Health)
	}
	return nil
}

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

// etcdKey is key i of the key space.
func etcdKey(i int) string { return fmt.Sprintf("k%08d", i) }

// call POSTs a JSON body to a v3 gateway endpoint and drains the answer;
// a non-200 status is an error carrying etcd's message.
func (s *etcdServer) call(ctx context.Context, endpoint string, body []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.base+endpoint, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := s.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fmt.Errorf("%s: HTTP %d: %s", endpoint, resp.StatusCode, strings.TrimSpace(string(msg)))
	}
	_, err = io.Copy(io.Discard, resp.Body)
	return err
}

func putBody(key, b64val string) []byte {
	return []byte(`{"key":"` + b64(key) + `","value":"` + b64val + `"}`)
}

// fill writes every key of the key space once.
func (s *etcdServer) fill(ctx context.Context, keyspace, valueSize, clients int) error {
	val := b64(strings.Repeat("v", valueSize))
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make([]error, min(clients, keyspace))
	for w := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= keyspace || ctx.Err() != nil {
					return
				}
				if err := s.call(ctx, "/v3/kv/put", putBody(etcdKey(i), val)); err != nil {
					errs[w] = err
					return
				}
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	return ctx.Err()
}

// opStats are one test's operations: how many completed in how long, and
// each one's latency.
type opStats struct {
	ops     int
	elapsed time.Duration
	lat     []time.Duration
}

// etcdSummary turns stats into ops/s and the 50th and 99th percentile
// latencies in ms (nearest rank).
func etcdSummary(st opStats) (opsPerSec, p50, p99 float64, err error) {
	if st.ops == 0 || len(st.lat) == 0 || st.elapsed <= 0 {
		return 0, 0, 0, fmt.Errorf("no operation completed")
	}
	slices.Sort(st.lat)
	rank := func(q float64) float64 {
		i := int(q*float64(len(st.lat))+0.999999) - 1
		i = max(0, min(i, len(st.lat)-1))
		return float64(st.lat[i]) / 1e6
	}
	return float64(st.ops) / st.elapsed.Seconds(), rank(0.50), rank(0.99), nil
}

// closedLoop runs n workers issuing op back to back for d and collects
// every latency. op gets the worker and its sequence number.
func closedLoop(ctx context.Context, n int, d time.Duration, op func(ctx context.Context, w, i int) error) (opStats, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	lats := make([][]time.Duration, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	start := time.Now()
	deadline := start.Add(d)
	for w := 0; w < n; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				t0 := time.Now()
				if !t0.Before(deadline) || ctx.Err() != nil {
					return
				}
				if err := op(ctx, w, i); err != nil {
					if ctx.Err() == nil {
						errs[w] = err
						cancel()
					}
					return
				}
				lats[w] = append(lats[w], time.Since(t0))
			}
		}()
	}
	wg.Wait()
	st := opStats{elapsed: time.Since(start)}
	for _, l := range lats {
		st.lat = append(st.lat, l...)
	}
	st.ops = len(st.lat)
	if err := errors.Join(errs...); err != nil {
		return st, err
	}
	return st, nil
}

func (e *Etcd) Iterate(ctx context.Context, env *probe.Env) (map[string]float64, error) {
	clients := e.cfg.clients
	defer func() { e.cfg.clients = clients }()
	return sweepIterate(ctx, e.cfg.levels, func(l int) {
		e.cfg.clients = l
		e.client(l)
	}, func(ctx context.Context) (map[string]float64, error) {
		return e.once(ctx)
	})
}

func (e *Etcd) once(ctx context.Context) (map[string]float64, error) {
	gctx, cancel := e.srv.guard(ctx)
	defer cancel()
	out := map[string]float64{}
	c := e.cfg
	for _, t := range c.tests {
		sizes := []int{c.valueSizes[0]}
		if strings.HasPrefix(t, "put_") {
			sizes = c.valueSizes
		}
		for _, size := range sizes {
			name := t
			if strings.HasPrefix(t, "put_") {
				name += ".v" + strconv.Itoa(size)
			}
			st, err := e.runTest(gctx, t, size)
			if err = e.srv.failed(err); err != nil {
				if ctx.Err() != nil {
					return nil, ctx.Err()
				}
				return nil, fmt.Errorf("etcd %s: %w", name, err)
			}
			ops, p50, p99, err := etcdSummary(st)
			if err != nil {
				return nil, fmt.Errorf("etcd %s: %w", name, err)
			}
			out[name+".ops_per_sec"], out[name+".p50"], out[name+".p99"] = ops, p50, p99
		}
	}
	return out, nil
}

// runTest runs one workload for the configured duration.
func (e *Etcd) runTest(ctx context.Context, test string, size int) (opStats, error) {
	c := e.cfg
	val := b64(strings.Repeat("v", size))
	switch test {
	case "put_seq":
		var next atomic.Int64
		return closedLoop(ctx, c.clients, c.duration, func(ctx context.Context, _, _ int) error {
			i := int(next.Add(1)-1) % c.keyspace
			return e.call(ctx, "/v3/kv/put", putBody(etcdKey(i), val))
		})
	case "put_random":
		rngs := make([]*rand.Rand, c.clients)
		for w := range rngs {
			rngs[w] = rand.New(rand.NewPCG(uint64(w), uint64(time.Now().UnixNano())))
		}
		return closedLoop(ctx, c.clients, c.duration, func(ctx context.Context, w, _ int) error {
			return e.call(ctx, "/v3/kv/put", putBody(etcdKey(rngs[w].IntN(c.keyspace)), val))
		})
	case "range_linearizable", "range_serializable":
		ser := strconv.FormatBool(test == "range_serializable")
		return closedLoop(ctx, c.clients, c.duration, func(ctx context.Context, w, i int) error {
			k := (w*7919 + i) % c.keyspace
			return e.call(ctx, "/v3/kv/range", []byte(`{"key":"`+b64(etcdKey(k))+`","serializable":`+ser+`}`))
		})
	case "txn":
		return closedLoop(ctx, c.clients, c.duration, func(ctx context.Context, w, i int) error {
			k := b64(etcdKey((w*7919 + i) % c.keyspace))
			body := `{"compare":[{"target":"MOD","key":"` + k + `","result":"GREATER","mod_revision":"0"}],` +
				`"success":[{"request_put":{"key":"` + k + `","value":"` + val + `"}}]}`
			return e.call(ctx, "/v3/kv/txn", []byte(body))
		})
	case "watch":
		return e.watchLatency(ctx, size)
	}
	return opStats{}, fmt.Errorf("unknown test %q", test)
}

// watchEvents is the part of a watch response message perflab reads.
type watchEvents struct {
	Result struct {
		Created bool `json:"created"`
		Events  []struct {
			KV struct {
				Value string `json:"value"`
			} `json:"kv"`
		} `json:"events"`
	} `json:"result"`
	Error *struct {
		Message string `json:"message"`
	} `json:"error"`
}

// watchLatency opens one watch on a fresh prefix, has `clients` writers
// put into it for the test's duration, and times each put from just
// before it is sent to the arrival of its event. The value carries the
// send time (ns since the test began), padded to the value size.
func (e *Etcd) watchLatency(ctx context.Context, size int) (opStats, error) {
	c := e.cfg
	prefix := fmt.Sprintf("w%d/", time.Now().UnixNano())
	wctx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	body := `{"create_request":{"key":"` + b64(prefix) + `","range_end":"` + b64(prefix[:len(prefix)-1]+"0") + `"}}`
	req, err := http.NewRequestWithContext(wctx, http.MethodPost, e.base+"/v3/watch", strings.NewReader(body))
	if err != nil {
		return opStats{}, err
	}
	resp, err := e.hc.Do(req)
	if err != nil {
		return opStats{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return opStats{}, fmt.Errorf("/v3/watch: HTTP %d", resp.StatusCode)
	}
	dec := json.NewDecoder(resp.Body)
	var first watchEvents
	if err := dec.Decode(&first); err != nil || !first.Result.Created {
		return opStats{}, fmt.Errorf("/v3/watch: no created message (%v)", err)
	}
	base := time.Now()
	var lat []time.Duration
	var received atomic.Int64
	recvDone := make(chan error, 1)
	go func() {
		for {
			var m watchEvents
			if err := dec.Decode(&m); err != nil {
				recvDone <- err
				return
			}
			if m.Error != nil {
				recvDone <- fmt.Errorf("watch: %s", m.Error.Message)
				return
			}
			now := time.Since(base)
			for _, ev := range m.Result.Events {
				raw, err := base64.StdEncoding.DecodeString(ev.KV.Value)
				if err != nil {
					recvDone <- fmt.Errorf("watch event value: %w", err)
					return
				}
				ns, err := strconv.ParseInt(strings.TrimRight(string(raw), " "), 10, 64)
				if err != nil {
					recvDone <- fmt.Errorf("watch event value %q: %w", raw, err)
					return
				}
				lat = append(lat, now-time.Duration(ns))
				received.Add(1)
			}
		}
	}()
	st, perr := closedLoop(ctx, c.clients, c.duration, func(ctx context.Context, w, i int) error {
		v := strconv.FormatInt(int64(time.Since(base)), 10)
		if len(v) < size {
			v += strings.Repeat(" ", size-len(v))
		}
		return e.call(ctx, "/v3/kv/put", putBody(prefix+strconv.Itoa(w)+"/"+strconv.Itoa(i), b64(v)))
	})
	// Every acknowledged put's event is on its way: wait for them (for
	// at most 2 s), then close the stream, which ends the reader.
	wait := time.Now().Add(2 * time.Second)
	var early error
	for received.Load() < int64(st.ops) && time.Now().Before(wait) && early == nil {
		select {
		case early = <-recvDone:
		case <-time.After(2 * time.Millisecond):
		}
	}
	stopWatch()
	if early == nil {
		<-recvDone // the reader owns lat until it returns
	} else if ctx.Err() == nil {
		return opStats{}, fmt.Errorf("watch stream ended early: %w", early)
	}
	if perr != nil {
		return opStats{}, perr
	}
	if ctx.Err() != nil {
		return opStats{}, ctx.Err()
	}
	if len(lat) < st.ops {
		return opStats{}, fmt.Errorf("watch delivered %d of %d events within 2 s", len(lat), st.ops)
	}
	return opStats{ops: len(lat), elapsed: st.elapsed, lat: lat}, nil
}

func (e *Etcd) Teardown(*probe.Env) error {
	if e.hc != nil {
		e.hc.CloseIdleConnections()
	}
	return e.teardown()
}

// EtcdCheckPerf is etcd's own pass/fail: `etcdctl check perf` (the gRPC
// client Debian ships) against the same kind of private etcd as Etcd. Its
// workload models run for 60 s each (load s: 50 clients writing 150
// writes/s; m, l, xl more) and check throughput, the slowest request and
// the spread of latencies against fixed limits.
type EtcdCheckPerf struct {
	serverPath, ctlPath, version string
	load                         string
	pl                           placement
	etcdServer
}

func (*EtcdCheckPerf) Name() string { return "etcd.check-perf" }

func (*EtcdCheckPerf) Doc() string {
	return "`etcdctl check perf --load L` against a private one-member etcd on loopback (as the etcd probe starts " +
		"it): etcd's standard 60-second pass/fail check of write throughput, slowest request and latency spread. " +
		"pass is 1 when etcdctl says PASS and 0 when FAIL; throughput (writes/s), slowest (s) and stddev (s) are " +
		"the figures it prints. The check fails on a disk whose fsync is slow, as etcd's own documentation warns."
}

func (*EtcdCheckPerf) Defaults(bool) probe.Params {
	return withPlacement(probe.Params{"load": "s"})
}

func (c *EtcdCheckPerf) parse(p probe.Params) error {
	if err := checkKnown("etcd.check-perf", p, c.Defaults(false)); err != nil {
		return err
	}
	c.load = p["load"]
	if c.load == "" {
		c.load = "s"
	}
	switch c.load {
	case "s", "m", "l", "xl":
	default:
		return paramError("etcd.check-perf", "load", "%q is not one of s, m, l, xl", c.load)
	}
	var err error
	c.pl, err = placementParams("etcd.check-perf", p)
	return err
}

func (c *EtcdCheckPerf) Metrics(p probe.Params) ([]run.Metric, error) {
	if err := c.parse(p); err != nil {
		return nil, err
	}
	return []run.Metric{
		{Name: "pass", Unit: "", Better: run.Higher},
		{Name: "throughput", Unit: "writes/s", Better: run.Higher},
		{Name: "slowest", Unit: "s", Better: run.Lower},
		{Name: "stddev", Unit: "s", Better: run.Lower},
	}, nil
}

func (c *EtcdCheckPerf) Available() error {
	var err error
	if c.serverPath, _, err = etcdFindServer(context.Background()); err != nil {
		return err
	}
	c.ctlPath, c.version, err = findTool(context.Background(), "etcdctl", "3.4", "check perf needs the v3 API of etcdctl 3.4")
	return err
}

func (c *EtcdCheckPerf) Setup(ctx context.Context, env *probe.Env) error {
	if err := c.parse(env.Params); err != nil {
		return err
	}
	if err := c.Available(); err != nil {
		return err
	}
	env.ToolVersion = c.version
	env.Notes = append(env.Notes, placementNote(c.pl))
	return c.startLocal(ctx, env, c.serverPath, c.pl.server)
}

func (c *EtcdCheckPerf) Iterate(ctx context.Context, env *probe.Env) (map[string]float64, error) {
	argv := []string{c.ctlPath, "--endpoints", strings.TrimPrefix(c.base, "http://"), "check", "perf", "--load", c.load,
		"--prefix", "/perflab-check-perf/", "--auto-compact", "--auto-defrag"}
	recordCommand(env, argv)
	res, err := c.srv.runClient(ctx, invocation{tool: "etcdctl", argv: argv, env: []string{"ETCDCTL_API=3"},
		cpus: c.pl.client, timeout: 5 * time.Minute})
	r, perr := ParseEtcdCheckPerf(string(res.stdout))
	var te *ToolError
	// A failed check exits 1 after printing its verdict: that is a result.
	if err != nil && !(errors.As(err, &te) && te.ExitCode == 1 && perr == nil) {
		return nil, err
	}
	if perr != nil {
		return nil, &ToolError{Tool: "etcdctl", Command: argv, ExitCode: res.exitCode, Reason: perr.Error(), Tail: tailOf(res)}
	}
	pass := 0.0
	if r.Pass {
		pass = 1
	}
	return map[string]float64{"pass": pass, "throughput": r.Throughput, "slowest": r.Slowest, "stddev": r.Stddev}, nil
}

func (c *EtcdCheckPerf) Teardown(*probe.Env) error { return c.teardown() }
