package tools

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/perflab/perflab/internal/probe"
	"github.com/perflab/perflab/internal/run"
)

// Wrk measures a private nginx serving one static file with wrk, over
// keep-alive connections ("long connections") and with a new connection
// per request ("short connections"), the two nginx rows of seed 004.
type Wrk struct {
	wrkPath, nginxPath string
	wrkVersion         string
	nginxVersion       string
	modes              []string
	conns, threads     int
	workers            int
	body               int64
	dur                time.Duration
	pl                 placement

	privateServer
}

func (*Wrk) Name() string { return "wrk.nginx" }

func (*Wrk) Doc() string {
	return "HTTP requests per second of nginx: Setup writes a private nginx.conf (daemon off, access log off, " +
		"one static file of body_size bytes, 127.0.0.1 at a free port, temp paths and logs in the scratch " +
		"directory) and starts `nginx -p DIR -c DIR/nginx.conf -e DIR/error.log`; each iteration runs `wrk -t T " +
		"-c C -d S --latency URL` for keep-alive connections and the same with `-H 'Connection: close'` for a new " +
		"TCP connection per request. Requests/s and the 99th percentile latency as wrk prints them."
}

func (*Wrk) Defaults(quick bool) probe.Params {
	p := probe.Params{"modes": "keepalive,short", "connections": "100", "threads": "2", "workers": "0",
		"body_size": "612", "duration": "2s"}
	if quick {
		p["duration"] = "1s"
	}
	return withPlacement(p)
}

func (w *Wrk) parse(p probe.Params) error {
	const n = "wrk.nginx"
	if err := checkKnown(n, p, w.withPeer(w.Defaults(false))); err != nil {
		return err
	}
	var err error
	if w.modes, err = listParam(n, p, "modes", "keepalive,short", []string{"keepalive", "short"}); err != nil {
		return err
	}
	if w.conns, err = intParam(n, p, "connections", 100, 1, 100000); err != nil {
		return err
	}
	if w.threads, err = intParam(n, p, "threads", 2, 1, 1024); err != nil {
		return err
	}
	if w.threads > w.conns {
		return paramError(n, "threads", "%d threads need at least as many connections (connections=%d)", w.threads, w.conns)
	}
	if w.workers, err = intParam(n, p, "workers", 0, 0, 1024); err != nil {
		return err
	}
	if w.body, err = sizeParam(n, p, "body_size", 612, 0, 64<<20); err != nil {
		return err
	}
	if w.dur, err = runDuration(n, p, 2*time.Second); err != nil {
		return err
	}
	w.pl, err = placementParams(n, p)
	return err
}

func (w *Wrk) Metrics(p probe.Params) ([]run.Metric, error) {
	if err := w.parse(p); err != nil {
		return nil, err
	}
	var ms []run.Metric
	for _, m := range w.modes {
		ms = append(ms,
			run.Metric{Name: m + ".requests_per_sec", Unit: "req/s", Better: run.Higher},
			run.Metric{Name: m + ".latency_p99", Unit: "ms", Better: run.Lower})
	}
	return ms, nil
}

func (w *Wrk) Available() error {
	ctx := context.Background()
	var err error
	if w.wrkPath, err = need("wrk"); err != nil {
		return err
	}
	if w.nginxPath, err = need("nginx"); err != nil {
		return err
	}
	if w.wrkVersion, err = toolVersion(ctx, "wrk", w.wrkPath); err != nil {
		return err
	}
	if w.nginxVersion, err = toolVersion(ctx, "nginx", w.nginxPath); err != nil {
		return err
	}
	// Before 1.19.5 nginx opens its compiled-in error log (a system
	// path) before reading our config; -e prevents that.
	if !versionAtLeast(w.nginxVersion, "1.19.5") {
		return tooOld("nginx", w.nginxVersion, "1.19.5", "older nginx has no -e and would write to the system's error log")
	}
	return nil
}

// nginxConf is the private configuration: everything nginx writes goes to
// dir, and it listens on loopback only.
func nginxConf(dir, addr string, port, workers int, asRoot bool) string {
	var b strings.Builder
	b.WriteString("daemon off;\nmaster_process on;\n")
	if workers > 0 {
		fmt.Fprintf(&b, "worker_processes %d;\n", workers)
	} else {
		b.WriteString("worker_processes auto;\n")
	}
	// As root, nginx would switch its workers to "nobody", who cannot
	// read the private 0700 scratch directory.
	if asRoot {
		b.WriteString("user root;\n")
	}
	fmt.Fprintf(&b, "pid %s;\nerror_log %s warn;\n", filepath.Join(dir, "nginx.pid"), filepath.Join(dir, "error.log"))
	b.WriteString("events { worker_connections 65536; }\n")
	b.WriteString("http {\n  access_log off;\n  default_type text/html;\n  keepalive_requests 100000000;\n")
	for _, t := range []string{"client_body", "proxy", "fastcgi", "uwsgi", "scgi"} {
		fmt.Fprintf(&b, "  %s_temp_path %s;\n", t, filepath.Join(dir, t+"_temp"))
	}
	fmt.Fprintf(&b, "  server {\n    listen %s backlog=4096;\n    root %s;\n    location / { }\n  }\n}\n", net.JoinHostPort(addr, strconv.Itoa(port)), filepath.Join(dir, "html"))
	return b.String()
}

func (w *Wrk) Setup(ctx context.Context, env *probe.Env) error {
	if err := w.parse(env.Params); err != nil {
		return err
	}
	if err := w.Available(); err != nil {
		return err
	}
	env.ToolVersion = w.wrkVersion
	env.Notes = append(env.Notes, "server: nginx "+w.nginxVersion, placementNote(w.pl))
	if err := w.prepare(env, "nginx", false); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(w.dir, "html"), 0o700); err != nil {
		return err
	}
	body := strings.Repeat("x", int(w.body))
	if err := os.WriteFile(filepath.Join(w.dir, "html", "index.html"), []byte(body), 0o644); err != nil {
		return err
	}
	workers := w.workers
	if workers == 0 && len(w.pl.server) > 0 {
		workers = len(w.pl.server)
	}
	conf := filepath.Join(w.dir, "nginx.conf")
	if err := os.WriteFile(conf, []byte(nginxConf(w.dir, w.listenAddr(), w.port, workers, os.Geteuid() == 0)), 0o600); err != nil {
		return err
	}
	argv := []string{w.nginxPath, "-p", w.dir, "-c", conf, "-e", filepath.Join(w.dir, "error.log")}
	url := w.url()
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	return w.start(ctx, env, "nginx", argv, w.pl.server, func(ctx context.Context) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK || int64(len(b)) != w.body {
			return fmt.Errorf("GET %s: %s with %d bytes, want 200 with %d", url, resp.Status, len(b), w.body)
		}
		return nil
	})
}

func (w *Wrk) url() string {
	return "http://" + net.JoinHostPort(w.serverAddr(), strconv.Itoa(w.port)) + "/index.html"
}

func (w *Wrk) Iterate(ctx context.Context, env *probe.Env) (map[string]float64, error) {
	out := map[string]float64{}
	for _, mode := range w.modes {
		argv := []string{w.wrkPath, "-t", strconv.Itoa(w.threads), "-c", strconv.Itoa(w.conns), "-d", secondsArg(w.dur) + "s", "--latency"}
		if mode == "short" {
			argv = append(argv, "-H", "Connection: close")
		}
		argv = append(argv, w.url())
		recordCommand(env, argv)
		res, err := w.srv.runClient(ctx, invocation{tool: "wrk", argv: argv, dir: w.dir, cpus: w.pl.client, timeout: toolTimeout(w.dur)})
		if err != nil {
			return nil, err
		}
		r, err := ParseWrk(string(res.stdout))
		if err != nil {
			return nil, &ToolError{Tool: "wrk", Command: argv, ExitCode: res.exitCode, Reason: err.Error(), Tail: tailOf(res)}
		}
		if r.Non2xx > 0 {
			return nil, &ToolError{Tool: "wrk", Command: argv, Reason: fmt.Sprintf("nginx answered %.0f of %.0f requests with non-2xx/3xx status (see %s)", r.Non2xx, r.Requests, filepath.Join(w.dir, "error.log"))}
		}
		// A few connect errors are normal for short connections near the
		// ephemeral-port limit; many mean the number is not nginx's.
		if r.SocketErrors > 0.01*r.Requests {
			return nil, &ToolError{Tool: "wrk", Command: argv, Reason: fmt.Sprintf("%.0f socket errors in %.0f requests (more than 1%%)", r.SocketErrors, r.Requests)}
		}
		if r.SocketErrors > 0 {
			addNote(&env.Notes, fmt.Sprintf("wrk %s: some socket errors (%.0f in %.0f requests)", mode, r.SocketErrors, r.Requests))
		}
		p99, ok := r.Percentiles[99]
		if !ok {
			return nil, &ToolError{Tool: "wrk", Command: argv, Reason: "no 99% line in the latency distribution"}
		}
		out[mode+".requests_per_sec"] = r.RequestsPerSec
		out[mode+".latency_p99"] = p99
	}
	return out, nil
}

func (w *Wrk) Teardown(*probe.Env) error { return w.teardown() }
