package own

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/perflab/perflab/internal/clierr"
	"github.com/perflab/perflab/internal/probe"
	"github.com/perflab/perflab/internal/run"
)

// HTTPDef is an HTTP probe's definition.
type HTTPDef struct {
	URL         string
	Method      string
	Headers     []string // "Name: value"; ${VAR} is expanded at run time
	Body        string
	Connections int
	Duration    time.Duration // per sample
	KeepAlive   bool
	Rate        float64 // requests/s over all connections; 0 = closed loop
	Timeout     time.Duration
	Insecure    bool // https: skip certificate verification
}

// DefaultHTTP is the definition an "http:URL" name starts from.
func DefaultHTTP(u string) HTTPDef {
	return HTTPDef{URL: u, Method: "GET", Connections: 10, Duration: 2 * time.Second, KeepAlive: true, Timeout: 5 * time.Second}
}

// Params is the definition as parameters.
func (d HTTPDef) Params() probe.Params {
	return probe.Params{
		"url": d.URL, "method": d.Method, "header": strings.Join(d.Headers, "\n"), "body": d.Body,
		"connections": strconv.Itoa(d.Connections), "duration": d.Duration.String(),
		"keepalive": strconv.FormatBool(d.KeepAlive), "rate": strconv.FormatFloat(d.Rate, 'f', -1, 64),
		"timeout": d.Timeout.String(), "insecure": strconv.FormatBool(d.Insecure),
	}
}

func httpDefFrom(p probe.Params) (HTTPDef, error) {
	d := HTTPDef{URL: p["url"], Method: strings.ToUpper(p["method"]), Body: p["body"]}
	u, err := url.Parse(d.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return d, fmt.Errorf("url %q: want http://HOST[:PORT]/PATH or https://…", d.URL)
	}
	if d.Method == "" || strings.ContainsAny(d.Method, " \r\n:") {
		return d, fmt.Errorf("method %q is not an HTTP method", p["method"])
	}
	for _, h := range strings.Split(p["header"], "\n") {
		if strings.TrimSpace(h) == "" {
			continue
		}
		k, _, ok := strings.Cut(h, ":")
		if !ok || strings.TrimSpace(k) == "" || strings.ContainsAny(k, " \t\r") {
			return d, fmt.Errorf("header %q: want 'Name: value'", h)
		}
		d.Headers = append(d.Headers, strings.TrimSpace(h))
	}
	if d.Connections, err = posInt(p, "connections", 10, 100000); err != nil {
		return d, err
	}
	if d.Duration, err = posDur(p, "duration", 2*time.Second); err != nil {
		return d, err
	}
	if d.Timeout, err = posDur(p, "timeout", 5*time.Second); err != nil {
		return d, err
	}
	if d.KeepAlive, err = boolParam(p, "keepalive", true); err != nil {
		return d, err
	}
	if d.Insecure, err = boolParam(p, "insecure", false); err != nil {
		return d, err
	}
	if r := p["rate"]; r != "" {
		d.Rate, err = strconv.ParseFloat(r, 64)
		if err != nil || d.Rate < 0 || d.Rate > 1e7 || d.Rate != d.Rate {
			return d, fmt.Errorf("rate=%q: requests per second, 0 for a closed loop", r)
		}
	}
	return d, nil
}

func posInt(p probe.Params, k string, def, hi int) (int, error) {
	n, err := probe.Params(p).Int(k, def)
	if err != nil {
		return 0, err
	}
	if n < 1 || n > hi {
		return 0, fmt.Errorf("%s=%d: between 1 and %d", k, n, hi)
	}
	return n, nil
}

func posDur(p probe.Params, k string, def time.Duration) (time.Duration, error) {
	v := p[k]
	if v == "" {
		return def, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%s=%q: not a positive duration (e.g. 2s)", k, v)
	}
	return d, nil
}

func boolParam(p probe.Params, k string, def bool) (bool, error) {
	switch p[k] {
	case "":
		return def, nil
	case "true", "yes", "on", "1":
		return true, nil
	case "false", "no", "off", "0":
		return false, nil
	}
	return false, fmt.Errorf("%s=%q: say true or false", k, p[k])
}

// secretHeader says whether a header's value must not be stored.
func secretHeader(name string) bool {
	n := strings.ToLower(strings.TrimSpace(name))
	if n == "authorization" || n == "proxy-authorization" || n == "cookie" {
		return true
	}
	for _, w := range []string{"token", "secret", "key", "auth", "session", "password"} {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}

// Redact returns the parameters as a run may store them: secret header
// values and a password in the URL replaced (a ${VAR} reference stays, it
// is no secret), so that runs show what they measured without leaking it.
func (h *HTTP) Redact(p probe.Params) probe.Params {
	out := p.Merge(nil)
	var hs []string
	for _, l := range strings.Split(p["header"], "\n") {
		k, v, ok := strings.Cut(l, ":")
		if ok && secretHeader(k) && !isVarRef(strings.TrimSpace(v)) {
			l = k + ": REDACTED"
		}
		hs = append(hs, l)
	}
	out["header"] = strings.Join(hs, "\n")
	out["url"] = redactURL(p["url"])
	return out
}

// redactURL replaces a password in a URL.
func redactURL(s string) string {
	if u, err := url.Parse(s); err == nil && u.User != nil {
		if _, has := u.User.Password(); has {
			u.User = url.UserPassword(u.User.Username(), "REDACTED")
			return u.String()
		}
	}
	return s
}

func isVarRef(v string) bool {
	return strings.HasPrefix(v, "${") && strings.HasSuffix(v, "}") || strings.HasPrefix(v, "Bearer ${") && strings.HasSuffix(v, "}")
}

// HTTP is a built-in load generator against one URL: a closed loop of
// Connections connections by default (each sends its next request when the
// previous answer is in), or an open loop at a fixed Rate, in which each
// request has an intended send time and its latency counts from then (a
// server that stalls delays the requests queued behind, and that wait is
// in the numbers, as wrk2 measures it; a closed loop would simply send
// fewer requests and report a flat latency).
type HTTP struct {
	name, doc string
	def       probe.Params
	fixed     string

	cfg     HTTPDef
	req     []byte
	addr    string
	tlsConf *tls.Config
	workers []*worker
	errs    map[string]int
	noteAt  int

	saturated bool
}

// NewHTTP returns the probe "http:URL" or a named one.
func NewHTTP(name, doc string, d HTTPDef) *HTTP {
	if doc == "" {
		doc = "loads " + d.URL
	}
	return &HTTP{name: name, doc: doc, def: d.Params(), fixed: d.URL}
}

func (h *HTTP) Name() string { return h.name }
func (h *HTTP) Doc() string {
	return h.doc + "; per sample: requests/s, latency percentiles and errors (closed loop, or open loop at rate=N with latency from the intended send time)."
}
func (h *HTTP) Defaults(bool) probe.Params { return h.def.Merge(nil) }

// Metrics checks the parameters and lists the metrics.
func (h *HTTP) Metrics(p probe.Params) ([]run.Metric, error) {
	if p["url"] != h.fixed {
		return nil, clierr.Usagef("name another probe to load another URL", "%s: the URL is the probe's and cannot be set with --param url", h.name)
	}
	if _, err := httpDefFrom(p); err != nil {
		return nil, clierr.Usagef("see docs/probes.md#http", "%s: %v", h.name, err)
	}
	ms := []run.Metric{{Name: "requests_per_sec", Unit: "req/s", Better: run.Higher}}
	for _, q := range quantiles {
		ms = append(ms, run.Metric{Name: "latency_" + q.name, Unit: "ms", Better: run.Lower, Series: "latency", X: q.q * 100, XUnit: "percentile"})
	}
	return append(ms, run.Metric{Name: "errors", Unit: "%", Better: run.Lower}), nil
}

var quantiles = []struct {
	name string
	q    float64
}{{"p50", 0.50}, {"p90", 0.90}, {"p99", 0.99}, {"p99.9", 0.999}}

// Setup resolves the address, serialises the request and checks that the
// endpoint answers at all (a wrong port is a clear error, not a run of
// connection errors).
func (h *HTTP) Setup(ctx context.Context, env *probe.Env) error {
	d, err := httpDefFrom(env.Params)
	if err != nil {
		return clierr.Usagef("see docs/probes.md#http", "%s: %v", h.name, err)
	}
	h.cfg, h.errs, h.noteAt, h.saturated = d, map[string]int{}, -1, false
	u, _ := url.Parse(d.URL)
	h.addr = u.Host
	if u.Port() == "" {
		h.addr = net.JoinHostPort(u.Hostname(), map[string]string{"http": "80", "https": "443"}[u.Scheme])
	}
	if u.Scheme == "https" {
		h.tlsConf = &tls.Config{ServerName: u.Hostname(), InsecureSkipVerify: d.Insecure} //nolint:gosec // asked for with insecure=true
	}
	h.req, err = buildRequest(d, u, os.Getenv)
	if err != nil {
		return clierr.Usagef("export the variable or write the value", "%s: %v", h.name, err)
	}
	env.Command = []string{"perflab-http", d.Method, h.Redact(env.Params)["url"]}
	w := &worker{h: h}
	if err := w.dial(ctx); err != nil {
		return clierr.Runtimef("is the server up, and the URL right?", "%s: cannot connect to %s: %v", h.name, h.addr, err)
	}
	w.conn.SetDeadline(time.Now().Add(d.Timeout))
	if _, err := w.conn.Write(h.req); err != nil {
		w.conn.Close()
		return clierr.Runtimef("is the server up, and the URL right?", "%s: %v", h.name, err)
	}
	resp, err := readResponse(w.br, d.Method == "HEAD")
	w.conn.Close()
	if err != nil {
		return clierr.Runtimef("is it an HTTP/1.1 server?", "%s: no answer from %s: %v", h.name, d.URL, err)
	}
	if resp.status >= 400 {
		env.Notes = append(env.Notes, fmt.Sprintf("%s answers %d: these responses count as errors", d.URL, resp.status))
	}
	h.workers = make([]*worker, d.Connections)
	for i := range h.workers {
		h.workers[i] = &worker{h: h, id: i}
	}
	return nil
}

// buildRequest serialises the request once.
func buildRequest(d HTTPDef, u *url.URL, getenv func(string) string) ([]byte, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: perflab\r\n", d.Method, u.RequestURI(), u.Host)
	if !d.KeepAlive {
		b.WriteString("Connection: close\r\n")
	}
	for _, hd := range d.Headers {
		var missing string
		v := os.Expand(hd, func(k string) string {
			x := getenv(k)
			if x == "" && missing == "" {
				missing = k
			}
			return x
		})
		if missing != "" {
			return nil, fmt.Errorf("header %q uses $%s, which is not set", strings.SplitN(hd, ":", 2)[0], missing)
		}
		b.WriteString(v + "\r\n")
	}
	if d.Body != "" || d.Method == "POST" || d.Method == "PUT" || d.Method == "PATCH" {
		fmt.Fprintf(&b, "Content-Length: %d\r\n", len(d.Body))
	}
	b.WriteString("\r\n" + d.Body)
	return []byte(b.String()), nil
}

// Error kinds, as the run's note counts them.
const (
	errConnect = "connect"
	errTimeout = "timeout"
	errIO      = "read/write"
	errProto   = "bad response"
	err4xx     = "HTTP 4xx"
	err5xx     = "HTTP 5xx"
)

type worker struct {
	h    *HTTP
	id   int
	conn net.Conn
	br   *bufio.Reader
	lat  []int64 // ns
	errs map[string]int
	ok   int
}

func (w *worker) dial(ctx context.Context) error {
	d := net.Dialer{Timeout: w.h.cfg.Timeout}
	c, err := d.DialContext(ctx, "tcp", w.h.addr)
	if err != nil {
		return err
	}
	if w.h.tlsConf != nil {
		tc := tls.Client(c, w.h.tlsConf)
		tc.SetDeadline(time.Now().Add(w.h.cfg.Timeout))
		if err := tc.HandshakeContext(ctx); err != nil {
			c.Close()
			return err
		}
		c = tc
	}
	w.conn = c
	if w.br == nil {
		w.br = bufio.NewReaderSize(c, 16<<10)
	} else {
		w.br.Reset(c)
	}
	return nil
}

func (w *worker) drop() {
	if w.conn != nil {
		w.conn.Close()
		w.conn = nil
	}
}

// loop sends requests until end: back to back (closed loop) or at the
// worker's share of the rate (open loop), each latency counted from the
// request's intended send time.
func (w *worker) loop(ctx context.Context, start, end time.Time) {
	cfg := w.h.cfg
	w.lat, w.ok = w.lat[:0], 0
	w.errs = map[string]int{}
	defer w.drop()
	var interval time.Duration
	next := start
	if cfg.Rate > 0 {
		interval = time.Duration(float64(cfg.Connections) / cfg.Rate * 1e9)
		next = start.Add(interval * time.Duration(w.id) / time.Duration(cfg.Connections))
	}
	for ctx.Err() == nil {
		now := time.Now()
		intended := now
		if interval > 0 {
			if !next.Before(end) {
				return
			}
			if d := next.Sub(now); d > 0 {
				time.Sleep(d)
			}
			intended, next = next, next.Add(interval)
		}
		if !time.Now().Before(end) {
			return
		}
		if w.conn == nil {
			if err := w.dial(ctx); err != nil {
				if time.Now().Before(end) {
					w.errs[errConnect]++
					time.Sleep(time.Millisecond) // a refused port must not spin
				}
				continue
			}
		}
		dl := time.Now().Add(cfg.Timeout)
		if dl.After(end) {
			dl = end // a request still open at the end is not counted
		}
		w.conn.SetDeadline(dl)
		_, err := w.conn.Write(w.h.req)
		var resp response
		if err == nil {
			resp, err = readResponse(w.br, cfg.Method == "HEAD")
		}
		done := time.Now()
		if err != nil {
			w.drop()
			if !done.Before(end) {
				return
			}
			w.errs[kindOf(err)]++
			continue
		}
		switch {
		case resp.status >= 500:
			w.errs[err5xx]++
		case resp.status >= 400:
			w.errs[err4xx]++
		default:
			w.ok++
		}
		w.lat = append(w.lat, int64(done.Sub(intended)))
		if resp.close || !cfg.KeepAlive {
			w.drop()
		}
	}
}

func kindOf(err error) string {
	var ne net.Error
	switch {
	case errors.As(err, &ne) && ne.Timeout():
		return errTimeout
	case errors.Is(err, errMalformed):
		return errProto
	}
	return errIO
}

// Iterate runs the load for one Duration.
func (h *HTTP) Iterate(ctx context.Context, env *probe.Env) (map[string]float64, error) {
	start := time.Now().Add(time.Millisecond) // all workers start together
	end := start.Add(h.cfg.Duration)
	var wg sync.WaitGroup
	for _, w := range h.workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if d := time.Until(start); d > 0 {
				time.Sleep(d)
			}
			w.loop(ctx, start, end)
		}()
	}
	wg.Wait()
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	var lat []int64
	ok, bad := 0, 0
	kinds := map[string]int{}
	for _, w := range h.workers {
		lat = append(lat, w.lat...)
		ok += w.ok
		for k, n := range w.errs {
			kinds[k] += n
			h.errs[k] += n
			bad += n
		}
	}
	h.note(env)
	if r := h.cfg.Rate; r > 0 && float64(len(lat)) < 0.9*r*h.cfg.Duration.Seconds() && !h.saturated {
		h.saturated = true
		env.Notes = append(env.Notes, fmt.Sprintf("asked for %g req/s, %0.f were answered: beyond the server's capacity; latency includes the queueing behind the intended send times (coordinated omission corrected)",
			r, float64(len(lat))/h.cfg.Duration.Seconds()))
	}
	if len(lat) == 0 {
		return nil, fmt.Errorf("no request succeeded in %s: %s", h.cfg.Duration, errSummary(kinds))
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	out := map[string]float64{
		"requests_per_sec": float64(len(lat)) / h.cfg.Duration.Seconds(),
		"errors":           100 * float64(bad) / float64(ok+bad),
	}
	for _, q := range quantiles {
		out["latency_"+q.name] = float64(lat[rank(len(lat), q.q)]) / 1e6
	}
	return out, nil
}

// rank is the index of the q-quantile in n sorted values (nearest rank).
func rank(n int, q float64) int {
	i := int(q*float64(n)+0.999999999) - 1
	return min(max(i, 0), n-1)
}

// note keeps one run note with the errors so far, by kind.
func (h *HTTP) note(env *probe.Env) {
	if len(h.errs) == 0 {
		return
	}
	s := "errors by kind over the run: " + errSummary(h.errs)
	if h.noteAt >= 0 && h.noteAt < len(env.Notes) {
		env.Notes[h.noteAt] = s
		return
	}
	h.noteAt = len(env.Notes)
	env.Notes = append(env.Notes, s)
}

func errSummary(m map[string]int) string {
	if len(m) == 0 {
		return "no errors"
	}
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	var parts []string
	for _, k := range ks {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}

// Teardown has nothing to release: the workers close their connections.
func (h *HTTP) Teardown(*probe.Env) error { return nil }
