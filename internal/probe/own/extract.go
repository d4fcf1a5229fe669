package own

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/perflab/perflab/internal/run"
)

// MetricSpec is a number a command prints, taken as a metric: by a regular
// expression (its first group, or the whole match when it has none) or by
// a JSON path into the command's standard output.
type MetricSpec struct {
	Name   string
	Unit   string
	Better run.Better
	Regex  *regexp.Regexp // or
	JSON   []string       // path: "score", "results.0.mean"
}

// reserved are the metric names every exec probe measures itself.
var reserved = map[string]bool{"wall_time": true, "user_time": true, "sys_time": true, "max_rss": true}

// String is the spec as the run records it: NAME,UNIT,BETTER,regex:RE or
// NAME,UNIT,BETTER,json:PATH (ParseMetricSpec reads it back).
func (m MetricSpec) String() string {
	src := "json:" + strings.Join(m.JSON, ".")
	if m.Regex != nil {
		src = "regex:" + m.Regex.String()
	}
	return m.Name + "," + m.Unit + "," + string(m.Better) + "," + src
}

// Metric is the run's description of it.
func (m MetricSpec) Metric() run.Metric {
	return run.Metric{Name: m.Name, Unit: m.Unit, Better: m.Better}
}

// ParseMetricSpec reads NAME,UNIT,BETTER,regex:RE or NAME,UNIT,BETTER,json:PATH.
// The pattern or path is the rest of the line, commas and all.
func ParseMetricSpec(s string) (MetricSpec, error) {
	f := strings.SplitN(strings.TrimSpace(s), ",", 4)
	if len(f) != 4 {
		return MetricSpec{}, fmt.Errorf("metric %q: want NAME,UNIT,higher|lower,regex:RE or NAME,UNIT,higher|lower,json:PATH", s)
	}
	kind, src, ok := strings.Cut(f[3], ":")
	if !ok {
		return MetricSpec{}, fmt.Errorf("metric %q: the source must be regex:RE or json:PATH", s)
	}
	return NewMetricSpec(f[0], f[1], f[2], kind, src)
}

// NewMetricSpec checks and compiles one metric; kind is "regex" or "json".
func NewMetricSpec(name, unit, better, kind, src string) (MetricSpec, error) {
	name, unit, better = strings.TrimSpace(name), strings.TrimSpace(unit), strings.TrimSpace(better)
	m := MetricSpec{Name: name, Unit: unit, Better: run.Better(better)}
	if !validName(name) {
		return m, fmt.Errorf("metric name %q: use letters, digits, '_', '.' and '-'", name)
	}
	if reserved[name] {
		return m, fmt.Errorf("metric name %q is measured by every exec probe already; pick another", name)
	}
	if unit == "" || strings.ContainsAny(unit, ",\n") {
		return m, fmt.Errorf("metric %s: unit %q must be non-empty and have no comma (e.g. tx/s, ms, score)", name, unit)
	}
	if m.Better != run.Higher && m.Better != run.Lower {
		return m, fmt.Errorf("metric %s: better is %q; say higher or lower", name, better)
	}
	if strings.Contains(src, "\n") {
		return m, fmt.Errorf("metric %s: the %s source has a line break", name, kind)
	}
	switch kind {
	case "regex":
		re, err := regexp.Compile(src)
		if err != nil {
			return m, fmt.Errorf("metric %s: bad regex %q: %v", name, src, err)
		}
		if src == "" {
			return m, fmt.Errorf("metric %s: empty regex", name)
		}
		m.Regex = re
	case "json":
		p := strings.Split(strings.TrimPrefix(strings.TrimSpace(src), "."), ".")
		for _, s := range p {
			if s == "" {
				return m, fmt.Errorf("metric %s: bad JSON path %q (e.g. score or results.0.mean)", name, src)
			}
		}
		m.JSON = p
	default:
		return m, fmt.Errorf("metric %s: source %q: say regex:RE or json:PATH", name, kind)
	}
	return m, nil
}

func validName(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-') {
			return false
		}
	}
	return true
}

// ErrNoMatch is a metric that the command's output does not contain.
type ErrNoMatch struct {
	Metric MetricSpec
	Why    string
}

func (e *ErrNoMatch) Error() string {
	src := "JSON path " + strings.Join(e.Metric.JSON, ".")
	if e.Metric.Regex != nil {
		src = "regex " + strconv.Quote(e.Metric.Regex.String())
	}
	return fmt.Sprintf("metric %s: %s %s", e.Metric.Name, src, e.Why)
}

// Extract finds the metric in the command's output: standard output first,
// then standard error (where some tools print their summary).
func (m MetricSpec) Extract(stdout, stderr []byte) (float64, error) {
	if m.Regex != nil {
		for _, out := range [][]byte{stdout, stderr} {
			sub := m.Regex.FindSubmatch(out)
			if sub == nil {
				continue
			}
			s := sub[0]
			if len(sub) > 1 {
				s = sub[1]
			}
			v, err := parseNumber(string(s))
			if err != nil {
				return 0, &ErrNoMatch{m, fmt.Sprintf("matched %q, which is not a number", truncate(string(s), 60))}
			}
			return v, nil
		}
		return 0, &ErrNoMatch{m, "matched nothing in the output"}
	}
	doc, err := jsonDoc(stdout)
	if err != nil {
		return 0, &ErrNoMatch{m, "cannot apply: " + err.Error()}
	}
	v, why := walk(doc, m.JSON)
	if why != "" {
		return 0, &ErrNoMatch{m, why}
	}
	return v, nil
}

// jsonDoc reads the whole output as JSON, else its last line that is.
func jsonDoc(out []byte) (any, error) {
	var doc any
	if err := json.Unmarshal(bytes.TrimSpace(out), &doc); err == nil {
		return doc, nil
	}
	lines := bytes.Split(bytes.TrimSpace(out), []byte("\n"))
	for i := len(lines) - 1; i >= 0; i-- {
		l := bytes.TrimSpace(lines[i])
		if len(l) > 0 && (l[0] == '{' || l[0] == '[') && json.Unmarshal(l, &doc) == nil {
			return doc, nil
		}
	}
	return nil, fmt.Errorf("the output is not JSON")
}

func walk(doc any, path []string) (float64, string) {
	cur := doc
	for i, k := range path {
		switch v := cur.(type) {
		case map[string]any:
			next, ok := v[k]
			if !ok {
				return 0, fmt.Sprintf("finds no key %q at %s", k, where(path[:i]))
			}
			cur = next
		case []any:
			n, err := strconv.Atoi(k)
			if err != nil || n < 0 || n >= len(v) {
				return 0, fmt.Sprintf("finds no element %q in the %d-element list at %s", k, len(v), where(path[:i]))
			}
			cur = v[n]
		default:
			return 0, fmt.Sprintf("finds a scalar at %s, not an object or list", where(path[:i]))
		}
	}
	switch v := cur.(type) {
	case float64:
		return v, ""
	case string:
		f, err := parseNumber(v)
		if err == nil {
			return f, ""
		}
	}
	return 0, fmt.Sprintf("finds %s, which is not a number", truncate(fmt.Sprint(cur), 60))
}

func where(p []string) string {
	if len(p) == 0 {
		return "the top level"
	}
	return strings.Join(p, ".")
}

// parseNumber reads a printed number; thousands separators are dropped.
func parseNumber(s string) (float64, error) {
	s = strings.TrimSpace(strings.NewReplacer(",", "", "_", "").Replace(s))
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, err
	}
	if v != v || v > 1e300 || v < -1e300 {
		return 0, fmt.Errorf("not finite")
	}
	return v, nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
