package run

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
)

// randomSeries is n points with every field set to a value that
// exercises the number forms json.Marshal writes (integers, fractions,
// exponents, negative zero) and about half the optional fields present.
func randomSeries(r *rand.Rand, n int) []MonitorPoint {
	num := func() float64 {
		switch r.IntN(6) {
		case 0:
			return 0
		case 1:
			return math.Copysign(0, -1)
		case 2:
			return float64(r.IntN(1 << 20))
		case 3:
			return r.Float64() * 1e-9
		case 4:
			return r.NormFloat64() * 1e22
		default:
			return r.Float64() * 100
		}
	}
	pts := make([]MonitorPoint, n)
	for i := range pts {
		v := reflect.ValueOf(&pts[i]).Elem()
		for j := range v.NumField() {
			f := v.Field(j)
			switch f.Kind() {
			case reflect.Float64:
				f.SetFloat(num())
			case reflect.Int64:
				f.SetInt(r.Int64N(1<<40) - 1<<39)
			case reflect.Pointer:
				if r.IntN(2) == 0 {
					continue
				}
				p := reflect.New(f.Type().Elem())
				if p.Elem().Kind() == reflect.Float64 {
					p.Elem().SetFloat(num())
				} else {
					p.Elem().SetInt(r.Int64N(1 << 40))
				}
				f.Set(p)
			}
		}
	}
	return pts
}

// Every field of MonitorPoint is one the fast path sets: a field of
// another kind would send every stored series to json.Unmarshal.
func TestSeriesFieldsCoverMonitorPoint(t *testing.T) {
	if n := reflect.TypeFor[MonitorPoint]().NumField(); len(seriesFields) != n {
		t.Fatalf("the fast path sets %d of MonitorPoint's %d fields", len(seriesFields), n)
	}
}

// What json.Marshal writes decodes on the fast path to the points
// written.
func TestDecodeSeriesRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 2, 17} {
		want := randomSeries(r, n)
		b, err := json.Marshal(want)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := fastSeries(b)
		if !ok {
			t.Fatalf("%d points: not decoded on the fast path: %.200s", n, b)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%d points: decoded differently from what was written", n)
		}
	}
}

// Inputs off the fast form get json.Unmarshal's answer, error included.
func TestDecodeSeriesOffTheFastForm(t *testing.T) {
	for _, in := range []string{
		``, `null`, `[`, `[{]`, `[{}`, `[{"t":1},]`, `[{"t":1}] x`,
		`[{"t":null}]`, `[{"T":1}]`, `[{"psi_cpu_pct":null}]`, `[{"x":1}]`,
		`[{"procs_running":1.5}]`, `[{"procs_running":1e2}]`, `[{"t":1e400}]`,
		`[{"t":01}]`, `[{"t":-}]`, `[{"t":1.}]`, `[{"t":.5}]`, `[{"t":+1}]`,
		`[{"t":"1"}]`, `[{"t\u0020":1}]`, `[{"t":1,"t":2}]`, ` [ { "t" : 1 } ] `,
		`[{"page_cache_kib":9223372036854775808}]`, `[{"t":0x10}]`, `[{"t":Inf}]`,
	} {
		want, wantErr := []MonitorPoint(nil), error(nil)
		wantErr = json.Unmarshal([]byte(in), &want)
		got, err := DecodeSeries([]byte(in))
		if (err == nil) != (wantErr == nil) || (err != nil && err.Error() != wantErr.Error()) {
			t.Errorf("%q: error %v, json.Unmarshal's %v", in, err, wantErr)
			continue
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%q: %+v, json.Unmarshal's %+v", in, got, want)
		}
	}
}

// FuzzDecodeSeries holds DecodeSeries to json.Unmarshal on any input.
func FuzzDecodeSeries(f *testing.F) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{0, 1, 3} {
		b, _ := json.Marshal(randomSeries(r, n))
		f.Add(b)
	}
	f.Add([]byte(`[{"t":1,"procs_running":2,"psi_io_pct":0.5}]`))
	f.Add([]byte(`[{"t":1e400}]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var want []MonitorPoint
		wantErr := json.Unmarshal(b, &want)
		got, err := DecodeSeries(b)
		if (err == nil) != (wantErr == nil) {
			t.Fatalf("%q: error %v, json.Unmarshal's %v", b, err, wantErr)
		}
		if err == nil && !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: %+v, json.Unmarshal's %+v", b, got, want)
		}
		if _, ok := fastSeries(b); ok && wantErr != nil {
			t.Fatalf("%q: the fast path accepted what json.Unmarshal rejects: %v", b, wantErr)
		}
	})
}

func BenchmarkDecodeSeries(b *testing.B) {
	r := rand.New(rand.NewPCG(5, 6))
	in, _ := json.Marshal(randomSeries(r, 8))
	for _, c := range []struct {
		name string
		fn   func([]byte) error
	}{
		{"fast", func(b []byte) error { _, err := DecodeSeries(b); return err }},
		{"encoding-json", func(b []byte) error { var p []MonitorPoint; return json.Unmarshal(b, &p) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(in)))
			for b.Loop() {
				if err := c.fn(in); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
