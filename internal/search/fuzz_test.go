package search

import (
	"strings"
	"testing"
)

// The parsers of user input never panic, and what they accept is
// well-formed: an objective names a metric without operators, a knob has
// a name, a kind and at least one value.
func FuzzParseObjective(f *testing.F) {
	for _, s := range []string{"max:rps,p99<=5", "min:p99,rps>=20000", "bandwidth", "max:", "a,b<=", ",,", "max:x,y>=1e308,z<=-0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		o, err := ParseObjective(s)
		if err != nil {
			return
		}
		if strings.ContainsAny(o.Metric, "<>=: ") {
			t.Fatalf("%q: metric %q", s, o.Metric)
		}
		for _, c := range o.Constraints {
			if c.Metric == "" || (c.Op != "<=" && c.Op != ">=") {
				t.Fatalf("%q: constraint %+v", s, c)
			}
		}
		_ = o.String()
	})
}

func FuzzParseKnobSpec(f *testing.F) {
	for _, s := range []string{"net.core.somaxconn=4096,65535", "/sys/block/vda/queue/read_ahead_kb=128", "a=", "=1", "/sys/../x=1", "net.ipv4.tcp_rmem=4096 131072 6291456"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		k, err := ParseKnobSpec(s)
		if err != nil {
			return
		}
		if k.Name == "" || k.Target == "" || k.Kind == "" || len(k.Ladder) == 0 || strings.Contains(k.Target, "..") {
			t.Fatalf("%q: %+v", s, k)
		}
	})
}

// Decode reads stored documents: never a panic on a corrupt one.
func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"kind":"perflab-search","probe":"net.tcp","gain":{"ratio":1.5,"lo":null,"hi":2,"blocks":6,"verdict":"better"}}`))
	f.Add([]byte(`{"kind":"perflab-bisect"}`))
	f.Add([]byte(`{`))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := Decode(b)
		if err == nil && r == nil {
			t.Fatal("nil result without an error")
		}
	})
}
