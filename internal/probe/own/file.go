package own

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/perflab/perflab/internal/clierr"
	"github.com/perflab/perflab/internal/probe"
	"gopkg.in/yaml.v3"
)

// A probes file (perflab.yaml) names a team's own probes, kept in git
// beside the service:
//
//	probes:
//	  api:
//	    http: http://127.0.0.1:8080/health
//	    connections: 64
//	  tps:
//	    exec: sysbench cpu --threads=2 --time=5 run
//	    metrics:
//	      - {name: events, unit: events/s, better: higher, regex: 'events per second:\s*([0-9.]+)'}
//
// Load reports every mistake, one line each with its line number.

var execKeys = []string{"exec", "doc", "shell", "prepare", "cleanup", "timeout", "metrics", "env", "dir"}
var httpKeys = []string{"http", "doc", "method", "headers", "body", "connections", "duration", "keepalive", "rate", "timeout", "insecure"}
var metricKeys = []string{"name", "unit", "better", "regex", "json"}

// Load parses a probes file's content; file names it in messages. Every
// mistake is one line of the returned error ("perflab.yaml:7: probe api:
// unknown key \"conections\" (did you mean connections?)").
func Load(file string, data []byte) ([]probe.Probe, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, fmt.Errorf("%s: %s", file, strings.TrimPrefix(err.Error(), "yaml: "))
	}
	l := &loader{file: file}
	if len(root.Content) == 0 {
		return nil, nil // empty file
	}
	doc := root.Content[0]
	if doc.Kind != yaml.MappingNode {
		l.errf(doc, "the top level must be a mapping with a probes: key")
		return nil, l.err()
	}
	var out []probe.Probe
	for i := 0; i+1 < len(doc.Content); i += 2 {
		k, v := doc.Content[i], doc.Content[i+1]
		if k.Value != "probes" {
			l.errf(k, "unknown top-level key %q (the file has one key, probes:)", k.Value)
			continue
		}
		if v.Kind != yaml.MappingNode {
			l.errf(v, "probes: must map names to definitions")
			continue
		}
		for j := 0; j+1 < len(v.Content); j += 2 {
			if p := l.probe(v.Content[j], v.Content[j+1]); p != nil {
				out = append(out, p)
			}
		}
	}
	if err := l.err(); err != nil {
		return nil, err
	}
	return out, nil
}

type loader struct {
	file string
	errs []string
}

func (l *loader) errf(n *yaml.Node, format string, args ...any) {
	l.errs = append(l.errs, fmt.Sprintf("%s:%d: %s", l.file, n.Line, fmt.Sprintf(format, args...)))
}

func (l *loader) err() error {
	if len(l.errs) == 0 {
		return nil
	}
	return errors.New(strings.Join(l.errs, "\n"))
}

func (l *loader) probe(kn, v *yaml.Node) probe.Probe {
	name := kn.Value
	n0 := len(l.errs)
	if !validName(name) || strings.Contains(name, ":") {
		l.errf(kn, "probe name %q: use letters, digits, '_', '.' and '-'", name)
		return nil
	}
	if v.Kind != yaml.MappingNode {
		l.errf(v, "probe %s: want a mapping with exec: or http:", name)
		return nil
	}
	fields := map[string]*yaml.Node{}
	for i := 0; i+1 < len(v.Content); i += 2 {
		fields[v.Content[i].Value] = v.Content[i+1]
		_ = i
	}
	_, isExec := fields["exec"]
	_, isHTTP := fields["http"]
	switch {
	case isExec && isHTTP:
		l.errf(v, "probe %s: has both exec: and http:; a probe is one or the other", name)
		return nil
	case !isExec && !isHTTP:
		l.errf(v, "probe %s: has neither exec: nor http:", name)
		return nil
	}
	allowed := execKeys
	if isHTTP {
		allowed = httpKeys
	}
	for i := 0; i+1 < len(v.Content); i += 2 {
		k := v.Content[i]
		if !contains(allowed, k.Value) {
			l.errf(k, "probe %s: unknown key %q%s", name, k.Value, didYouMean(k.Value, allowed))
		}
	}
	doc := l.str(fields, "doc", name, "")
	var p probe.Probe
	if isExec {
		d := ExecDef{Cmd: l.str(fields, "exec", name, ""), Prepare: l.str(fields, "prepare", name, ""),
			Cleanup: l.str(fields, "cleanup", name, ""), Dir: l.str(fields, "dir", name, ""),
			Shell: l.boolean(fields, "shell", name, false), Timeout: l.dur(fields, "timeout", name, defaultTimeout)}
		d.Env = l.envMap(fields["env"], name)
		d.Metrics = l.metrics(fields["metrics"], name)
		if _, err := execDefFrom(d.Params()); err != nil && len(l.errs) == n0 {
			l.errf(fields["exec"], "probe %s: %v", name, err)
		}
		p = NewExec(name, doc, d)
	} else {
		d := DefaultHTTP(l.str(fields, "http", name, ""))
		d.Method = l.str(fields, "method", name, d.Method)
		d.Body = l.str(fields, "body", name, "")
		d.Headers = l.headers(fields["headers"], name)
		d.Connections = l.integer(fields, "connections", name, d.Connections)
		d.Duration = l.dur(fields, "duration", name, d.Duration)
		d.Timeout = l.dur(fields, "timeout", name, d.Timeout)
		d.KeepAlive = l.boolean(fields, "keepalive", name, d.KeepAlive)
		d.Insecure = l.boolean(fields, "insecure", name, false)
		if n := fields["rate"]; n != nil {
			r, err := strconv.ParseFloat(n.Value, 64)
			if err != nil {
				l.errf(n, "probe %s: rate %q is not a number of requests per second", name, n.Value)
			}
			d.Rate = r
		}
		if _, err := httpDefFrom(d.Params()); err != nil && len(l.errs) == n0 {
			l.errf(fields["http"], "probe %s: %v", name, err)
		}
		p = NewHTTP(name, doc, d)
	}
	if len(l.errs) > n0 {
		return nil
	}
	return p
}

func (l *loader) scalar(n *yaml.Node, key, name string) (string, bool) {
	if n.Kind != yaml.ScalarNode {
		l.errf(n, "probe %s: %s must be a single value", name, key)
		return "", false
	}
	return n.Value, true
}

func (l *loader) str(f map[string]*yaml.Node, key, name, def string) string {
	n := f[key]
	if n == nil {
		return def
	}
	s, _ := l.scalar(n, key, name)
	return s
}

func (l *loader) boolean(f map[string]*yaml.Node, key, name string, def bool) bool {
	n := f[key]
	if n == nil {
		return def
	}
	var b bool
	if err := n.Decode(&b); err != nil {
		l.errf(n, "probe %s: %s %q: say true or false", name, key, n.Value)
	}
	return b
}

func (l *loader) integer(f map[string]*yaml.Node, key, name string, def int) int {
	n := f[key]
	if n == nil {
		return def
	}
	v, err := strconv.Atoi(n.Value)
	if err != nil || v < 1 {
		l.errf(n, "probe %s: %s %q: want a positive whole number", name, key, n.Value)
		return def
	}
	return v
}

func (l *loader) dur(f map[string]*yaml.Node, key, name string, def time.Duration) time.Duration {
	n := f[key]
	if n == nil {
		return def
	}
	d, err := time.ParseDuration(n.Value)
	if err != nil || d <= 0 {
		l.errf(n, "probe %s: %s %q: want a duration such as 500ms or 30s", name, key, n.Value)
		return def
	}
	return d
}

func (l *loader) envMap(n *yaml.Node, name string) []string {
	if n == nil {
		return nil
	}
	if n.Kind != yaml.MappingNode {
		l.errf(n, "probe %s: env must map names to values", name)
		return nil
	}
	var out []string
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Value == "" || strings.ContainsAny(k.Value, "=\n") || v.Kind != yaml.ScalarNode || strings.Contains(v.Value, "\n") {
			l.errf(k, "probe %s: env %q: want NAME: value on one line", name, k.Value)
			continue
		}
		out = append(out, k.Value+"="+v.Value)
	}
	return out
}

func (l *loader) headers(n *yaml.Node, name string) []string {
	if n == nil {
		return nil
	}
	if n.Kind != yaml.MappingNode {
		l.errf(n, "probe %s: headers must map names to values", name)
		return nil
	}
	var out []string
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Value == "" || strings.ContainsAny(k.Value, ": \t\r\n") || v.Kind != yaml.ScalarNode || strings.ContainsAny(v.Value, "\r\n") {
			l.errf(k, "probe %s: header %q: want Name: value on one line", name, k.Value)
			continue
		}
		out = append(out, k.Value+": "+v.Value)
	}
	sort.Strings(out)
	return out
}

func (l *loader) metrics(n *yaml.Node, name string) []MetricSpec {
	if n == nil {
		return nil
	}
	if n.Kind != yaml.SequenceNode {
		l.errf(n, "probe %s: metrics must be a list of {name, unit, better, regex or json}", name)
		return nil
	}
	var out []MetricSpec
	for _, m := range n.Content {
		if m.Kind != yaml.MappingNode {
			l.errf(m, "probe %s: a metric must be {name, unit, better, regex or json}", name)
			continue
		}
		f := map[string]string{}
		for i := 0; i+1 < len(m.Content); i += 2 {
			k, v := m.Content[i], m.Content[i+1]
			if !contains(metricKeys, k.Value) {
				l.errf(k, "probe %s: metric: unknown key %q%s", name, k.Value, didYouMean(k.Value, metricKeys))
				continue
			}
			f[k.Value] = v.Value
		}
		_, re := f["regex"]
		_, js := f["json"]
		if re == js {
			l.errf(m, "probe %s: metric %s: give exactly one of regex: and json:", name, f["name"])
			continue
		}
		kind, src := "regex", f["regex"]
		if js {
			kind, src = "json", f["json"]
		}
		spec, err := NewMetricSpec(f["name"], f["unit"], f["better"], kind, src)
		if err != nil {
			l.errf(m, "probe %s: %v", name, err)
			continue
		}
		for _, o := range out {
			if o.Name == spec.Name {
				l.errf(m, "probe %s: metric %s is defined twice", name, spec.Name)
			}
		}
		out = append(out, spec)
	}
	return out
}

func contains(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}

func didYouMean(s string, opts []string) string {
	best, bd := "", 3
	for _, o := range opts {
		if d := clierr.EditDistance(s, o); d < bd {
			best, bd = o, d
		}
	}
	if best == "" {
		return " (known: " + strings.Join(opts, ", ") + ")"
	}
	return " (did you mean " + best + "?)"
}
