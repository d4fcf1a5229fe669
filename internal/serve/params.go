package serve

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// badRequest is a selection the server refuses with 400 and this message.
type badRequest struct{ msg string }

func (e *badRequest) Error() string { return e.msg }

func badf(format string, args ...any) error { return &badRequest{fmt.Sprintf(format, args...)} }

// notFound is a selection naming something the store does not hold.
type notFound struct{ msg string }

func (e *notFound) Error() string { return e.msg }

// parseQuery is url.ParseQuery that also refuses invalid UTF-8 and control
// characters, which no host, probe or label contains.
func parseQuery(raw string) (url.Values, error) {
	q, err := url.ParseQuery(raw)
	if err != nil {
		return nil, errors.New("malformed query")
	}
	for k, vs := range q {
		for _, v := range append([]string{k}, vs...) {
			if !utf8.ValidString(v) || strings.ContainsFunc(v, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
				return nil, errors.New("query holds invalid UTF-8 or control characters")
			}
		}
	}
	return q, nil
}

// params reads a view's query: only the keys the view names are allowed,
// each at most once unless declared repeatable.
type params struct {
	q   url.Values
	err error
}

func newParams(q url.Values, allowed ...string) *params {
	p := &params{q: q}
	ok := map[string]bool{"format": true}
	for _, a := range allowed {
		ok[strings.TrimSuffix(a, "*")] = true
	}
	for k, vs := range q {
		if !ok[k] {
			p.fail(badf("unknown query parameter %q", k))
			continue
		}
		if len(vs) > 1 && !contains(allowed, k+"*") {
			p.fail(badf("query parameter %q given %d times", k, len(vs)))
		}
	}
	return p
}

func contains(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}

func (p *params) fail(err error) {
	if p.err == nil {
		p.err = err
	}
}

// str is a name-like value: a host, probe, metric, label or id.
func (p *params) str(key string) string {
	v := p.q.Get(key)
	if v != "" && !nameLike(v) {
		p.fail(badf("%s %q: names hold no spaces, quotes or angle brackets", key, v))
		return ""
	}
	return v
}

// probe reads a probe name. Your own probes are named by their command or
// URL (exec:sleep 0.02, http://…/?a=b), which hold spaces and quotes that
// other names do not; the pages escape what they print, so only control
// characters and overlong values are refused.
func (p *params) probe(key string) string {
	v := p.q.Get(key)
	if len(v) > 4096 || strings.ContainsFunc(v, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		p.fail(badf("%s: a probe name has no control characters and at most 4096 bytes", key))
		return ""
	}
	return v
}

func (p *params) strs(key string, most int) []string {
	vs := p.q[key]
	if len(vs) > most {
		p.fail(badf("at most %d %s values", most, key))
		return nil
	}
	var out []string
	for _, v := range vs {
		if v == "" {
			continue
		}
		if !nameLike(v) {
			p.fail(badf("%s %q: names hold no spaces, quotes or angle brackets", key, v))
			return nil
		}
		out = append(out, v)
	}
	return out
}

func nameLike(s string) bool {
	return !strings.ContainsAny(s, " \t\"'<>`\\")
}

// int reads a non-negative integer up to most; def when absent.
func (p *params) int(key string, def, most int) int {
	v := p.q.Get(key)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 || n > most {
		p.fail(badf("%s=%q: want a whole number from 0 to %d", key, v, most))
		return def
	}
	return n
}

// time reads a date (2006-01-02) or an RFC 3339 time.
func (p *params) time(key string) time.Time {
	v := p.q.Get(key)
	if v == "" {
		return time.Time{}
	}
	for _, layout := range []string{time.RFC3339, "2006-01-02T15:04", "2006-01-02"} {
		if t, err := time.Parse(layout, v); err == nil && t.Year() >= 1970 && t.Year() < 3000 {
			return t.UTC()
		}
	}
	p.fail(badf("%s=%q: want a date such as 2026-11-24 or a time such as 2026-11-24T10:00:00Z", key, v))
	return time.Time{}
}

// format is "" (the page), "json" or "html" (the self-contained export).
func (p *params) format() string {
	switch f := p.q.Get("format"); f {
	case "", "json", "html":
		return f
	default:
		p.fail(badf("format=%q: want json or html", f))
		return ""
	}
}
