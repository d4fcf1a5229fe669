package own

import (
	"strings"
	"testing"
)

func TestLoadNamedProbes(t *testing.T) {
	ps, err := Load("perflab.yaml", []byte(`
probes:
  api:
    http: http://127.0.0.1:8080/health
    connections: 64
    keepalive: false
    headers: {Authorization: "Bearer ${API_TOKEN}", X-Trace: "1"}
  tps:
    exec: sysbench cpu run
    timeout: 90s
    env: {LC_ALL: C}
    metrics:
      - {name: eps, unit: events/s, better: higher, regex: 'events per second:\s*([0-9.]+)'}
      - {name: score, unit: pt, better: higher, json: score}
`))
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 2 || ps[0].Name() != "api" || ps[1].Name() != "tps" {
		t.Fatalf("got %d probes", len(ps))
	}
	api := ps[0].Defaults(false)
	if api["connections"] != "64" || api["keepalive"] != "false" || !strings.Contains(api["header"], "Bearer ${API_TOKEN}") {
		t.Errorf("api params: %v", api)
	}
	ms, err := ps[1].Metrics(ps[1].Defaults(false))
	if err != nil || len(ms) != 6 || ms[4].Name != "eps" || ms[5].Unit != "pt" {
		t.Errorf("tps metrics: %v %v", ms, err)
	}
}

func TestLoadMistakesOneLineEach(t *testing.T) {
	_, err := Load("p.yaml", []byte(`probes:
  api:
    http: http://127.0.0.1/
    conections: 64
  bad:
    exec: x
    metrics:
      - {name: t, unit: ms, better: lower, regex: '(['}
  both:
    exec: x
    http: http://127.0.0.1/
  shelly:
    exec: a | b
thing: 1
`))
	if err == nil {
		t.Fatal("accepted")
	}
	lines := strings.Split(err.Error(), "\n")
	want := []string{
		`p.yaml:4: probe api: unknown key "conections" (did you mean connections?)`,
		`p.yaml:8: probe bad: metric t: bad regex`,
		`p.yaml:10: probe both: has both exec: and http:`,
		`p.yaml:13: probe shelly:`,
		`p.yaml:14: unknown top-level key "thing"`,
	}
	if len(lines) != len(want) {
		t.Fatalf("want %d lines, got:\n%s", len(want), err)
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], w) {
			t.Errorf("line %d: %q, want prefix %q", i, lines[i], w)
		}
	}
}

func TestRedactsSecrets(t *testing.T) {
	d := DefaultHTTP("http://u:pw@127.0.0.1/")
	d.Headers = []string{"Authorization: Bearer abc123", "X-Api-Key: k", "X-Env-Token: ${TOKEN}", "Accept: text/html"}
	p, err := AdHoc("http://u:pw@127.0.0.1/")
	if err != nil || strings.Contains(p.Name(), "pw") {
		t.Errorf("the probe's name (stored, exported) leaks the password: %q %v", p.Name(), err)
	}
	h := NewHTTP("http://u:pw@127.0.0.1/", "", d)
	r := h.Redact(h.Defaults(false))
	for _, leak := range []string{"abc123", "X-Api-Key: k", "pw"} {
		if strings.Contains(r["header"]+r["url"], leak) {
			t.Errorf("stored params leak %q: %v", leak, r)
		}
	}
	for _, keep := range []string{"Accept: text/html", "${TOKEN}", "Authorization: REDACTED"} {
		if !strings.Contains(r["header"], keep) {
			t.Errorf("stored params lost %q: %v", keep, r["header"])
		}
	}
}

func FuzzLoad(f *testing.F) {
	f.Add("probes:\n  a:\n    exec: /bin/true\n    metrics:\n      - {name: x, unit: u, better: higher, json: a}\n")
	f.Add("probes:\n  b:\n    http: http://h/\n    rate: 5\n    headers: {A: b}\n")
	f.Add("- 1\n")
	f.Fuzz(func(t *testing.T, s string) {
		ps, err := Load("f.yaml", []byte(s))
		if err != nil {
			if strings.TrimSpace(err.Error()) == "" {
				t.Fatal("empty error")
			}
			return
		}
		for _, p := range ps {
			if _, err := p.Metrics(p.Defaults(false)); err != nil {
				t.Fatalf("loaded probe %s does not validate: %v", p.Name(), err)
			}
		}
	})
}
