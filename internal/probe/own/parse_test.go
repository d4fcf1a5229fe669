package own

import (
	"bufio"
	"math"
	"reflect"
	"strings"
	"testing"
)

func TestSplitArgs(t *testing.T) {
	for in, want := range map[string][]string{
		`sleep 0.01`:                   {"sleep", "0.01"},
		`  a   'b c'  "d \"e\"" f\ g `: {"a", "b c", `d "e"`, "f g"},
		`x ''`:                         {"x", ""},
		`sysbench cpu --threads=2 run`: {"sysbench", "cpu", "--threads=2", "run"},
	} {
		got, err := SplitArgs(in)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("SplitArgs(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{``, `a | b`, `a > f`, `a; b`, `echo $HOME`, `"unterminated`, `echo "$x"`, `a \`} {
		if got, err := SplitArgs(in); err == nil {
			t.Errorf("SplitArgs(%q) = %q, want an error", in, got)
		}
	}
}

func TestExtract(t *testing.T) {
	sysbench := []byte("SQL statistics:\n    transactions:                        12345  (411.48 per sec.)\n")
	m, err := ParseMetricSpec(`tps,tx/s,higher,regex:transactions:\s+\d+\s+\(([0-9.]+) per sec`)
	if err != nil {
		t.Fatal(err)
	}
	if v, err := m.Extract(sysbench, nil); err != nil || v != 411.48 {
		t.Errorf("sysbench tps = %v, %v", v, err)
	}
	// The spec reads back as it was given (it is what the run stores).
	if back, err := ParseMetricSpec(m.String()); err != nil || back.String() != m.String() {
		t.Errorf("round trip: %q -> %q, %v", m.String(), back.String(), err)
	}
	js, _ := ParseMetricSpec("score,points,higher,json:results.1.score")
	if v, err := js.Extract([]byte("warming up\n{\"results\":[{\"score\":1},{\"score\":\"2,500.5\"}]}\n"), nil); err != nil || v != 2500.5 {
		t.Errorf("json score = %v, %v", v, err)
	}
	stderrOnly, _ := ParseMetricSpec(`t,ms,lower,regex:took ([0-9]+)ms`)
	if v, err := stderrOnly.Extract([]byte("nothing"), []byte("took 17ms")); err != nil || v != 17 {
		t.Errorf("from stderr = %v, %v", v, err)
	}
	for spec, out := range map[string]string{
		`x,u,higher,regex:nomatch ([0-9]+)`: "hello",
		`x,u,higher,regex:(hello)`:          "hello",
		`x,u,higher,json:a.b`:               `{"a":{"c":1}}`,
		`x,u,higher,json:a.5`:               `{"a":[1]}`,
		`x,u,higher,json:a`:                 `not json`,
	} {
		m, err := ParseMetricSpec(spec)
		if err != nil {
			t.Fatal(err)
		}
		_, err = m.Extract([]byte(out), nil)
		if _, ok := err.(*ErrNoMatch); !ok || !strings.Contains(err.Error(), "metric x:") {
			t.Errorf("%s on %q: %v, want an ErrNoMatch naming the metric", spec, out, err)
		}
	}
	for _, bad := range []string{"x,u,higher", "x,u,up,regex:a", "wall_time,ms,lower,regex:a", "x,u,higher,regex:(", "x,,higher,regex:a", "x y,u,higher,regex:a", "x,u,higher,xpath:a", "x,u,higher,json:a..b"} {
		if _, err := ParseMetricSpec(bad); err == nil {
			t.Errorf("ParseMetricSpec(%q) accepted", bad)
		}
	}
}

func TestReadResponse(t *testing.T) {
	for _, c := range []struct {
		in     string
		head   bool
		status int
		close  bool
		rest   string
	}{
		{"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhelloNEXT", false, 200, false, "NEXT"},
		{"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;x=y\r\nhello\r\n0\r\nT: 1\r\n\r\nNEXT", false, 200, false, "NEXT"},
		{"HTTP/1.1 503 Busy\r\nConnection: close\r\nContent-Length: 0\r\n\r\n", false, 503, true, ""},
		{"HTTP/1.0 200 OK\r\nContent-Length: 1\r\n\r\nxNEXT", false, 200, true, "NEXT"},
		{"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nNEXT", true, 200, false, "NEXT"},
		{"HTTP/1.1 200 OK\r\n\r\nto the end", false, 200, true, ""},
	} {
		br := bufio.NewReader(strings.NewReader(c.in))
		r, err := readResponse(br, c.head)
		rest, _ := br.ReadString(0)
		if err != nil || r.status != c.status || r.close != c.close || rest != c.rest {
			t.Errorf("%q: %+v %v rest %q", c.in, r, err, rest)
		}
	}
	for _, bad := range []string{"", "HTTP/1.1 2", "SSH-2.0-x\r\n\r\n", "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", "HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nshort",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"} {
		if _, err := readResponse(bufio.NewReader(strings.NewReader(bad)), false); err == nil {
			t.Errorf("%q: accepted", bad)
		}
	}
}

func TestRank(t *testing.T) {
	for _, c := range []struct {
		n    int
		q    float64
		want int
	}{{1, 0.5, 0}, {100, 0.5, 49}, {100, 0.99, 98}, {1000, 0.999, 998}, {10, 0.999, 9}} {
		if got := rank(c.n, c.q); got != c.want {
			t.Errorf("rank(%d, %v) = %d, want %d", c.n, c.q, got, c.want)
		}
	}
}

func FuzzSplitArgs(f *testing.F) {
	for _, s := range []string{`a 'b c' "d\"" e\ f`, `a | b`, `"`, `''`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		words, err := SplitArgs(s)
		if err == nil && len(words) == 0 {
			t.Fatalf("%q: no words and no error", s)
		}
	})
}

func FuzzMetricSpec(f *testing.F) {
	f.Add(`tps,tx/s,higher,regex:\(([0-9.]+) per sec`, "transactions: 5 (12.5 per sec.)")
	f.Add("score,pt,higher,json:a.0", `{"a":[3]}`)
	f.Add("x,u,lower,json:a", "[1,2")
	f.Fuzz(func(t *testing.T, spec, out string) {
		m, err := ParseMetricSpec(spec)
		if err != nil {
			return
		}
		if back, err := ParseMetricSpec(m.String()); err != nil || back.String() != m.String() {
			t.Fatalf("%q does not read back: %q %v", m.String(), back.String(), err)
		}
		v, err := m.Extract([]byte(out), []byte(out))
		if err == nil && (math.IsNaN(v) || math.IsInf(v, 0)) {
			t.Fatalf("%q on %q: %v", spec, out, v)
		}
	})
}

func FuzzReadResponse(f *testing.F) {
	f.Add("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello", false)
	f.Add("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n", false)
	f.Fuzz(func(t *testing.T, in string, head bool) {
		r, err := readResponse(bufio.NewReaderSize(strings.NewReader(in), 64), head)
		if err == nil && (r.status < 100 || r.status > 999) {
			t.Fatalf("%q: status %d accepted", in, r.status)
		}
	})
}
